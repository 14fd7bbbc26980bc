import Glibc
import ServiceABI

/// What a service's `sh_host` table reaches: its id and the host's thread-safe parts.
///
/// Referenced from `sh_host.host_data`; retained for the process lifetime, like the table.
final class ServiceContext: Sendable {
    let id: String
    let index: Int
    let log: Log
    let state: AppStateCell
    let bus: NotificationBus

    init(id: String, index: Int, log: Log, state: AppStateCell, bus: NotificationBus) {
        self.id = id
        self.index = index
        self.log = log
        self.state = state
        self.bus = bus
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
                context.bus.post(.init(name: String(cString: name), sender: context.id,
                                       senderIndex: context.index, json: payload))
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
            get_extension: { _, _ in nil }
        ))
        return UnsafePointer(table)
    }

    private static func context(_ host: UnsafePointer<sh_host>?) -> ServiceContext? {
        guard let data = host?.pointee.host_data else { return nil }
        return Unmanaged<ServiceContext>.fromOpaque(data).takeUnretainedValue()
    }
}
