import Dispatch
import ServiceABI

/// The running host: its services in dispatch order, the app state, and event delivery.
///
/// Every call into a service happens here, on the main actor (the process's main thread,
/// driven by the main dispatch queue), never two at once and never re-entrantly.
@MainActor
public final class Host {
    /// Where log lines go.
    public let log: Log
    /// What the main thread is doing, for the shutdown watchdog and `ctl state`.
    public let tracker = CallTracker()
    /// The services, in dispatch order: priority (higher first), then load order.
    public internal(set) var services: [ServiceSlot] = []
    /// How long the host waits for a completion (background fetch and every other answer).
    public var answerTimeout: Double = 30
    /// The last device token delivered, shown by `ctl state` and given to services that ask.
    public internal(set) var deviceToken: DeviceToken?

    var lifecycle = AppLifecycle()
    let stateCell = AppStateCell()
    let trace: TraceWriter?
    /// The configuration file in force (empty without one).
    public internal(set) var configuration = HostConfiguration()
    /// Where stores and first-launch marks live; nil runs without persistence.
    public let stateDirectory: StateDirectory?
    /// First-launch detection (seed 004).
    public let firstLaunch: FirstLaunch
    /// What `reload` rescans.
    public var loadSettings = LoadSettings(directories: [])
    /// Told READY, RELOADING and STOPPING when systemd supervises the host.
    public var notifier: SystemdNotifier?
    var sequence: UInt64 = 0
    var nextAnswerID: UInt64 = 0
    /// Events waiting for completions, by answer id.
    var pendingAnswers: [UInt64: PendingAnswer] = [:]
    /// Whether termination began: requests after it are refused.
    public internal(set) var isTerminating = false
    /// The connected scenes; once one connected, the app's state follows them (Scenes/).
    public let scenes = SceneTable()
    /// Takes a plugin file instead of this process (issue 5): its services running in a
    /// worker process, or none (safe mode); nil, or a nil answer, loads the file here.
    var placement: ((PluginInspector.Inspected) throws(LoadFailure.Reason) -> [LoadedServiceInfo]?)?
    /// Crash and hang isolation (issue 5), once ``startIsolation(_:)`` ran; see Isolation/.
    public internal(set) var isolation: IsolationSupervisor?
    // handlers[kind] lists the indexes of the services that asked for that kind, in
    // dispatch order, so a delivery never calls (or even looks at) a service that did not ask.
    var handlers = ContiguousArray(repeating: ContiguousArray<Int>(), count: Int(SH_EVENT_KIND_LIMIT))
    lazy var mailbox = Mailbox { [weak self] in
        DispatchQueue.main.async { MainActor.assumeIsolated { self?.drainMailbox() } }
    }

    /// A host with no services, logging to `log` and tracing to `trace`, keeping state in
    /// `stateDirectory` (none: stores answer "unsupported" and every launch is a first one
    /// unless `firstLaunch` says otherwise).
    public init(log: Log, trace: TraceWriter? = nil, stateDirectory: StateDirectory? = nil,
                firstLaunch: FirstLaunch = .neverFirst()) {
        self.log = log
        self.trace = trace
        self.stateDirectory = stateDirectory
        self.firstLaunch = firstLaunch
    }

    /// The app's state.
    public var state: AppState { lifecycle.state }

    // MARK: Services

    /// Builds a slot for a loaded service and gives it its host table; nil when its
    /// `attach` declines (the failure is returned through `failure`).
    func attach(_ info: LoadedServiceInfo, failure: inout LoadFailure?) -> ServiceSlot? {
        let id = info.metadata.id
        let context = ServiceContext(id: id, log: log, state: stateCell, mailbox: mailbox, stateDirectory: stateDirectory)
        if let attach = info.descriptor.pointee.attach {
            tracker.register(ids: services.map(\.id) + [id])
            tracker.enter(service: services.count, event: .willFinishLaunching)
            let result = attach(info.descriptor, HostTable.make(for: context))
            tracker.leave()
            if result < 0 {
                failure = LoadFailure(path: info.path, reason: .attachFailed(id: id, result: result))
                return nil
            }
        }
        log.debug("loader", "loaded \(id) \(info.metadata.version) from \(info.path)")
        return ServiceSlot(info, context: context, configuration: configuration.services[id])
    }

    /// Makes `slots` the running services, in that order, and rebuilds the per-event lists.
    func setServices(_ slots: [ServiceSlot]) {
        services = slots
        for kind in handlers.indices { handlers[kind].removeAll(keepingCapacity: true) }
        for (index, service) in services.enumerated() {
            for kind in handlers.indices where service.metadata.events.contains(rawKind: UInt32(kind)) {
                handlers[kind].append(index)
            }
        }
        tracker.register(ids: services.map(\.id))
    }

    // MARK: Delivery

    /// The indexes of the services that handle `kind`, in dispatch order.
    func handlerIndexes(_ kind: EventKind) -> ContiguousArray<Int> { handlers[Int(kind.rawValue)] }

