import ServiceABI
import ServiceVocabulary

/// The functions of `sh_host`, as Swift: what one service may ask of its host.
///
/// HostAdapter is the only C side: it fills the table with thunks that check every argument
/// (NULL with a length, a `size_t` past `Int.max`, empty names, NULL callbacks) and then call
/// one of these with Swift values, so an implementation never sees an argument host.h
/// forbids. Two implementations: ServiceContext (in process, the real host) and
/// WorkerHostFunctions (in a worker, each call one frame to the host, whose HostCallForwarder
/// carries it out with the service's ServiceContext). Results are host.h's SH_* codes.
///
/// A new host function is not a new member here: `sh_host` v4 is frozen, and new functions
/// are extensions (HostExtensions), found by versioned id through `get_extension`.
///
/// `package`: ServiceKitTesting's TestHost wraps a service's ServiceContext in a decorator
/// that records what the service asked and forwards it (Host+InProcess.swift).
package protocol HostFunctions: AnyObject, Sendable {
    /// `log`: the level already clamped to the SH_LOG_* range.
    func logLine(_ level: LogLevel, _ message: String)
    /// `post`: a non-empty name, and the payload when the service gave one.
    func post(name: String, json: [UInt8]?) -> Int32
    /// `app_state`: an sh_app_state.
    func appState() -> Int32
    /// `store_get`: the value of `key` (the C string's bytes; empty for NULL). `capacity` is
    /// the service's buffer: an implementation may leave the value out when it does not fit,
    /// and the adapter answers SH_TOO_SMALL either way.
    func storeGet(key: [UInt8], capacity: Int) -> StoreRead
    /// `store_set`: `value` is the service's buffer (empty for NULL with a length of 0), read
    /// during the call only.
    func storeSet(key: [UInt8], value: UnsafeRawBufferPointer) -> Int32
    /// `store_remove`.
    func storeRemove(key: [UInt8]) -> Int32
    /// `store_keys`: the result and the keys, in byte order (the adapter calls `each`).
    func storeKeys() -> (result: Int32, keys: [[UInt8]])
    /// `subscribe`: a non-empty name.
    func subscribe(_ name: String) -> Int32
    /// `unsubscribe`.
    func unsubscribe(_ name: String) -> Int32
    /// `register_for_remote_notifications`.
    func registerForRemoteNotifications() -> Int32
    /// `notification_settings`: an sh_authorization_status and the SH_PRESENT_* options.
    func notificationSettings() -> (status: Int32, allowed: UInt32)
    /// `request_authorization`.
    func requestAuthorization(_ options: UInt32) -> Int32
    /// `set_scene_restoration`: nil clears the activity. [main-thread]
    func setSceneRestoration(scene: UInt64, json: [UInt8]?) -> Int32
    /// `control`: a non-empty request. SH_OK promises exactly one call of `reply`, later.
    func control(_ json: [UInt8], reply: @escaping @Sendable ([UInt8]) -> Void) -> Int32
    /// `request`: a non-empty name. SH_OK promises exactly one call of `reply`, later, on the
    /// main thread.
    func request(name: String, json: [UInt8]?, reply: @escaping @Sendable (RequestReply) -> Void) -> Int32
    /// Extension background-tasks/1 `begin`: a non-empty name; `expired` runs once on the main
    /// thread when the task's time is up. The task's id, or 0 when none is opened. [main-thread]
    func beginBackgroundTask(name: String, expired: @escaping @MainActor @Sendable (UInt32) -> Void) -> UInt32
    /// Extension background-tasks/1 `end`: SH_OK, or SH_NOT_FOUND. [main-thread]
    func endBackgroundTask(_ task: UInt32) -> Int32
    /// Extension health/1 `report`: a status of SH_HEALTH_* (checked), the reason cut to 1024
    /// bytes. SH_OK. [thread-safe]
    func reportHealth(_ status: Int32, reason: String?) -> Int32
    /// Extension notifications/1 `set_categories`: the document's bytes (at most
    /// SH_NOTIFICATIONS_MAX_CATEGORIES_BYTES). SH_OK or SH_INVALID. [main-thread]
    func setNotificationCategories(json: [UInt8]) -> Int32
    /// Extension deploy/1 `deploy`: an absolute directory, a probation deploy.h takes. SH_OK
    /// promises one call of `done` (an sh_deploy_outcome and its JSON), later, on the main
    /// thread, unless the service is taken down first.
    func deploy(directory: String, probationMilliseconds: UInt32, done: @escaping @Sendable (RequestReply) -> Void)
        -> Int32
}

/// What `store_get` found: a result, and the value's length and bytes when there is one.
package struct StoreRead: Sendable, Equatable {
    /// SH_OK, SH_TOO_SMALL, SH_NOT_FOUND, SH_INVALID, SH_ERROR or SH_UNSUPPORTED.
    package var result: Int32
    /// The value's length (SH_OK and SH_TOO_SMALL).
    package var length: Int = 0
    /// The value, when `result` is SH_OK and the caller is given its bytes.
    package var value: [UInt8]? = nil

    package init(result: Int32, length: Int = 0, value: [UInt8]? = nil) {
        self.result = result
        self.length = length
        self.value = value
    }

    /// A result without a value.
    package static func failed(_ result: Int32) -> StoreRead { StoreRead(result: result) }

    /// This read for a buffer of `capacity` bytes: a value that does not fit is SH_TOO_SMALL,
    /// its length kept. The one place the rule lives (the adapter and the forwarder use it).
    func fitting(_ capacity: Int) -> StoreRead {
        guard result == SH_OK, let value else { return self }
        // `capacity` is a size_t: past Int.max it reads as a negative Int.
        guard UInt(value.count) <= UInt(bitPattern: capacity) else {
            return StoreRead(result: Int32(SH_TOO_SMALL), length: value.count)
        }
        return self
    }
}

/// Checks host.h's rules on Swift values, for the adapter (from C) and the forwarder (from a
/// worker's frames) alike.
enum HostArguments {
    /// A name the host takes (post, subscribe, request): not empty. Text is decoded as the host
    /// decodes every C string, invalid UTF-8 repaired.
    static func name(_ bytes: some Collection<UInt8>) -> String? {
        bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// The log level `level` names, clamped to SH_LOG_DEBUG...SH_LOG_ERROR.
    static func level(_ level: Int32) -> LogLevel {
        LogLevel(rawValue: min(max(level, 0), 3)) ?? .info
    }
}
