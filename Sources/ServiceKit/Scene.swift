import ServiceABI

/// One UI session of the app (UIKit's `UIScene`): a phone window, a CarPlay screen, an
/// external display. Scene events carry it (a copy of the host's `sh_scene`).
///
/// ```swift
/// func sceneDidBecomeActive(_ scene: Scene) {
///     guard scene.role == .car else { return }
///     host.log(.info, "car screen active (configuration \(scene.configurationName))")
/// }
/// ```
public struct Scene: Sendable, Hashable, CustomStringConvertible {
    /// The scene's name, unique among connected scenes: "main", "car".
    public var name: String
    /// Its role. ``SceneRole/unspecified`` only in `configuration(forConnecting:options:)`,
    /// when the connection left the role to the configuration.
    public var role: SceneRole
    /// Its state while the event is handled: will-events see the old state, did-events the
    /// new one (in `sceneDidEnterBackground(_:)` it is ``SceneState/background``).
    public var state: SceneState
    /// The configuration it connected with: the name a service chose in
    /// `configuration(forConnecting:options:)`, or "default"; "" while it is being chosen.
    public var configurationName: String
    /// The configuration's settings, or `nil`.
    public var settings: JSONValue?
    /// The connection's number, unique for the process lifetime: a scene that disconnects
    /// and connects again under its name gets a new one.
    public var connectionID: UInt64

    /// Creates a scene; for tests and previews.
    public init(
        name: String, role: SceneRole, state: SceneState = .foregroundActive,
        configurationName: String = "default", settings: JSONValue? = nil, connectionID: UInt64 = 0
    ) {
        self.name = name
        self.role = role
        self.state = state
        self.configurationName = configurationName
        self.settings = settings
        self.connectionID = connectionID
    }

    /// Copies the host's `sh_scene`.
    init(_ raw: UnsafePointer<sh_scene>) {
        let scene = raw.copyWithinDeclaredSize()
        let size = Int(scene.size)
        func covers<T>(_ member: KeyPath<sh_scene, T>) -> Bool {
            size >= MemoryLayout<sh_scene>.offset(of: member)! + MemoryLayout<T>.size
        }
        self.init(
            name: covers(\.name) ? scene.name.map { String(cString: $0) } ?? "" : "",
            role: SceneRole(rawValue: covers(\.role) ? scene.role.map { String(cString: $0) } ?? "" : ""),
            state: covers(\.state) ? SceneState(host: scene.state) : .unattached,
            configurationName: covers(\.configuration) ? scene.configuration.map { String(cString: $0) } ?? "" : "",
            connectionID: covers(\.id) ? scene.id : 0)
        // The host parsed the settings once for every service: read its tape, not the text.
        if covers(\.settings), let tape = scene.settings {
            settings = JSONValue(tape: tape)
        } else if covers(\.settings_len), let json = scene.settings_json {
            settings = try? JSONValue(parsing: UnsafeRawBufferPointer(start: json, count: scene.settings_len))
        }
    }

    /// The name.
    public var description: String { name }
}

/// What a scene is for (UIKit's `UISceneSession.Role`), mirroring `SH_SCENE_ROLE_*`.
///
/// A string, so a newer host can add roles: treat a role you do not know as a scene that
/// is not yours.
public struct SceneRole: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// "main", "car", "external", …
    public let rawValue: String

    /// Creates a role from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a role from its name.
    public init(stringLiteral value: String) { rawValue = value }

    /// The app's own window (`SH_SCENE_ROLE_MAIN`).
    public static let main: SceneRole = "main"
    /// A CarPlay screen (`SH_SCENE_ROLE_CAR`).
    public static let car: SceneRole = "car"
    /// An external display (`SH_SCENE_ROLE_EXTERNAL`).
    public static let external: SceneRole = "external"
    /// No role yet: the connection left it to the configuration.
    public static let unspecified: SceneRole = ""
    /// The roles this SDK knows (what `sceneRoles` in servicehost.json accepts).
    public static let known: [SceneRole] = [.main, .car, .external]

    /// The name.
    public var description: String { rawValue }
}

extension SceneState {
    /// The state for a raw `sh_scene_state`; a value this SDK does not know reads as
    /// `.foregroundInactive`.
    init(host rawValue: Int32) {
        self = SceneState(rawValue: rawValue) ?? .foregroundInactive
    }
}

/// What a scene was connected with (UIKit's `UIScene.ConnectionOptions`), a copy of
/// `sh_scene_connection_options`.
///
/// The host delivers each URL context and user activity once more after the scene became
/// active, through `scene(_:open:)` and `scene(_:continue:)` with `isFromConnection` set:
/// act on them there, so a cold-start deep link is handled exactly once.
public struct SceneConnectionOptions: Sendable, Equatable {
    /// The URLs to open (UIKit's `urlContexts`), in order.
    public var urlContexts: [OpenURL]
    /// The user activities to continue, in order.
    public var userActivities: [UserActivity]
    /// The scene connected at launch with the launch URL or activity (`SH_FROM_LAUNCH`).
    public var isFromLaunch: Bool
    /// The state restoration activity a service saved when a scene of this name last went
    /// to the background or disconnected (``SceneService/stateRestorationActivity(for:)``),
    /// as `UISceneSession.stateRestorationActivity`; present in this one connection only.
    public var restorationActivity: UserActivity?

