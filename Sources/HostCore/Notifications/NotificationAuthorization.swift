import ServiceJSON
import Synchronization

/// How the host answers a service's `requestAuthorization` while the status is not
/// determined (`--notification-authorization`): as a user at the prompt would.
public enum AuthorizationPolicy: String, CaseIterable, Sendable {
    /// Leave it not determined until the user decides (`host ctl authorization STATUS`).
    case prompt
    /// Authorize at once, with the options asked for (the default).
    case grant
    /// Deny at once.
    case deny
}

/// The app's notification authorization (seeds 000 and 002: "pushEnable", the permission
/// states): its status and the presentation options it allows, kept in the state directory
/// as `notifications/authorization.json`.
///
/// Read from any thread (the host tables' `notification_settings`); changed by a service's
/// request (any thread, answered by the policy) or by the user (`host ctl authorization`,
/// main thread). Saving and announcing a change is the main thread's (NotificationBus).
final class NotificationAuthorization: Sendable {
    /// A status and what it allows.
    struct Settings: Sendable, Equatable {
        var status: AuthorizationStatus
        /// The options a push may be presented with.
        var allowed: PresentationOptions

        /// The settings a status has when the user set it: everything it allows.
        init(_ status: AuthorizationStatus, allowed: PresentationOptions? = nil) {
            self.status = status
            self.allowed = allowed ?? status.allowedPresentation
        }

        /// `{"status":"authorized","allowed":["banner","list","sound","badge"]}`.
        var json: JSONValue {
            .object(["status": .string(status.name), "allowed": .array(allowed.names.map(JSONValue.string))])
        }

        /// Reads ``json``; nil when it is not such an object.
        init?(json: JSONValue) {
            guard let name = json["status"]?.stringValue, let status = AuthorizationStatus(name: name),
                let names = json["allowed"]?.arrayValue?.map(\.stringValue)
            else { return nil }
            var allowed: PresentationOptions = []
            for name in names {
                guard let option = PresentationOptions.named.first(where: { $0.name == name }) else { return nil }
                allowed.insert(option.option)
            }
            self.init(status, allowed: allowed)
        }
    }

    /// The answer to requests while the status is not determined.
    let policy: AuthorizationPolicy
    private let settings: Locked<Settings>
    private let stateDirectory: StateDirectory?
    static let folder = "notifications"
    static let file = "authorization.json"

    /// Reads the saved status from `stateDirectory` (not determined when there is none). A
    /// file that cannot be read or parsed is reported through `problem` and counts as not
    /// determined; it is replaced at the next change. `problem` gets the message, the file's
    /// path and what is wrong with it.
    init(
        policy: AuthorizationPolicy, stateDirectory: StateDirectory?,
        problem: (_ message: String, _ path: String, _ reason: String) -> Void
    ) {
        self.policy = policy
        self.stateDirectory = stateDirectory
        var loaded = Settings(.notDetermined)
        if let stateDirectory {
            let path = Self.path(in: stateDirectory)
            do {
                if let bytes = try stateDirectory.subdirectory(Self.folder).read(Self.file, limit: 4096) {
                    guard let value = try? JSONValue(parsing: bytes), let saved = Settings(json: value) else {
                        throw StorageError(path: path, code: .corrupt(detail: "not a saved authorization"))
                    }
                    loaded = saved
                }
            } catch {
                problem(
                    "cannot read the notification authorization (\(error)); it counts as notDetermined",
                    path, (error as? StorageError)?.reason(about: path) ?? "\(error)")
            }
        }
        settings = Locked(loaded)
    }

    /// The status and what it allows, now.
    var current: Settings { settings.withLock { $0 } }

    /// A service asks for authorization with `options`: while the status is not determined
    /// the policy answers (a provisional request is granted at once, as on iOS); once decided
    /// it never changes here. Returns the status after the answer and whether it changed.
    func request(_ options: AuthorizationOptions) -> (status: AuthorizationStatus, changed: Bool) {
        settings.withLock { settings in
            guard settings.status == .notDetermined else { return (settings.status, false) }
            let answer: Settings? =
                switch policy {
                case _ where options.contains(.provisional): Settings(.provisional)
                case .grant: Settings(.authorized, allowed: options.presentation)
                case .deny: Settings(.denied)
                case .prompt: nil
                }
            guard let answer else { return (settings.status, false) }
            settings = answer
            return (answer.status, true)
        }
    }

    /// The user sets the status (`host ctl authorization STATUS`); returns whether it changed.
    func set(_ status: AuthorizationStatus) -> Bool {
        settings.withLock { settings in
            let next = Settings(status)
            defer { settings = next }
            return settings != next
        }
    }

    /// The file the settings are saved in; nil without a state directory.
    var path: String? { stateDirectory.map(Self.path(in:)) }

    private static func path(in stateDirectory: StateDirectory) -> String { stateDirectory.path + "/\(folder)/\(file)" }

    /// Writes the current settings to the state directory, atomically.
    func save() throws(StorageError) {
        guard let stateDirectory else { return }
        let bytes = Array((current.json.serialized + "\n").utf8)
        let folder = try stateDirectory.subdirectory(Self.folder)
        let written = bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemError) in try folder.replace(Self.file, with: buffer) }
        }
        do { try written.get() } catch { throw .system(error) }
    }
}
