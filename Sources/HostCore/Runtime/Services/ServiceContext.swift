import ServiceABI
import Synchronization

/// What a service's `sh_host` table reaches: its id and the host's thread-safe parts.
///
/// Referenced from `sh_host.host_data`; retained for the process lifetime, like the table.
final class ServiceContext: Sendable {
    let id: String
    let log: Log
    let state: AppStateCell
    let mailbox: Mailbox
    /// Where the service's store lives; nil when the host runs without one.
    private let stateDirectory: StateDirectory?
    /// Under one lock (one allocation per service, not two locks' four): the store, opened on
    /// the first store call, not at attach (most services never use a store, and opening one
    /// costs a few system calls per service at start-up); and the names subscribed at run time
    /// through `sh_host.subscribe` (metadata names are separate).
    private let guarded = Locked<(store: ServiceStore?, subscriptions: Set<String>)>((nil, []))
    /// What every service's table reaches in common.
    let shared: SharedServices

    init(
        id: String, log: Log, state: AppStateCell, mailbox: Mailbox, stateDirectory: StateDirectory?,
        shared: SharedServices
    ) {
        self.id = id
        self.stateDirectory = stateDirectory
        self.log = log
        self.state = state
        self.mailbox = mailbox
        self.shared = shared
    }

    /// The service's store, opened on first use; nil without a state directory.
    func store() throws(StorageError) -> ServiceStore? {
        guard let stateDirectory else { return nil }
        return try guarded.withLock {
            (state: inout (store: ServiceStore?, subscriptions: Set<String>)) throws(StorageError) -> ServiceStore in
            if let opened = state.store { return opened }
            let store = try stateDirectory.store(for: id)
            state.store = store
            return store
        }
    }

    /// Runs `body` with the names subscribed at run time, under the context's lock.
    func withSubscriptions<Result>(_ body: (inout Set<String>) -> Result) -> Result {
        guarded.withLock { body(&$0.subscriptions) }
    }
}

/// What every service's `sh_host` reaches in common, beyond its own context.
final class SharedServices: Sendable {
    /// The notification authorization (`notification_settings`, `request_authorization`).
    let authorization: NotificationAuthorization
    /// `set_scene_restoration` for a service, a scene id and the activity (nil: forget it),
    /// carried out by the application on the main thread; answers as the table does.
    let setRestoration: @MainActor @Sendable (_ service: String, _ scene: UInt64, _ json: [UInt8]?) -> Int32
    /// `request`: control requests from services, carried out by the control handler.
    let requests: ServiceRequests
    /// The background-tasks extension's tasks (main thread only).
    let backgroundTasks: BackgroundTasks
    /// What the sources extension reaches (main thread only).
    let pluginSources: PluginSources
    /// The notifications extension's categories (main thread only).
    let categories: NotificationCategories

    init(
        authorization: NotificationAuthorization, requests: ServiceRequests, backgroundTasks: BackgroundTasks,
        pluginSources: PluginSources, categories: NotificationCategories,
        setRestoration: @escaping @MainActor @Sendable (String, UInt64, [UInt8]?) -> Int32
    ) {
        self.authorization = authorization
        self.requests = requests
        self.backgroundTasks = backgroundTasks
        self.pluginSources = pluginSources
        self.categories = categories
        self.setRestoration = setRestoration
    }
}

/// The host functions in process: what a service's `sh_host` (HostAdapter) reaches, and what
/// a worker's forwarded calls reach for a service in a worker (HostCallForwarder).
extension ServiceContext: HostFunctions {
    func logLine(_ level: LogLevel, _ message: String) {
        log.write(level, id, message)
    }

    func post(name: String, json: [UInt8]?) -> Int32 {
        mailbox.send(.post(name: name, sender: id, json: json))
        return Int32(SH_OK)
    }

    func appState() -> Int32 { state.value.rawValue }

    func storeGet(key: [UInt8], capacity: Int) -> StoreRead {
        storeCall { store throws(StorageError) in
            guard let value = try store.get(key) else { return .failed(Int32(SH_NOT_FOUND)) }
            return StoreRead(result: Int32(SH_OK), length: value.count, value: value)
        } failed: {
            .failed($0)
        }
    }

    func storeSet(key: [UInt8], value: UnsafeRawBufferPointer) -> Int32 {
        storeCall { store throws(StorageError) in
            try store.set(key, to: value)
            return Int32(SH_OK)
        } failed: {
            $0
        }
    }

    func storeRemove(key: [UInt8]) -> Int32 {
        storeCall { store throws(StorageError) in
            try store.remove(key) ? Int32(SH_OK) : Int32(SH_NOT_FOUND)
        } failed: {
            $0
        }
    }

    func storeKeys() -> (result: Int32, keys: [[UInt8]]) {
        storeCall { store throws(StorageError) in
            let keys = try store.keys()
            return (Int32(SH_OK), keys)
        } failed: {
            ($0, [])
        }
    }

