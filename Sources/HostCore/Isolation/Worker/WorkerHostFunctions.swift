import ServiceABI

/// The host functions in a worker: each call is one HostCallFrame to the host, which carries
/// it out with the service's own functions (HostCallForwarder). Calls with an answer wait for
/// it; log, post, subscribe and register_for_remote_notifications are sent and return at once,
/// with the answer the host gives (HostAdapter checked their only failures already).
///
/// `control` is SH_UNSUPPORTED: its reply would have to cross back into the worker on a
/// thread of its own; the bundled service that needs it (MQTTBridge) runs in process.
final class WorkerHostFunctions: HostFunctions {
    private let index: UInt32
    private let channel: FrameChannel
    private let calls: PendingCalls
    private let requests: WorkerRequests
    /// The host's log level: a line it would not write is not sent.
    private let level: Int32

    init(index: UInt32, channel: FrameChannel, calls: PendingCalls, requests: WorkerRequests = .shared, level: Int32) {
        self.index = index
        self.channel = channel
        self.calls = calls
        self.requests = requests
        self.level = level
    }

    /// The largest bytes a one-way call carries: a frame holds the rest of its payload too.
    private static let maxBytes = Wire.maxPayload - 4096

    /// Sends a one-way call; a lost host makes the worker exit soon, so failures are moot.
    private func send(_ call: HostCallFrame) {
        var w = WireWriter()
        call.write(service: index, into: &w)
        try? channel.send(&w, call.frame.type)
    }

    /// A call with an answer; nil when the host is gone or the reply is malformed.
    private func call(_ call: HostCallFrame) -> HostCallReply? {
        guard let function = call.frame.call else { return nil }
        var w = WireWriter()
        call.write(service: index, into: &w)
        guard var reply = calls.call(&w) else { return nil }
        return try? HostCallReply.read(&reply, for: function)
    }

    /// `call`'s result, SH_ERROR when there is none.
    private func result(_ call: HostCallFrame) -> Int32 {
        self.call(call)?.result ?? Int32(SH_ERROR)
    }

    func logLine(_ level: LogLevel, _ message: String) {
        guard level.rawValue <= self.level else { return }  // the host would not write it either
        send(.log(level: level.rawValue, message: Array(message.utf8.prefix(Self.maxBytes))))
    }

    func post(name: String, json: [UInt8]?) -> Int32 {
        guard json?.count ?? 0 <= Self.maxBytes else { return Int32(SH_INVALID) }
        send(.post(name: Array(name.utf8), json: json))
        return Int32(SH_OK)
    }

    func appState() -> Int32 {
        call(.appState)?.result ?? AppState.notRunning.rawValue
    }

    func storeGet(key: [UInt8], capacity: Int) -> StoreRead {
        // The plugin's size_t as it is (a huge one reads as a negative Int).
        guard case .storeRead(let read)? = call(.storeGet(key: key, capacity: UInt64(UInt(bitPattern: capacity))))
        else {
            return .failed(Int32(SH_ERROR))
        }
        return read
    }

    func storeSet(key: [UInt8], value: UnsafeRawBufferPointer) -> Int32 {
        // A value no frame can carry is too large for any store (1 MiB by default): SH_INVALID,
        // as the store answers a value over its limit.
        guard value.count <= Self.maxBytes else { return Int32(SH_INVALID) }
        return result(.storeSet(key: key, value: Array(value), length: UInt64(value.count)))
    }

    func storeRemove(key: [UInt8]) -> Int32 { result(.storeRemove(key: key)) }

    func storeKeys() -> (result: Int32, keys: [[UInt8]]) {
        guard case .keys(let result, let keys)? = call(.storeKeys) else { return (Int32(SH_ERROR), []) }
        return (result, keys)
    }

    func subscribe(_ name: String) -> Int32 {
        send(.subscribe(name: Array(name.utf8)))
        return Int32(SH_OK)
    }

    func unsubscribe(_ name: String) -> Int32 { result(.unsubscribe(name: Array(name.utf8))) }

    func registerForRemoteNotifications() -> Int32 {
        send(.registerForRemoteNotifications)
        return Int32(SH_OK)
    }

    func notificationSettings() -> (status: Int32, allowed: UInt32) {
        guard case .settings(let status, let allowed)? = call(.notificationSettings) else {
            return (Int32(SH_ERROR), 0)
        }
        return (status, allowed)
    }

    func requestAuthorization(_ options: UInt32) -> Int32 { result(.requestAuthorization(options: options)) }

    func setSceneRestoration(scene: UInt64, json: [UInt8]?) -> Int32 {
        guard json?.count ?? 0 <= Self.maxBytes else { return Int32(SH_INVALID) }
        return result(.setSceneRestoration(scene: scene, json: json))
    }

    func control(_ json: [UInt8], reply: @escaping @Sendable ([UInt8]) -> Void) -> Int32 {
        Int32(SH_UNSUPPORTED)
    }

    // The task is the host's; its expiry comes back as a `taskExpired` frame (WorkerTasks).
    func beginBackgroundTask(name: String, expired: @escaping @MainActor @Sendable (UInt32) -> Void) -> UInt32 {
        guard case .result(let result)? = call(.beginBackgroundTask(name: Array(name.utf8))) else { return 0 }
        let task = UInt32(bitPattern: result)
        // [main-thread] in background_tasks.h.
        if task != 0 { MainActor.assumeIsolated { WorkerTasks.shared.add(task, expired) } }
        return task
    }

    func endBackgroundTask(_ task: UInt32) -> Int32 {
        let ended = result(.endBackgroundTask(task: task))
        if ended == SH_OK { MainActor.assumeIsolated { WorkerTasks.shared.remove(task) } }
        return ended
    }

    func reportHealth(_ status: Int32, reason: String?) -> Int32 {
        send(.reportHealth(status: status, reason: reason.map { Array($0.utf8) }))
        return Int32(SH_OK)
    }

    func setNotificationCategories(json: [UInt8]) -> Int32 {
        guard json.count <= Self.maxBytes else { return Int32(SH_INVALID) }
        return result(.setNotificationCategories(json: json))
    }

    func deploy(directory: String, probationMilliseconds: UInt32, done: @escaping @Sendable (RequestReply) -> Void)
        -> Int32
    {
        send(
            .deploy(
                id: requests.add(done), directory: Array(directory.utf8), probationMilliseconds: probationMilliseconds))
        return Int32(SH_OK)
    }

    func request(name: String, json: [UInt8]?, reply: @escaping @Sendable (RequestReply) -> Void) -> Int32 {
        guard json?.count ?? 0 <= Self.maxBytes else { return Int32(SH_INVALID) }
        send(.request(id: requests.add(reply), name: Array(name.utf8), json: json))
        return Int32(SH_OK)
    }
}
