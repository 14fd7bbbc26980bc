import ServiceABI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Why a call to the host failed.
public enum HostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The service is not attached to a host yet (the call came before
    /// `willFinishLaunching`, e.g. from `init`).
    case notAttached
    /// The host does not implement this call (`SH_UNSUPPORTED`), e.g. it has no store.
    case unsupported
    /// An argument was invalid (`SH_INVALID`): an empty name, a key with a NUL byte.
    case invalid
    /// The host answered another failure code.
    case failed(code: Int32)

    /// Maps an `SH_*` failure code.
    init(code: Int32) {
        switch Int(code) {
        case SH_UNSUPPORTED: self = .unsupported
        case SH_INVALID: self = .invalid
        default: self = .failed(code: code)
        }
    }

    /// "not attached", "unsupported", "invalid" or "failed (code N)".
    public var description: String {
        switch self {
        case .notAttached: "not attached"
        case .unsupported: "unsupported"
        case .invalid: "invalid"
        case .failed(let code): "failed (code \(code))"
        }
    }
}

/// The host as one service sees it: logging, notifications and subscriptions, the app
/// state, remote-notification registration, a persistent key-value store and host
/// extensions.
///
/// Reach it as `host` from any ``ApplicationService``. It is attached before
/// `willFinishLaunching` and stays valid for the process lifetime; before
/// that (in `init`), ``log(_:_:)`` writes to standard error and the other
/// calls throw ``HostError/notAttached`` or answer a neutral value.
///
/// Threads: ``log(_:_:)``, ``post(_:payload:)``, ``subscribe(_:)``,
/// ``unsubscribe(_:)``, ``registerForRemoteNotifications()``, ``appState`` and
/// ``extension(id:)`` may be called from any thread; ``store`` only on the
/// thread that delivers events (the host's main thread).
public struct HostContext: @unchecked Sendable {
    // @unchecked: the sh_host table is immutable and host-owned for the process
    // lifetime; the members used from other threads are [thread-safe] in host.h.
    let raw: UnsafePointer<sh_host>?
    /// The service id, for the stderr fallback before attach.
    let serviceID: String

    init(raw: UnsafePointer<sh_host>?, serviceID: String) {
        self.raw = raw
        self.serviceID = serviceID
    }

    /// Whether the service is attached to a host.
    public var isAttached: Bool { raw != nil }

    /// The host's name and version, e.g. "servicehost 0.1.0", or "" before attach.
    public var hostVersion: String {
        guard let version = raw?.pointee.host_version else { return "" }
        return String(cString: version)
    }

    /// Logs one line; the host prefixes the level and the service id.
    public func log(_ level: LogLevel, _ message: String) {
        guard let raw, let log = raw.pointee.log else {
            writeStandardError("[\(level)] \(serviceID): \(message)\n")
            return
        }
        log(raw, level.rawValue, message)
    }

