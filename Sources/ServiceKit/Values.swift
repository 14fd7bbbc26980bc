import ServiceABI

extension AppState {
    /// The state for a raw `sh_app_state`; a value this SDK does not know
    /// (from a newer host) reads as `.inactive`.
    init(host rawValue: Int32) {
        self = AppState(rawValue: rawValue) ?? .inactive
    }
}

/// What `willFinishLaunching` and `didFinishLaunching` receive, like UIKit's
/// launch options (a copy of `sh_launch_options`).
public struct LaunchOptions: Sendable, Equatable {
    /// This is the first launch of the host with its state directory.
    public var isFirstHostLaunch: Bool
    /// This is the first launch of this service (its id was never seen).
    public var isFirstServiceLaunch: Bool
    /// The service was restarted (after a crash or a reload), not launched with the host.
    public var isRestart: Bool
    /// The service is lazy and was opened by its first event, not launched with the host
    /// (`SH_LAUNCH_LAZY`): that event comes right after the launch, and the app may already
    /// be active.
    public var isLazyStart: Bool
    /// The service's settings object, or `nil` when it has none (or the host
    /// sent settings that are not valid JSON; see ``settingsError``).
    public var settings: JSONValue?
    /// Why the host's settings text could not be parsed, or `nil`.
    public var settingsError: JSONParseError?
    /// The push notification that launched the app (UIKit's `.remoteNotification`), or
    /// `nil`. The host also delivers it once more after the app becomes active, as a
    /// notification response with ``PushNotification/isFromLaunch`` set: act on it there.
    public var notification: PushNotification?
    /// The URL that launched the app (UIKit's `.url`), or `nil`. Also delivered once
    /// more after the app becomes active, through `open(_:)` with
    /// ``OpenURL/isFromLaunch`` set.
    public var url: OpenURL?
    /// The user activity that launched the app (UIKit's `.userActivityDictionary`), or
    /// `nil`. Also delivered once more after the app becomes active, through
    /// `continueUserActivity(_:)` with ``UserActivity/isFromLaunch`` set.
    public var userActivity: UserActivity?
    /// The state the instance this one replaces handed over from `willReload()`
    /// (``StateHandingOver``), or `nil`: a first launch, a crash, or nothing handed over.
    public var restoredState: RestoredState?

    /// Creates launch options; for tests and previews.
    public init(
        isFirstHostLaunch: Bool = false, isFirstServiceLaunch: Bool = false,
        isRestart: Bool = false, isLazyStart: Bool = false, settings: JSONValue? = nil,
        notification: PushNotification? = nil, url: OpenURL? = nil, userActivity: UserActivity? = nil,
        restoredState: RestoredState? = nil
    ) {
        self.restoredState = restoredState
        self.isFirstHostLaunch = isFirstHostLaunch
        self.isFirstServiceLaunch = isFirstServiceLaunch
        self.isRestart = isRestart
        self.isLazyStart = isLazyStart
        self.settings = settings
        self.settingsError = nil
        self.notification = notification
        self.url = url
        self.userActivity = userActivity
    }

    /// Copies the host's `sh_launch_options` (valid only during the event).
    init(_ raw: UnsafePointer<sh_launch_options>?) {
        self.init()
        guard let raw else { return }
        let size = Int(raw.pointee.size)
        if size >= MemoryLayout<sh_launch_options>.offset(of: \.flags)! + 4 {
            let flags = raw.pointee.flags
            isFirstHostLaunch = flags & UInt32(SH_LAUNCH_FIRST_HOST_LAUNCH) != 0
            isFirstServiceLaunch = flags & UInt32(SH_LAUNCH_FIRST_SERVICE_LAUNCH) != 0
            isRestart = flags & UInt32(SH_LAUNCH_RESTART) != 0
            isLazyStart = flags & UInt32(SH_LAUNCH_LAZY) != 0
        }
        if size >= MemoryLayout<sh_launch_options>.offset(of: \.settings_len)! + MemoryLayout<Int>.size,
            let json = raw.pointee.settings_json
        {
            do {
                settings = try JSONValue(
                    parsing: UnsafeRawBufferPointer(start: json, count: raw.pointee.settings_len))
            } catch {
                settingsError = error
            }
        }
        // Members added with issue 3: read each only if the host's struct has it.
        func covers<T>(_ member: KeyPath<sh_launch_options, T>) -> Bool {
            size >= MemoryLayout<sh_launch_options>.offset(of: member)! + MemoryLayout<T>.size
        }
        if covers(\.notification), let push = raw.pointee.notification { notification = PushNotification(push) }
        if covers(\.url), let url = raw.pointee.url { self.url = OpenURL(url) }
        if covers(\.activity), let activity = raw.pointee.activity { userActivity = UserActivity(activity) }
        // Version 2 (issue 42): the state a reload hands over.
        if covers(\.restored_from_version), let bytes = raw.pointee.restored_state {
            restoredState = RestoredState(
                bytes: Array(UnsafeBufferPointer(start: bytes, count: raw.pointee.restored_state_len)),
                serviceID: raw.pointee.restored_from_id.map { String(cString: $0) } ?? "",
                version: raw.pointee.restored_from_version.map { String(cString: $0) } ?? "")
        }
    }

    /// Called when the launch event returns: copies what the service kept out of the
    /// host's memory.
    mutating func endEvent() {
        notification?.endEvent()
        userActivity?.endEvent()
    }
}

/// A service-to-service notification (a copy of `sh_notification`).
public struct ServiceNotification: Sendable, Equatable {
    /// The notification's name.
    public var name: String
    /// The id of the service that posted it; "host" when the host (or a
    /// control client) posted it.
    public var sender: String
    /// The payload as JSON text, exactly as posted, or `nil` when there is none.
    public var json: String?
    /// The payload parsed, or `nil` when there is none or it is not valid JSON.
    public var payload: JSONValue?

    /// Creates a notification; for tests and previews.
    public init(name: String, sender: String, payload: JSONValue? = nil) {
        self.name = name
        self.sender = sender
        self.json = payload?.serialized
        self.payload = payload
    }

    /// Copies the host's `sh_notification` (valid only during the event).
    init(_ raw: UnsafePointer<sh_notification>?) {
        self.init(name: "", sender: "")
        guard let raw else { return }
        // Only the members within `size` are read (the rest are zero): an older host's struct
        // ends before the later ones.
        let notification = raw.copyWithinDeclaredSize()
        let size = Int(notification.size)
        if let name = notification.name { self.name = String(cString: name) }
        if let sender = notification.sender { self.sender = String(cString: sender) }
        if let json = notification.json {
            let bytes = UnsafeRawBufferPointer(start: json, count: notification.json_len)
            self.json = String(decoding: bytes, as: UTF8.self)
            // Version 2: the host's tape, parsed once for every receiver; a version 1 host's text is parsed here.
            if let tape = notification.parsed {
                self.payload = JSONValue(tape: tape)
            } else if size < MemoryLayout<sh_notification>.size {
                self.payload = try? JSONValue(parsing: bytes)
            }
        }
    }
}
