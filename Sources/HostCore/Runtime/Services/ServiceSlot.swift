import ServiceABI

/// One running service as the dispatcher sees it.
@MainActor
public final class ServiceSlot {
    /// The static metadata.
    public let metadata: ServiceMetadata
    /// The library it came from.
    public let path: String
    /// The library's identity when loaded: a reload replaces the service when it changes.
    public let identity: FileIdentity
    /// Its entry in the configuration file, if any (a reload that delivers didChangeSettings
    /// puts the new one here: later launch options carry the new settings).
    public internal(set) var configuration: ServiceConfiguration?
    /// The last failure the service reported, for `list` and logs.
    public internal(set) var lastError: String? {
        didSet { Self.errorChanges &+= 1 }
    }
    /// Counts changes of any service's ``lastError``: the control snapshot is published
    /// again only when it moved (comparing every service's error per request cost more).
    static var errorChanges: UInt64 = 0
    /// Whether willFinishLaunching or didFinishLaunching failed (answered an error).
    public internal(set) var launchFailed = false
    /// What starting it cost (always recorded; `host ctl blame`). Kept here, not in a table by
    /// id: that was four hashes of the id per service at every start.
    var startup = StartupCost()
    /// Its first-launch flags (`SH_LAUNCH_FIRST_*`), read once: the answers stay the same for
    /// the whole process (``FirstLaunch``), and asking them per launch event and again to mark
    /// the launch hashed the id six times per service at every start.
    var firstLaunchFlags: UInt32?
    /// The state the instance it replaces handed over (willReload), for the launch events of
    /// its next catch-up only (ServiceSet+HandOver).
    var restoredState: HandedOverState?

    let descriptor: UnsafePointer<sh_service>
    let context: ServiceContext
    // Cached from the descriptor: the plugin promises it never changes.
    let handleEvent: @convention(c) (UnsafePointer<sh_service>?, UnsafePointer<sh_event>?) -> Int32

    /// The service id.
    public var id: String { metadata.id }

    /// Whether it receives notifications posted under `name` (metadata or `sh_host.subscribe`).
    func isSubscribed(to name: String) -> Bool {
        metadata.subscriptions.contains(name) || metadata.subscriptions.contains("*")
            || context.withSubscriptions { $0.contains(name) || $0.contains("*") }
    }

    init(_ info: LoadedServiceInfo, context: ServiceContext, configuration: ServiceConfiguration?) {
        self.context = context
        self.configuration = configuration
        metadata = info.metadata
        path = info.path
        identity = info.identity
        descriptor = info.descriptor
        handleEvent = info.handleEvent
    }
}
