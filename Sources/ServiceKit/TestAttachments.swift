import Locking
import ServiceABI

/// Services attached by ServiceKitTesting's `TestHost` to a table of its own, without a
/// `host` binary. Tests run in parallel, so unlike ``Registry`` this is guarded by a lock;
/// a real plugin never adds to it, and ``ServicePlugin/host(for:)`` looks here only for a
/// service it did not find among the plugin's own.
package enum TestAttachments {
    /// Each test-attached instance's host context, by the instance's identity.
    private static let hosts = Locked<[ObjectIdentifier: HostContext]>([:])

    /// Attaches `instance` as service `id` to `table`: from now on its `host` calls `table`.
    /// The caller keeps `table` valid until ``detach(_:)``.
    package static func attach(_ instance: any ApplicationService, id: String, to table: UnsafePointer<sh_host>) {
        hosts.withLock { $0[ObjectIdentifier(instance)] = HostContext(raw: table, serviceID: id) }
    }

    /// Undoes ``attach(_:id:to:)``.
    package static func detach(_ instance: any ApplicationService) {
        _ = hosts.withLock { $0.removeValue(forKey: ObjectIdentifier(instance)) }
    }

    /// The host context `instance` was attached with, or nil.
    static func host(for instance: some ApplicationService) -> HostContext? {
        hosts.withLock { $0[ObjectIdentifier(instance)] }
    }
}