    /// Creates connection options; for tests and previews.
    public init(
        urlContexts: [OpenURL] = [], userActivities: [UserActivity] = [], isFromLaunch: Bool = false,
        restorationActivity: UserActivity? = nil
    ) {
        self.urlContexts = urlContexts
        self.userActivities = userActivities
        self.isFromLaunch = isFromLaunch
        self.restorationActivity = restorationActivity
    }

    /// Copies the host's options (userInfo read lazily; see ``endEvent()``).
    init(_ raw: UnsafePointer<sh_scene_connection_options>?) {
        self.init()
        guard let raw else { return }
        let options = raw.copyWithinDeclaredSize()
        let size = Int(options.size)
        func covers<T>(_ member: KeyPath<sh_scene_connection_options, T>) -> Bool {
            size >= MemoryLayout<sh_scene_connection_options>.offset(of: member)! + MemoryLayout<T>.size
        }
        isFromLaunch = covers(\.flags) && options.flags & UInt32(SH_FROM_LAUNCH) != 0
        if covers(\.url_context_count), let urls = options.url_contexts {
            urlContexts = UnsafeBufferPointer(start: urls, count: options.url_context_count).compactMap {
                $0.map(OpenURL.init)
            }
        }
        if covers(\.user_activity_count), let activities = options.user_activities {
            userActivities = UnsafeBufferPointer(start: activities, count: options.user_activity_count)
                .compactMap { $0.map(UserActivity.init) }
        }
        if covers(\.restoration_activity), let restoration = options.restoration_activity {
            restorationActivity = UserActivity(restoration)
        }
    }

    /// Called when the event returns: copies the userInfo the service kept out of the
    /// host's memory.
    mutating func endEvent() {
        for index in userActivities.indices { userActivities[index].endEvent() }
        restorationActivity?.endEvent()
    }
}

/// A service's answer to `configuration(forConnecting:options:)` (UIKit's
/// `UISceneConfiguration`): the configuration's name, the role, settings.
public struct SceneConfiguration: Sendable, Equatable {
    /// The configuration's name, at most 63 bytes: "car".
    public var name: String
    /// The scene's role, or `nil` to keep the one the connection asked for ("main" when
    /// it asked for none). Another role than the one asked for makes the host refuse the
    /// answer.
    public var role: SceneRole?
    /// Settings every service sees in ``Scene/settings``: a JSON object, or `nil`.
    public var settings: JSONValue?

    /// A configuration named `name`.
    public init(name: String, role: SceneRole? = nil, settings: JSONValue? = nil) {
        self.name = name
        self.role = role
        self.settings = settings
    }

    /// Writes the answer into the host's `sh_scene_configuration`; `SH_OK`, or why not.
    func write(to raw: UnsafeMutablePointer<sh_scene_configuration>) -> Result<Void, ConfigurationError> {
        let size = Int(raw.pointee.size)
        guard size >= MemoryLayout<sh_scene_configuration>.offset(of: \.settings_len)! + MemoryLayout<Int>.size else {
            return .failure(ConfigurationError("the host's sh_scene_configuration is too small (\(size) bytes)"))
        }
        guard Self.copy(name, into: &raw.pointee.name) else {
            return .failure(
                ConfigurationError("the name \"\(name)\" is over \(SH_SCENE_CONFIGURATION_NAME_MAX - 1) bytes"))
        }
        guard Self.copy(role?.rawValue ?? "", into: &raw.pointee.role) else {
            return .failure(
                ConfigurationError("the role \"\(role?.rawValue ?? "")\" is over \(SH_SCENE_ROLE_MAX - 1) bytes"))
        }
        raw.pointee.settings_len = 0
        guard let settings else { return .success(()) }
        guard case .object = settings else { return .failure(ConfigurationError("the settings are not a JSON object")) }
        let text = Array(settings.serialized.utf8)
        guard let buffer = raw.pointee.settings, text.count <= raw.pointee.settings_capacity else {
            return .failure(
                ConfigurationError(
                    "the settings are \(text.count) bytes; the host takes at most \(raw.pointee.settings_capacity)"))
        }
        text.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        raw.pointee.settings_len = text.count
        return .success(())
    }

    /// Copies `text` NUL-terminated into a fixed C char array; false when it does not fit
    /// or holds a NUL.
    private static func copy<T>(_ text: String, into field: inout T) -> Bool {
        let bytes = Array(text.utf8)
        return withUnsafeMutableBytes(of: &field) { buffer in
            guard bytes.count < buffer.count, !bytes.contains(0) else { return false }
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
            return true
        }
    }

    /// Why an answer cannot be given to the host.
    struct ConfigurationError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
