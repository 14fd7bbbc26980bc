import ServiceABI

/// The running services: loading and attaching them, replacing them on reload, taking them
/// down, and the one catch-up that brings a service started late (hot reload, a restarted
/// worker, anything later) to the app's state.
///
/// The catch-up is the only place that decides what such a service's launch looks like: the
/// launch events a service started with the host would have had, up to the app's state, with
/// the launch options of ``launchOptions(for:arena:request:restart:)`` (its settings, its
/// first-launch flags, `SH_LAUNCH_RESTART`), each event carrying the state that event leaves
/// the app in.
@MainActor
final class ServiceSet {
    let dispatcher: Dispatcher
    let log: Log
    /// Where stores live; nil runs without persistence.
    let stateDirectory: StateDirectory?
    /// First-launch detection (seed 004).
    let firstLaunch: FirstLaunch
    /// What services' other threads send (posts, token requests), for their host tables.
    let mailbox: Mailbox
    /// The app state readable from any thread, for the host tables.
    let stateCell: AppStateCell
    /// What every host table reaches in common (authorization, scene restoration).
    let shared: SharedServices
    /// The configuration file in force (empty without one).
    var configuration = HostConfiguration()
    /// What `reload` rescans.
    var loadSettings = LoadSettings(directories: [])
    /// Whether a reload keeps a service whose file moved to another path with the same bytes
    /// (set once the host runs a deployed generation: each has its own folder).
    var followsContent = false
    /// Crash and hang isolation, once started (``Host/startIsolation(_:)``, before the load):
    /// it may take a plugin file instead of this process (its services run in a worker
    /// process, or none in safe mode), and it owns its services' failures. Nil loads here.
    var isolation: IsolationSupervisor?
    /// How many copies of each plugin file (by path) were loaded and later replaced: their code
    /// stays mapped, since it cannot be unloaded.
    var retiredCopies: [String: Int] = [:]
    /// The most copies of one file a host retires before it refuses to replace that file again.
    static let retiredCopyLimit = 16
    /// The library this process loaded last from each plugin file (``LoadedLibraries``).
    var libraries = LoadedLibraries()
    /// Whether the first load is done: from then on a file may be loaded already.
    var hasLoaded = false
    /// The context of each descriptor attached before whose service stopped running (a reload
    /// took it down, or replaces it by itself): `attach` is called once per descriptor
    /// (plugin.h), so a service started again from its library gets its old context (the host
    /// table it was attached with points at it) and no second `attach`. Filled as services
    /// leave, not at each attach: a start pays nothing for it.
    var attachedContexts: [UnsafePointer<sh_service>: ServiceContext] = [:]
    /// Services loaded but not running, with why: stopped by request (`host ctl service
    /// stop`) or after a failed launch. Their code stays loaded (it cannot be unloaded), so
    /// `service start` brings them back without opening anything.
    var parked: [(slot: ServiceSlot, reason: String)] = []
    /// Every file and service the last load or reload looked at and did not start, with why
    /// (`host ctl list --all`).
    var skipped: [SkippedEntry] = []
    /// The start order of the last load or reload: where a restarted service goes back in.
    var startOrder: [String] = []
    /// What each service of the start order requires, the configuration's and its plugin's
    /// merged (``StartPlan/requirements``): what a lazy service's activation opens first.
    var requirements: [String: [String]] = [:]
    /// Lazy services waiting for their first event.
    let dormant: DormantServices
    /// What opened each lazy service opened so far (`host ctl list`).
    var activatedBy: [String: String] = [:]
    /// States handed over (willReload) by services a reload replaced with a lazy version, kept
    /// for that version's first launch, when an event opens it; one per service, each at most
    /// ``largestHandedOverState``, dropped when a later reload removes or replaces the service.
    var waitingStates: [String: HandedOverState] = [:]
    /// The connected scenes, in connection order: late services are caught up to them too.
    let scenes: SceneTable

