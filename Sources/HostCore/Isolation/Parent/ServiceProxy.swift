import Glibc
import ServiceABI

/// A process-isolated service as the dispatcher sees it: an `sh_service` like any plugin's,
/// whose `attach` and `handle_event` send the call to the service's worker and wait for its
/// answer, with the service's event deadline. The rest of the host does not know the
/// difference: order, merging, completions and deadlines go through the one code path.
@MainActor
final class ServiceProxy {
    /// The service's id and static metadata (read from the file by the host).
    let metadata: ServiceMetadata
    /// Its index in the worker's list of services.
    let index: Int
    unowned let plugin: IsolatedPlugin
    /// The descriptor the host holds; never freed (ServiceSlot keeps it for the process lifetime).
    let descriptor: UnsafeMutablePointer<sh_service>
    /// The host table the host gave it at attach; a restarted worker's calls go to it again.
    var hostTable: UnsafePointer<sh_host>?
    /// Whether the host accepted it (its first attach succeeded): only those are restarted.
    var inHost = false
    /// Whether it is attached in the current worker.
    var attached = false

    var id: String { metadata.id }

    init(metadata: ServiceMetadata, index: Int, plugin: IsolatedPlugin) {
        self.metadata = metadata
        self.index = index
        self.plugin = plugin
        descriptor = .allocate(capacity: 1)
        descriptor.initialize(
            to: sh_service(
                size: UInt32(MemoryLayout<sh_service>.size), version: SH_SERVICE_VERSION,
                id: UnsafePointer(strdup(metadata.id)!), context: nil,
                attach: { service, host in
                    guard let proxy = ServiceProxy.from(service), let host else { return Int32(SH_INVALID) }
                    return MainActor.assumeIsolated { proxy.plugin.attach(proxy, host: host) }
                },
                handle_event: { service, event in
                    guard let proxy = ServiceProxy.from(service), let event else { return Int32(SH_INVALID) }
                    return MainActor.assumeIsolated { proxy.plugin.deliver(event, to: proxy) }
                }))
        // Retained for the process lifetime, like the descriptor that points to it.
        descriptor.pointee.context = Unmanaged.passRetained(self).toOpaque()
    }

    private nonisolated static func from(_ service: UnsafePointer<sh_service>?) -> ServiceProxy? {
        guard let context = service?.pointee.context else { return nil }
        return Unmanaged<ServiceProxy>.fromOpaque(context).takeUnretainedValue()
    }

    /// The loader's record of this service.
    func loadedInfo(path: String, identity: FileIdentity) -> LoadedServiceInfo {
        LoadedServiceInfo(metadata: metadata, path: path, identity: identity, hostMade: UnsafePointer(descriptor))
    }
}
