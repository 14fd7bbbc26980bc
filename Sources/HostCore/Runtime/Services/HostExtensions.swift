/// The host's extensions, by versioned id: what `sh_host.get_extension` answers.
///
/// `sh_host` v4 is frozen; a host function added from here on is an extension, as CLAP's are:
/// a C table in its own header (size and version first, append-only), whose thunks find the
/// calling service's HostFunctions through `HostAdapter.functions(host)`, so the same table
/// works in process and in a worker. Offering one is a row here, and its functions a
/// requirement of HostFunctions (or a protocol of its own) that ServiceContext and
/// WorkerHostFunctions implement, with a frame in HostCallFrame.
enum HostExtensions {
    /// One extension: its id ("dev.servicehost.background-tasks/1": a new version is a new
    /// id, offered beside the old one) and its table, host-owned for the process lifetime.
    struct Row: @unchecked Sendable {
        // @unchecked: the table is immutable and never freed.
        let id: String
        let table: UnsafeRawPointer

        /// Extension `id` with `table` copied to memory the host never frees (plugins keep the
        /// pointer for the process lifetime).
        init<Table>(id: String, table: Table) {
            let copy = UnsafeMutablePointer<Table>.allocate(capacity: 1)
            copy.initialize(to: table)
            self.id = id
            self.table = UnsafeRawPointer(copy)
        }
    }

    /// Every extension this host offers.
    static let all: [Row] = [
        BackgroundTasksExtension.row, SourcesExtension.row, HealthExtension.row, NotificationsExtension.row,
        DeployExtension.row,
    ]

    /// The table of extension `id`, or nil when this host does not offer it.
    static func table(_ id: String) -> UnsafeRawPointer? {
        all.first { $0.id == id }?.table
    }
}