    init(
        dispatcher: Dispatcher, log: Log, stateDirectory: StateDirectory?, firstLaunch: FirstLaunch,
        mailbox: Mailbox, stateCell: AppStateCell, shared: SharedServices, dormant: DormantServices,
        scenes: SceneTable
    ) {
        self.scenes = scenes
        self.dormant = dormant
        self.dispatcher = dispatcher
        self.log = log
        self.stateDirectory = stateDirectory
        self.firstLaunch = firstLaunch
        self.mailbox = mailbox
        self.stateCell = stateCell
        self.shared = shared
        dormant.activate = { [unowned self] entries, trigger in activate(entries, trigger: trigger) }
    }

    /// The services, in dispatch order.
    var slots: [ServiceSlot] { dispatcher.services }

    /// The running service `id`.
    func slot(_ id: String) -> ServiceSlot? { slots.first { $0.id == id } }

    /// Builds a slot for a loaded service and gives it its host table; nil when its `attach`
    /// declines (the failure is returned through `failure`). `functions` is what the table calls:
    /// the service's context, or (a test's in-process service) a decorator over it.
    func attach(
        _ info: LoadedServiceInfo, cost: StartupCost, failure: inout LoadFailure?,
        functions: (ServiceContext) -> any HostFunctions = { $0 }
    ) -> ServiceSlot? {
        var cost = cost
        let id = info.metadata.id
        if !attachedContexts.isEmpty, let context = attachedContexts[info.descriptor] {
            // Attached before (its library is reused): started again with the settings in force.
            let slot = ServiceSlot(info, context: context, configuration: configuration.service(id))
            slot.startup = cost
            return slot
        }
        let context = ServiceContext(
            id: id, log: log, state: stateCell, mailbox: mailbox, stateDirectory: stateDirectory,
            shared: shared)
        if let attach = info.attach {
            let tracker = dispatcher.tracker
            let index = slots.count
            tracker.register(attaching: id, at: index)
            tracker.enter(service: index, event: .willFinishLaunching)
            let start = Clock.nanoseconds()
            let result = attach(info.descriptor, HostAdapter.make(functions(context)))
            cost.attach = Clock.nanoseconds() &- start
            tracker.leave()
            if result < 0 {
                failure = LoadFailure(path: info.path, reason: .attachFailed(id: id, result: result))
                return nil
            }
        }
        log.debug("loader", "loaded \(id) \(info.metadata.version) from \(info.path)")
        let slot = ServiceSlot(info, context: context, configuration: configuration.service(id))
        slot.startup = cost
        return slot
    }

    // MARK: Launch options and first launch

    /// The launch options of one service: its settings (as it was attached with them) and its
    /// first-launch flags; `late` adds `SH_LAUNCH_RESTART` or `SH_LAUNCH_LAZY` (a service started late).
    func launchOptions(
        for slot: ServiceSlot, arena: EventArena, request: LaunchRequest,
        late: LateStart?
    ) -> UnsafePointer<sh_launch_options> {
        return arena.launchOptions(
            request, flags: (late?.flag ?? 0) | firstLaunchFlags(of: slot), settings: slot.configuration?.settingsJSON,
            restored: late == nil ? nil : slot.restoredState)
    }

    /// `slot`'s first-launch flags, read once (``ServiceSlot/firstLaunchFlags``); a read that
    /// fails is logged, answered "not first", and tried again at the next launch event.
    private func firstLaunchFlags(of slot: ServiceSlot) -> UInt32 {
        if let known = slot.firstLaunchFlags { return known }
        var flags: UInt32 = 0
        do {
            if try firstLaunch.isFirstHostLaunch() { flags |= UInt32(SH_LAUNCH_FIRST_HOST_LAUNCH) }
            if try firstLaunch.isFirstServiceLaunch(slot.id) { flags |= UInt32(SH_LAUNCH_FIRST_SERVICE_LAUNCH) }
        } catch {
            log.error(
                "host", "cannot read the first-launch marks: \(error); launching as not first",
                event: .firstLaunchUnreadable)
            return 0
        }
        slot.firstLaunchFlags = flags
        return flags
    }