    /// Posts a notification to the services that handle notifications.
    ///
    /// Delivery happens later on the host's main thread, after the current
    /// event; the poster does not receive its own notification.
    /// - Throws: ``HostError/invalid`` for an empty name, or another ``HostError``.
    public func post(_ name: String, payload: JSONValue? = nil) throws(HostError) {
        guard let raw, let post = raw.pointee.post else { throw .notAttached }
        guard !name.utf8.contains(0) else { throw .invalid }
        let code: Int32
        if var json = payload?.serialized {
            code = json.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    post(raw, name, chars.baseAddress, chars.count)
                }
            }
        } else {
            code = post(raw, name, nil, 0)
        }
        if code != SH_OK { throw HostError(code: code) }
    }

    /// The app's current state (`.notRunning` before attach).
    public var appState: AppState {
        guard let raw, let appState = raw.pointee.app_state else { return .notRunning }
        return AppState(host: appState(raw))
    }

    /// A host extension by its versioned id ("vendor.name/1"), or `nil` when
    /// the host does not offer it. The pointer is valid for the process lifetime.
    public func `extension`(id: String) -> UnsafeRawPointer? {
        guard let raw, let getExtension = raw.pointee.get_extension else { return nil }
        return getExtension(raw, id)
    }

    /// Subscribes this service to notifications posted under `name` (`"*"`: every
    /// name), in addition to the names its manifest lists under `subscribes`. Takes
    /// effect for notifications delivered after the call. Any thread.
    ///
    /// The service receives them through `didReceive(_:)` only if its manifest lists
    /// the `notification` event.
    /// - Throws: ``HostError/invalid`` for an empty name, ``HostError/unsupported``
    ///   when the host predates subscriptions, or another ``HostError``.
    public func subscribe(_ name: String) throws(HostError) {
        let raw = try attached()
        guard has(\.subscribe), let subscribe = raw.pointee.subscribe else { throw .unsupported }
        guard !name.isEmpty, !name.utf8.contains(0) else { throw .invalid }
        let code = subscribe(raw, name)
        if code != SH_OK { throw HostError(code: code) }
    }

    /// Undoes ``subscribe(_:)``; returns `false` when the service was not subscribed to
    /// `name` at run time (names from the manifest stay). Any thread.
    /// - Throws: ``HostError/unsupported`` when the host predates subscriptions, or
    ///   another ``HostError``.
    @discardableResult
    public func unsubscribe(_ name: String) throws(HostError) -> Bool {
        let raw = try attached()
        guard has(\.unsubscribe), let unsubscribe = raw.pointee.unsubscribe else { throw .unsupported }
        guard !name.utf8.contains(0) else { throw .invalid }
        let code = unsubscribe(raw, name)
        switch Int(code) {
        case SH_OK: return true
        case SH_NOT_FOUND: return false
        default: throw HostError(code: code)
        }
    }

    /// Asks for the device token, as UIApplication's `registerForRemoteNotifications()`:
    /// when the host knows a token it delivers
    /// `didRegisterForRemoteNotifications(deviceToken:)` to this service after the
    /// current event; otherwise the service hears when one arrives. Any thread.
    /// - Throws: ``HostError/unsupported`` when the host predates it, or another ``HostError``.
    public func registerForRemoteNotifications() throws(HostError) {
        let raw = try attached()
        guard has(\.register_for_remote_notifications),
            let register = raw.pointee.register_for_remote_notifications
        else { throw .unsupported }
        let code = register(raw)
        if code != SH_OK { throw HostError(code: code) }
    }

    /// The notification authorization now, as `getNotificationSettings` (seed 002's
    /// permission states). Any thread. Not determined before attach or from a host that
    /// predates it.
    public var notificationSettings: NotificationSettings {
        guard let raw, has(\.notification_settings), let read = raw.pointee.notification_settings else {
            return NotificationSettings(status: .notDetermined, allowed: [])
        }
        var allowed: UInt32 = 0
        let status = read(raw, &allowed)
        return NotificationSettings(
            status: AuthorizationStatus(rawValue: status) ?? .notDetermined,
            allowed: PresentationOptions(rawValue: allowed))
    }

    /// Asks for notification authorization, as `requestAuthorization(options:)`. The host
    /// answers with its policy while the status is not determined (it may stay so until the
    /// user decides); a decided status never changes here. Returns the status after the
    /// answer; a change also arrives as `didChangeNotificationAuthorization(_:)`. Any thread.
    /// - Throws: ``HostError/unsupported`` when the host predates it.
    @discardableResult
    public func requestAuthorization(_ options: AuthorizationOptions) throws(HostError) -> AuthorizationStatus {
        let raw = try attached()
        guard has(\.request_authorization), let request = raw.pointee.request_authorization else { throw .unsupported }
        let code = request(raw, options.rawValue)
        guard let status = AuthorizationStatus(rawValue: code) else { throw HostError(code: code) }
        return status
    }

    /// Saves `activity` as the state restoration activity of the connected scene
    /// `sceneID` (``Scene/connectionID``); the SDK calls it with what
    /// ``SceneService/stateRestorationActivity(for:)`` returns. Main thread.
    /// - Throws: ``HostError/invalid`` for an activity over 64 KiB (the host logs why),
    ///   ``HostError/unsupported`` without a state directory, or another ``HostError``.
    public func setRestorationActivity(_ activity: UserActivity, forScene sceneID: UInt64) throws(HostError) {
        let raw = try attached()
        guard has(\.set_scene_restoration), let save = raw.pointee.set_scene_restoration else { throw .unsupported }
        var object: [String: JSONValue] = ["type": .string(activity.type)]
        if let url = activity.webpageURL { object["url"] = .string(url) }
        if let userInfo = activity.userInfo { object["userInfo"] = userInfo }
        var json = JSONValue.object(object).serialized
        let code = json.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { save(raw, sceneID, $0.baseAddress, $0.count) }
        }
        if code != SH_OK { throw HostError(code: code) }
    }

    /// Whether the host's table (as the host compiled it) has `member`: members after
    /// version 1 were appended, so an older host's table ends before them.
    func has<T>(_ member: KeyPath<sh_host, T>) -> Bool {
        guard let raw else { return false }
        return Int(raw.pointee.size) >= MemoryLayout<sh_host>.offset(of: member)! + MemoryLayout<T>.size
    }

    /// This service's persistent key-value store. Main thread only.
    public var store: Store { Store(host: self) }

    /// A service's persistent key-value store: byte values under string keys.
    ///
    /// Every call throws ``HostError/unsupported`` when the host has no store.
    /// Call it only on the thread that delivers events.
    public struct Store {
        let host: HostContext

        /// The value of `key`, or `nil` when it is not set.
        public func get(_ key: String) throws(HostError) -> [UInt8]? {
            let raw = try host.attached()
            guard let storeGet = raw.pointee.store_get else { throw .unsupported }
            try Self.check(key)
            var capacity = 256
            while true {
                var length = 0
                var value = [UInt8](repeating: 0, count: capacity)
                let code = value.withUnsafeMutableBytes { buffer in
                    storeGet(raw, key, buffer.baseAddress, buffer.count, &length)
                }
                switch Int(code) {
                case SH_OK:
                    guard length <= capacity else { throw .failed(code: code) }
                    value.removeSubrange(length...)
                    return value
                case SH_NOT_FOUND:
                    return nil
                case SH_TOO_SMALL where length > capacity:
                    capacity = length
                default:
                    throw HostError(code: code)
                }
            }
        }

        /// The value of `key` decoded as UTF-8, or `nil` when it is not set.
        public func string(_ key: String) throws(HostError) -> String? {
            guard let bytes = try get(key) else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// Sets `key` to `value`, atomically and durably.
        public func set(_ key: String, _ value: [UInt8]) throws(HostError) {
            let raw = try host.attached()
            guard let storeSet = raw.pointee.store_set else { throw .unsupported }
            try Self.check(key)
            let code = value.withUnsafeBytes { buffer in
                storeSet(raw, key, buffer.baseAddress, buffer.count)
            }
            if code != SH_OK { throw HostError(code: code) }
        }

        /// Sets `key` to the UTF-8 bytes of `value`, atomically and durably.
        public func set(_ key: String, _ value: String) throws(HostError) {
            try set(key, Array(value.utf8))
        }

        /// Removes `key`; returns `false` when it was not set.
        @discardableResult
        public func remove(_ key: String) throws(HostError) -> Bool {
            let raw = try host.attached()
            guard let storeRemove = raw.pointee.store_remove else { throw .unsupported }
            try Self.check(key)
            let code = storeRemove(raw, key)
            switch Int(code) {
            case SH_OK: return true
            case SH_NOT_FOUND: return false
            default: throw HostError(code: code)
            }
        }

        /// Every key of this service's store, in byte order.
        public func keys() throws(HostError) -> [String] {
            let raw = try host.attached()
            guard let storeKeys = raw.pointee.store_keys else { throw .unsupported }
            var keys: [String] = []
            let code = withUnsafeMutablePointer(to: &keys) { keysPointer in
                storeKeys(
                    raw,
                    { context, key in
                        guard let context, let key else { return }
                        context.assumingMemoryBound(to: [String].self).pointee.append(String(cString: key))
                    }, keysPointer)
            }
            if code != SH_OK { throw HostError(code: code) }
            return keys
        }

        static func check(_ key: String) throws(HostError) {
            if key.utf8.contains(0) { throw .invalid }
        }
    }

    func attached() throws(HostError) -> UnsafePointer<sh_host> {
        guard let raw else { throw .notAttached }
        return raw
    }
}

/// Writes `text` to standard error (fd 2) without touching C's `stderr` global.
func writeStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var rest = UnsafeRawBufferPointer(bytes)
        while !rest.isEmpty {
            let written = write(2, rest.baseAddress, rest.count)
            if written <= 0 { return }
            rest = UnsafeRawBufferPointer(rebasing: rest[written...])
        }
    }
}