    /// Delivers `kind` to every service that asked for it: no allocation unless tracing.
    ///
    /// The hot path: the per-event state is read into locals once, because every access to a
    /// class's stored property pays a dynamic exclusivity check, and a call that succeeds
    /// untraced touches nothing else.
    func deliver(_ kind: EventKind, data: UnsafeRawPointer?) {
        let list = handlers[Int(kind.rawValue)]
        let services = self.services
        let state = lifecycle.state.rawValue
        let tracker = self.tracker
        let slowPath = trace != nil
        var seq = sequence
        let reverse = kind.isTearDown
        var position = reverse ? list.count - 1 : 0
        while position >= 0 && position < list.count {
            let index = list[position]
            position += reverse ? -1 : 1
            seq &+= 1
            let service = services[index]
            var event = sh_event(
                size: UInt32(MemoryLayout<sh_event>.size), version: SH_EVENT_VERSION, kind: kind.rawValue,
                app_state: state, seq: seq, data: data, completion: nil)
            tracker.enter(service: index, event: kind)
            let result = service.handleEvent(service.descriptor, &event)
            tracker.leave()
            if slowPath || result != SH_OK { finishCall(service, kind, seq: seq, result: result) }
        }
        sequence = seq
    }

    /// Calls one service with one event and reports a failure; returns its result.
    /// `scene` names the scene of a scene event, for the trace; `state` overrides the app
    /// state the event carries (a restarted service's catch-up events).
    @discardableResult
    func call(_ index: Int, _ kind: EventKind, _ data: UnsafeRawPointer?,
              completion: UnsafePointer<sh_completion>? = nil, scene: String? = nil, state: AppState? = nil) -> Int32 {
        let service = services[index]
        sequence &+= 1
        var event = sh_event(
            size: UInt32(MemoryLayout<sh_event>.size), version: SH_EVENT_VERSION, kind: kind.rawValue,
            app_state: (state ?? lifecycle.state).rawValue, seq: sequence, data: data, completion: completion)
        tracker.enter(service: index, event: kind)
        let result = service.handleEvent(service.descriptor, &event)
        tracker.leave()
        finishCall(service, kind, seq: sequence, result: result, scene: scene)
        return result
    }

    /// After a call: the trace line, and what a failure means.
    private func finishCall(_ service: ServiceSlot, _ kind: EventKind, seq: UInt64, result: Int32, scene: String? = nil) {
        if let trace {
            trace.record(seq: seq, event: kind, service: service.id,
                         state: kind.stateAfter ?? lifecycle.state, result: result, scene: scene)
        }
        if result != SH_OK { report(result, from: service, for: kind) }
        if result < 0 && (kind == .willFinishLaunching || kind == .didFinishLaunching) { service.launchFailed = true }
    }

    private func report(_ result: Int32, from service: ServiceSlot, for kind: EventKind) {
        switch result {
        case Int32(SH_FALSE):
            // openURL and continueUserActivity answer false to pass: that is not a failure.
            if kind.stateAfter != nil {
                log.warn(service.id, "answered false to \(kind.name); the other services were still called")
            }
        case Int32(SH_UNSUPPORTED):
            log.debug(service.id, "answered unsupported to \(kind.name)")
        default:
            let message = "\(kind.name) failed (\(ResultCode.name(result)))"
            service.lastError = message
            log.error(service.id, message)
        }
    }

    // MARK: Answers

    /// Delivers `kind` with a completion to each service in `indexes`, then calls `finish`
    /// on the main thread once every service completed or `answerTimeout` passed. The main
    /// thread is never blocked while waiting.
    func deliverWithCompletions(_ kind: EventKind, data: UnsafeRawPointer?, to indexes: ContiguousArray<Int>,
                                arena: EventArena, finish: @escaping (PendingAnswer) -> Void) {
        nextAnswerID &+= 1
        // The arena must live until the answers are in: services may read the data until they complete.
        let seq = sequence &+ 1
        let pending = PendingAnswer(id: nextAnswerID, event: kind) { [weak self, trace] answer in
            self?.pendingAnswers[answer.id] = nil
            for (service, result) in answer.answers where result == nil {
                trace?.recordCompletion(seq: seq, event: kind, service: service, result: nil)
            }
            withExtendedLifetime(arena) { finish(answer) }
        }
        var failed: [String] = []
        for index in indexes {
            let record = CompletionRecord(answerID: pending.id, serviceID: services[index].id, event: kind, log: log) {
                [weak self, trace] record, result, _ in
                trace?.recordCompletion(seq: seq, event: record.event, service: record.serviceID, result: result)
                DispatchQueue.main.async {
                    MainActor.assumeIsolated { self?.pendingAnswers[record.answerID]?.answer(record.serviceID, result) }
                }
            }
            pending.add(record)
            // A negative result says the service will not complete: it counts as failed.
            if call(index, kind, data, completion: UnsafePointer(record.table)) < 0, record.expire() {
                failed.append(record.serviceID)
            }
        }
        pendingAnswers[pending.id] = pending
        for service in failed { pending.answer(service, Int32(SH_ERROR)) }
        pending.start(timeout: answerTimeout, log: log)
    }

}

extension Host {
    /// Delivers `kind` `times` times without moving the app's state: the dispatcher's cost
    /// alone, for `scripts/bench`. Not for services: real events go through `transition(to:)`.
    @_spi(Benchmark)
    public func benchmarkDeliver(_ kind: EventKind, times: Int) {
        for _ in 0..<times { deliver(kind, data: nil) }
    }
}
