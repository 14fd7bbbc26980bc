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
    var loader = PluginLoader()
    let trace: TraceWriter?
    var sequence: UInt64 = 0
    var nextAnswerID: UInt64 = 0
    /// Events waiting for completions, by answer id.
    var pendingAnswers: [UInt64: PendingAnswer] = [:]
    /// Whether termination began: requests after it are refused.
    public internal(set) var isTerminating = false
    /// Crash and hang isolation (issue 5), once ``startIsolation(_:)`` ran; see Isolation/.
    public internal(set) var isolation: IsolationSupervisor?
    // handlers[kind] lists the indexes of the services that asked for that kind, in
    // dispatch order, so a delivery never calls (or even looks at) a service that did not ask.
    var handlers = ContiguousArray(repeating: ContiguousArray<Int>(), count: Int(SH_EVENT_KIND_LIMIT))
    lazy var mailbox = Mailbox { [weak self] in
        DispatchQueue.main.async { MainActor.assumeIsolated { self?.drainMailbox() } }
    }

    /// A host with no services, logging to `log` and tracing to `trace`.
    public init(log: Log, trace: TraceWriter? = nil) {
        self.log = log
        self.trace = trace
    }

    /// The app's state.
    public var state: AppState { lifecycle.state }

    // MARK: Loading

    /// Loads the plugins of `directories`, attaches their services and returns every failure.
    ///
    /// Failures are also logged, one line per file. A directory that cannot be read throws.
    @discardableResult
    public func load(directories: [String], allowInsecure: Bool) throws(PluginScanner.DirectoryError) -> [LoadFailure] {
        let report = try loader.load(directories: directories, allowInsecure: allowInsecure)
        var failures = report.failures
        for failure in report.failures {
            // A directory or FIFO named *.so is skipped, not a broken plugin.
            if case .notRegularFile = failure.reason { log.warn("loader", failure.description) } else {
                log.error("loader", failure.description)
            }
        }
        for info in report.services {
            if let failure = attach(info) {
                log.error("loader", failure.description)
                failures.append(failure)
            }
        }
        return failures
    }

    /// Gives a service its host table; a service that declines is not added.
    private func attach(_ info: LoadedServiceInfo) -> LoadFailure? {
        let context = ServiceContext(id: info.metadata.id, log: log, state: stateCell, mailbox: mailbox)
        if let attach = info.descriptor.pointee.attach {
            tracker.register(ids: services.map(\.id) + [info.metadata.id])
            tracker.enter(service: services.count, event: .willFinishLaunching)
            let result = attach(info.descriptor, HostTable.make(for: context))
            tracker.leave()
            if result < 0 {
                return LoadFailure(path: info.path, reason: .attachFailed(id: info.metadata.id, result: result))
            }
        }
        let slot = ServiceSlot(info, context: context)
        // Stable: a new service goes after every service of equal or higher priority.
        let position = services.firstIndex { $0.metadata.priority < slot.metadata.priority } ?? services.count
        services.insert(slot, at: position)
        rebuildHandlers()
        log.debug("loader", "loaded \(slot.id) \(slot.metadata.version) from \(slot.path)")
        return nil
    }

    private func rebuildHandlers() {
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
    func deliver(_ kind: EventKind, data: UnsafeRawPointer?) {
        let list = handlers[Int(kind.rawValue)]
        if kind.isTearDown {
            for index in list.reversed() { call(index, kind, data) }
        } else {
            for index in list { call(index, kind, data) }
        }
    }

    /// Calls one service with one event and reports a failure; returns its result. `state`
    /// overrides the app state the event carries (a restarted service's catch-up events).
    @discardableResult
    func call(_ index: Int, _ kind: EventKind, _ data: UnsafeRawPointer?,
              completion: UnsafePointer<sh_completion>? = nil, state: AppState? = nil) -> Int32 {
        let service = services[index]
        sequence &+= 1
        var event = sh_event(
            size: UInt32(MemoryLayout<sh_event>.size), version: SH_EVENT_VERSION, kind: kind.rawValue,
            app_state: (state ?? lifecycle.state).rawValue, seq: sequence, data: data, completion: completion)
        tracker.enter(service: index, event: kind)
        let result = service.handleEvent(service.descriptor, &event)
        tracker.leave()
        if let trace {
            trace.record(seq: sequence, event: kind, service: service.id,
                         state: kind.stateAfter ?? lifecycle.state, result: result)
        }
        if result != SH_OK { report(result, from: service, for: kind) }
        return result
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