    func subscribe(_ name: String) -> Int32 {
        withSubscriptions { _ = $0.insert(name) }
        return Int32(SH_OK)
    }

    func unsubscribe(_ name: String) -> Int32 {
        withSubscriptions { $0.remove(name) } == nil ? Int32(SH_NOT_FOUND) : Int32(SH_OK)
    }

    func registerForRemoteNotifications() -> Int32 {
        mailbox.send(.tokenRequest(service: id))
        return Int32(SH_OK)
    }

    func notificationSettings() -> (status: Int32, allowed: UInt32) {
        let settings = shared.authorization.current
        return (settings.status.rawValue, settings.allowed.rawValue)
    }

    func requestAuthorization(_ options: UInt32) -> Int32 {
        let answer = shared.authorization.request(AuthorizationOptions(rawValue: options))
        // Saved and announced on the main thread, after the current event.
        if answer.changed { mailbox.send(.authorizationChanged) }
        return answer.status.rawValue
    }

    func setSceneRestoration(scene: UInt64, json: [UInt8]?) -> Int32 {
        // [main-thread] in host.h: the host calls services only there.
        MainActor.assumeIsolated { shared.setRestoration(id, scene, json) }
    }

    func control(_ json: [UInt8], reply: @escaping @Sendable ([UInt8]) -> Void) -> Int32 {
        shared.requests.submit(from: id, json, reply: reply)
        return Int32(SH_OK)
    }

    func request(name: String, json: [UInt8]?, reply: @escaping @Sendable (RequestReply) -> Void) -> Int32 {
        mailbox.send(.request(ServiceRequest(name: name, from: id, json: json, reply: reply)))
        return Int32(SH_OK)
    }

    func reportHealth(_ status: Int32, reason: String?) -> Int32 {
        mailbox.send(.health(service: id, status: status, reason: reason))
        return Int32(SH_OK)
    }

    func beginBackgroundTask(name: String, expired: @escaping @MainActor @Sendable (UInt32) -> Void) -> UInt32 {
        // [main-thread] in background_tasks.h.
        MainActor.assumeIsolated {
            let tasks = shared.backgroundTasks
            var id: UInt32 = 0
            id = tasks.begin(service: self.id, name: name) { expired(id) }
            return id
        }
    }

    func setNotificationCategories(json: [UInt8]) -> Int32 {
        // [main-thread] in notifications.h.
        MainActor.assumeIsolated { shared.categories.set(json, service: id) }
    }

    func endBackgroundTask(_ task: UInt32) -> Int32 {
        MainActor.assumeIsolated { shared.backgroundTasks.end(task, service: id) ? Int32(SH_OK) : Int32(SH_NOT_FOUND) }
    }

    func deploy(directory: String, probationMilliseconds: UInt32, done: @escaping @Sendable (RequestReply) -> Void)
        -> Int32
    {
        shared.requests.deploy(
            from: self, directory: directory, probation: DeployExtension.probation(probationMilliseconds), done: done)
        return Int32(SH_OK)
    }

    /// Runs a store call, mapping failures to results: a refused request answers SH_INVALID,
    /// a disk failure SH_ERROR (logged), no state directory SH_UNSUPPORTED.
    private func storeCall<Result>(
        _ body: (ServiceStore) throws(StorageError) -> Result, failed: (Int32) -> Result
    ) -> Result {
        do {
            guard let store = try store() else { return failed(Int32(SH_UNSUPPORTED)) }
            return try body(store)
        } catch {
            if error.isInvalidRequest {
                // The service only sees SH_INVALID; the log says why (too large, too many keys, …).
                log.warn(id, "store: refused: \(error)")
                return failed(Int32(SH_INVALID))
            }
            log.error(id, "store: \(error)")
            return failed(Int32(SH_ERROR))
        }
    }
}

/// Extension sources/1 in process: a plugin source's moves, watches and current state, carried
/// out by the host's PluginSources.
extension ServiceContext: PluginSourceFunctions {
    // [main-thread] in sources.h, for each.
    func moveApp(_ move: AppMove) -> Int32 {
        MainActor.assumeIsolated { shared.pluginSources.move(move, for: id) }
        return Int32(SH_OK)
    }

    func watch(_ fd: Int32, readable: @escaping @MainActor @Sendable (Int32) -> Void) -> UInt64 {
        MainActor.assumeIsolated { shared.pluginSources.watch(fd, for: id, readable: readable) }
    }

    func unwatch(_ watch: UInt64) -> Int32 {
        MainActor.assumeIsolated { shared.pluginSources.unwatch(watch, for: id) ? Int32(SH_OK) : Int32(SH_NOT_FOUND) }
    }

    func setCurrentState(_ name: String, json: [UInt8]) -> Int32 {
        MainActor.assumeIsolated {
            shared.pluginSources.setCurrentState(name, json: json) ? Int32(SH_OK) : Int32(SH_INVALID)
        }
    }
}
