import Glibc
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

    init(id: String, log: Log, state: AppStateCell, mailbox: Mailbox, stateDirectory: StateDirectory?, shared: SharedServices) {
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
        return try guarded.withLock { (state: inout (store: ServiceStore?, subscriptions: Set<String>)) throws(StorageError) -> ServiceStore in
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

    init(
        authorization: NotificationAuthorization, requests: ServiceRequests,
        setRestoration: @escaping @MainActor @Sendable (String, UInt64, [UInt8]?) -> Int32
    ) {
        self.authorization = authorization
        self.requests = requests
        self.setRestoration = setRestoration
    }
}

/// Builds the `sh_host` table handed to one service.
enum HostTable {
    /// A table for `context`, never freed: services may keep the pointer until exit.
    static func make(for context: ServiceContext) -> UnsafePointer<sh_host> {
        let table = UnsafeMutablePointer<sh_host>.allocate(capacity: 1)
        table.initialize(
            to: sh_host(
                size: UInt32(MemoryLayout<sh_host>.size),
                version: SH_HOST_VERSION,
                host_data: Unmanaged.passRetained(context).toOpaque(),
                host_version: HostVersion.cString,
                log: { host, level, message in
                    guard let context = HostTable.context(host) else { return }
                    let text = message.map { String(cString: $0) } ?? ""
                    context.log.write(LogLevel(rawValue: min(max(level, 0), 3)) ?? .info, context.id, text)
                },
                post: { host, name, json, length in
                    guard let context = HostTable.context(host), let name, name.pointee != 0 else {
                        return Int32(SH_INVALID)
                    }
                    let payload = json.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) }
                    context.mailbox.send(.post(name: String(cString: name), sender: context.id, json: payload))
                    return Int32(SH_OK)
                },
                app_state: { host in
                    HostTable.context(host)?.state.value.rawValue ?? AppState.notRunning.rawValue
                },
                store_get: { host, key, buffer, capacity, length in
                    HostTable.storeCall(host, key) { store, key throws(StorageError) in
                        guard let value = try store.get(key) else { return Int32(SH_NOT_FOUND) }
                        length?.pointee = value.count
                        // `capacity` is a size_t: past INT64_MAX it reads as a negative Int.
                        guard UInt(value.count) <= UInt(bitPattern: capacity) else { return Int32(SH_TOO_SMALL) }
                        if let buffer { value.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
                        return Int32(SH_OK)
                    }
                },
                store_set: { host, key, value, length in
                    guard length >= 0, value != nil || length == 0 else { return Int32(SH_INVALID) }  // NULL with a length
                    return HostTable.storeCall(host, key) { store, key throws(StorageError) in
                        try store.set(key, to: UnsafeRawBufferPointer(start: length == 0 ? nil : value, count: length))
                        return Int32(SH_OK)
                    }
                },
                store_remove: { host, key in
                    HostTable.storeCall(host, key) { store, key throws(StorageError) in
                        try store.remove(key) ? Int32(SH_OK) : Int32(SH_NOT_FOUND)
                    }
                },
                store_keys: { host, each, context in
                    guard let each else { return Int32(SH_INVALID) }
                    return HostTable.storeCall(host, nil) { store, _ throws(StorageError) in
                        for key in try store.keys() {
                            (key + [0]).withUnsafeBufferPointer { bytes in
                                bytes.withMemoryRebound(to: CChar.self) { each(context, $0.baseAddress) }
                            }
                        }
                        return Int32(SH_OK)
                    }
                },
                get_extension: { _, _ in nil },
                subscribe: { host, name in
                    guard let context = HostTable.context(host), let name, name.pointee != 0 else {
                        return Int32(SH_INVALID)
                    }
                    let text = String(cString: name)
                    context.withSubscriptions { _ = $0.insert(text) }
                    return Int32(SH_OK)
                },
                unsubscribe: { host, name in
                    guard let context = HostTable.context(host), let name else { return Int32(SH_INVALID) }
                    let text = String(cString: name)
                    return context.withSubscriptions { $0.remove(text) } == nil ? Int32(SH_NOT_FOUND) : Int32(SH_OK)
                },
                register_for_remote_notifications: { host in
                    guard let context = HostTable.context(host) else { return Int32(SH_INVALID) }
                    context.mailbox.send(.tokenRequest(service: context.id))
                    return Int32(SH_OK)
                },
                notification_settings: { host, allowed in
                    guard let context = HostTable.context(host) else { return Int32(SH_INVALID) }
                    let settings = context.shared.authorization.current
                    allowed?.pointee = settings.allowed.rawValue
                    return settings.status.rawValue
                },
                request_authorization: { host, options in
                    guard let context = HostTable.context(host) else { return Int32(SH_INVALID) }
                    let answer = context.shared.authorization.request(AuthorizationOptions(rawValue: options))
                    // Saved and announced on the main thread, after the current event.
                    if answer.changed { context.mailbox.send(.authorizationChanged) }
                    return answer.status.rawValue
                },
                set_scene_restoration: { host, scene, json, length in
                    guard let context = HostTable.context(host) else { return Int32(SH_INVALID) }
                    let bytes = json.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) }
                    // [main-thread] in host.h: the host calls services only there.
                    return MainActor.assumeIsolated { context.shared.setRestoration(context.id, scene, bytes) }
                },
                control: { host, json, length, reply, replyContext in
                    guard let context = HostTable.context(host), let json, length > 0, let reply else {
                        return Int32(SH_INVALID)
                    }
                    let bytes = Array(UnsafeRawBufferPointer(start: json, count: length))
                    let target = ReplyTarget(function: reply, context: replyContext)
                    context.shared.requests.submit(from: context.id, bytes) { answer in
                        (answer + [0]).withUnsafeBufferPointer { text in
                            text.withMemoryRebound(to: CChar.self) { target.function(target.context, $0.baseAddress, answer.count) }
                        }
                    }
                    return Int32(SH_OK)
                },
                request: { host, name, json, length, reply, replyContext in
                    guard let context = HostTable.context(host), let name, name.pointee != 0, let reply else {
                        return Int32(SH_INVALID)
                    }
                    let payload = json.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) }
                    let target = RequestReplyTarget(function: reply, context: replyContext)
                    context.mailbox.send(
                        .request(
                            ServiceRequest(name: String(cString: name), from: context.id, json: payload) { answer in
                                target.call(answer)
                            }))
                    return Int32(SH_OK)
                }
            ))
        return UnsafePointer(table)
    }

    /// Runs a store call for the service behind `host`, mapping failures to results:
    /// a refused request answers SH_INVALID, a disk failure SH_ERROR (logged).
    private static func storeCall(
        _ host: UnsafePointer<sh_host>?, _ key: UnsafePointer<CChar>?,
        _ body: (ServiceStore, [UInt8]) throws(StorageError) -> Int32
    ) -> Int32 {
        guard let context = context(host) else { return Int32(SH_INVALID) }
        let keyBytes = key.map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? []
        do {
            guard let store = try context.store() else { return Int32(SH_UNSUPPORTED) }
            return try body(store, keyBytes)
        } catch {
            if error.isInvalidRequest {
                // The service only sees SH_INVALID; the log says why (too large, too many keys, …).
                context.log.warn(context.id, "store: refused: \(error)")
                return Int32(SH_INVALID)
            }
            context.log.error(context.id, "store: \(error)")
            return Int32(SH_ERROR)
        }
    }

    /// Where a request's reply goes: the service's function and its context pointer.
    private struct ReplyTarget: @unchecked Sendable {
        // @unchecked: the host never touches `context`, only hands it back to the service's
        // function once, on the main thread, as host.h promises the service.
        let function: sh_control_reply_fn
        let context: UnsafeMutableRawPointer?
    }

    /// Where a service request's reply goes: the asker's function and its context pointer.
    struct RequestReplyTarget: @unchecked Sendable {
        // @unchecked: the host never touches `context`, only hands it back to the asker's
        // function once, on the main thread, as host.h promises.
        let function: sh_request_reply_fn
        let context: UnsafeMutableRawPointer?

        func call(_ reply: RequestReply) {
            (reply.json + [0]).withUnsafeBufferPointer { text in
                text.withMemoryRebound(to: CChar.self) {
                    function(context, reply.result, reply.json.isEmpty ? nil : $0.baseAddress, reply.json.count)
                }
            }
        }
    }

    private static func context(_ host: UnsafePointer<sh_host>?) -> ServiceContext? {
        guard let data = host?.pointee.host_data else { return nil }
        return Unmanaged<ServiceContext>.fromOpaque(data).takeUnretainedValue()
    }
}
