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
    /// Names subscribed at run time through `sh_host.subscribe` (metadata names are separate).
    let subscriptions = Mutex<Set<String>>([])

    init(id: String, log: Log, state: AppStateCell, mailbox: Mailbox) {
        self.id = id
        self.log = log
        self.state = state
        self.mailbox = mailbox
    }
}

/// Builds the `sh_host` table handed to one service.
enum HostTable {
    /// A table for `context`, never freed: services may keep the pointer until exit.
    static func make(for context: ServiceContext) -> UnsafePointer<sh_host> {
        let table = UnsafeMutablePointer<sh_host>.allocate(capacity: 1)
        table.initialize(to: sh_host(
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
            // The persistent store arrives with the configuration issue; until then every
            // store call answers "unsupported", as the header allows.
            store_get: { _, _, _, _, _ in Int32(SH_UNSUPPORTED) },
            store_set: { _, _, _, _ in Int32(SH_UNSUPPORTED) },
            store_remove: { _, _ in Int32(SH_UNSUPPORTED) },
            store_keys: { _, _, _ in Int32(SH_UNSUPPORTED) },
            get_extension: { _, _ in nil },
            subscribe: { host, name in
                guard let context = HostTable.context(host), let name, name.pointee != 0 else {
                    return Int32(SH_INVALID)
                }
                let text = String(cString: name)
                context.subscriptions.withLock { _ = $0.insert(text) }
                return Int32(SH_OK)
            },
            unsubscribe: { host, name in
                guard let context = HostTable.context(host), let name else { return Int32(SH_INVALID) }
                let text = String(cString: name)
                return context.subscriptions.withLock { $0.remove(text) } == nil ? Int32(SH_NOT_FOUND) : Int32(SH_OK)
            },
            register_for_remote_notifications: { host in
                guard let context = HostTable.context(host) else { return Int32(SH_INVALID) }
                context.mailbox.send(.tokenRequest(service: context.id))
                return Int32(SH_OK)
            }
        ))
        return UnsafePointer(table)
    }

    private static func context(_ host: UnsafePointer<sh_host>?) -> ServiceContext? {
        guard let data = host?.pointee.host_data else { return nil }
        return Unmanaged<ServiceContext>.fromOpaque(data).takeUnretainedValue()
    }
}