    /// Records services' successful launch for first-launch detection, durable together. Only
    /// a first launch is written: a service known not to be launching for the first time is not
    /// asked about again.
    func markLaunched(_ launched: [ServiceSlot]) {
        var slots: [ServiceSlot] = []
        for slot in launched
        where (slot.firstLaunchFlags ?? UInt32(SH_LAUNCH_FIRST_SERVICE_LAUNCH)) & UInt32(SH_LAUNCH_FIRST_SERVICE_LAUNCH)
            != 0
        {
            slots.append(slot)
        }
        guard !slots.isEmpty else { return }
        do { try firstLaunch.servicesDidLaunch(slots.map(\.id)) } catch {
            let ids = slots.map(\.id)
            log.error(
                "host", "cannot record the first launch of \(ids.joined(separator: ", ")): \(error)",
                event: .firstLaunchUnrecorded,
                .strings("services", ids), .string("path", error.path), .int("errno", Int(error.errno ?? 0)))
        }
    }

    /// After a launch event: the `policy: required` services that failed it, whose failure
    /// stops the launch. When it stops, or after didFinishLaunching (`finished`), every
    /// service that failed a launch event is stopped (it receives no more events) and logged;
    /// after a launch that succeeded the others are marked launched. A service whose
    /// failures belong to its supervisor (a worker: restarts, crash loops) is left to it.
    func stopFailedLaunches(finished: Bool) -> [String] {
        // Loops, not `filter`: a closure made here is checked for the main actor at each call
        // (three per service at every launch).
        var failed: [ServiceSlot] = []
        var launched: [ServiceSlot] = []
        launched.reserveCapacity(finished ? slots.count : 0)
        for slot in slots {
            if slot.launchFailed {
                // A worker's service: its supervisor handles the failure (restarts, crash loops).
                if isolation?.board.isIsolated(slot.id) != true { failed.append(slot) }
            } else if finished {
                launched.append(slot)
            }
        }
        let required = failed.filter { $0.configuration?.policy == .required }
        // Once the launch stops, or ends, no failed service hears anything more.
        let stopped = finished || !required.isEmpty ? failed : []
        for slot in stopped {
            let policy = slot.configuration?.policy == .required ? "required: the launch stops" : "optional"
            log.error(
                slot.id, "failed to launch; stopped (policy: \(policy)): it receives no more events",
                event: .serviceStopped, .string("reason", "launchFailed"))
        }
        if !stopped.isEmpty { dispatcher.setServices(slots.filter { slot in !stopped.contains { $0 === slot } }) }
        parked += stopped.map { ($0, "failed to launch") }
        if finished && required.isEmpty { markLaunched(launched) }
        return required.map(\.id)
    }

    // MARK: Late services

    /// Puts `arriving` among the running services in their places in the start order.
    func insertInStartOrder(_ arriving: [ServiceSlot]) {
        let order = Dictionary(startOrder.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        let position = { (slot: ServiceSlot) in order[slot.id] ?? order.count }
        dispatcher.setServices(
            (slots + arriving).enumerated().sorted { a, b in
                (position(a.element), a.offset) < (position(b.element), b.offset)
            }.map(\.element))
    }
}

/// Why a service starts after the host did: the flag its launch options carry.
enum LateStart {
    /// Restarted: a reload, a new worker, `service start` (`SH_LAUNCH_RESTART`).
    case restart
    /// A lazy service opened on its first event (`SH_LAUNCH_LAZY`).
    case lazy

    var flag: UInt32 { UInt32(self == .restart ? SH_LAUNCH_RESTART : SH_LAUNCH_LAZY) }
}
