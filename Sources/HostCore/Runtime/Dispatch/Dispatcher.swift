import CSystem
import Dispatch
import ServiceABI

/// Calls services: the per-event-kind handler lists, one delivery to every handler, one call
/// to one service, and what follows a call (the trace line, what a failure means).
///
/// Everything runs on the main thread, never two calls at once and never re-entrantly. The
/// hot path is ``deliver(_:data:)``: its per-event state lives behind a raw pointer (plain
/// loads and stores, no dynamic exclusivity checks), the handlers are a flat table of C
/// function pointers, and the loop over them is C (CSystem's `csystem_dispatch_forward`), so a
/// lifecycle event to N services costs N indirect calls, a tracker store each, and no
/// allocation. Only a traced, timed or failed call takes the slow
/// path: with the trace, a watch client or statistics on, each call costs one more clock read
/// (its end is the next call's start) and a few adds into the service's preallocated row.
@MainActor
final class Dispatcher {
    /// The services in dispatch order, as the handler table indexes them.
    private(set) var services: [ServiceSlot] = []
    let log: Log
    let trace: TraceWriter?
    let tracker: CallTracker
    /// Figures per service and event kind (while on) and start-up costs (always).
    let stats = ServiceStats()
    /// Whether every call adds to ``stats`` (`--stats`, `--metrics-listen`).
    private(set) var statisticsEnabled = false

    // The state a delivery reads and writes, allocated once for the dispatcher's lifetime.
    private struct Hot {
        var table = DispatchTable()
        var sequence: UInt64 = 0
        var appState: Int32 = AppState.notRunning.rawValue
        // Deliveries in progress: the table must not be replaced under one. Counted in debug
        // builds only (the tests): in release the two stores per delivery are the dispatcher's
        // largest cost at one service.
        var depth = 0
        // Whether calls are timed and observed (trace, watch clients, statistics): the one
        // branch a delivery takes per call when all of it is off.
        var observing = false
        // Whether trace lines go anywhere (a file, a watch client): statistics alone skip them.
        var tracing = false
    }
    // Owned by this dispatcher (freed never: one dispatcher lives as long as its host).
    private let hot: UnsafeMutablePointer<Hot>

    init(log: Log, trace: TraceWriter?, tracker: CallTracker) {
        self.log = log
        self.trace = trace
        self.tracker = tracker
        hot = .allocate(capacity: 1)
        hot.initialize(to: Hot())
        refreshObserving()
        // A watch client coming or going (on a connection's queue) flips the branch on the main thread.
        trace?.watchers?.whenChanged { [weak self] in
            DispatchQueue.main.async { MainActor.assumeIsolated { self?.refreshObserving() } }
        }
    }

    /// The app state events carry (`sh_event.app_state`); the application sets it as it moves.
    var appState: AppState {
        get { AppState(rawValue: hot.pointee.appState) ?? .notRunning }
        set { hot.pointee.appState = newValue.rawValue }
    }

    /// The sequence number of the last call.
    var sequence: UInt64 { hot.pointee.sequence }

    /// Makes `slots` the services, in that order, and rebuilds the handler table.
    /// Never called from inside a delivery (nothing a service can do changes the list).
    func setServices(_ slots: [ServiceSlot]) {
        assert(hot.pointee.depth == 0, "the service list changed during a delivery")
        services = slots
        rebuildTable()
        tracker.register(ids: slots.map(\.id))
        servicesDidChange?()
        listDidChange?()
    }

    /// Told each time the service list changed (``Host/servicesDidChange``).
    var servicesDidChange: (() -> Void)?
    /// The host's own observer of the list (its health checks), set once in `Host.init`.
    var listDidChange: (() -> Void)?

    private func rebuildTable() {
        let old = hot.pointee.table
        let stats = self.stats
        hot.pointee.table = DispatchTable(services, rows: statisticsEnabled ? { stats.row(for: $0.id) } : nil)
        old.deallocate()
        receiverIDs = [:]
    }

    // The ids of each kind's handlers in dispatch order, built at the first event of the kind
    // after the table changed: a reply names its receivers without an array built per event,
    // and a start does not build them for every kind (~1 µs per service before `active`).
    private var receiverIDs: [UInt32: [String]] = [:]

    /// The ids of the services that handle `kind`, in dispatch order (one array per kind,
    /// shared, not built per call).
    func receivers(_ kind: EventKind) -> [String] {
        if let known = receiverIDs[kind.rawValue] { return known }
        var ids: [String] = []
        for handler in hot.pointee.table.handlers(kind.rawValue) { ids.append(services[handler.index].id) }
        receiverIDs[kind.rawValue] = ids
        return ids
    }

    /// Starts counting every call into ``stats``.
    func enableStatistics() {
        assert(hot.pointee.depth == 0, "statistics switched on during a delivery")
        guard !statisticsEnabled else { return }
        statisticsEnabled = true
        rebuildTable()
        refreshObserving()
    }

    /// Re-reads whether calls are observed: after a watch client came or went.
    func refreshObserving() {
        hot.pointee.tracing = trace?.isActive == true
        hot.pointee.observing = statisticsEnabled || hot.pointee.tracing
    }

    /// The indexes of the services that handle `kind`, in dispatch order.
    func handlers(_ kind: EventKind) -> [Int] { hot.pointee.table.handlers(kind.rawValue).map(\.index) }

    /// Whether any service handles `kind`.
    func isHandled(_ kind: EventKind) -> Bool { !hot.pointee.table.handlers(kind.rawValue).isEmpty }

    /// Delivers `kind` to every service that asked for it, in dispatch order (reverse for
    /// the events that take the app down). No allocation unless tracing or a call fails.
    func deliver(_ kind: EventKind, data: UnsafeRawPointer?) {
        let hot = self.hot
        let list = hot.pointee.table.handlers(kind.rawValue)
        guard let first = list.baseAddress, !list.isEmpty else { return }
        #if DEBUG
            hot.pointee.depth += 1
        #endif
        var event = sh_event(
            size: UInt32(MemoryLayout<sh_event>.size), version: SH_EVENT_VERSION, kind: kind.rawValue,
            app_state: hot.pointee.appState, seq: hot.pointee.sequence, data: data, completion: nil)
        let tracker = self.tracker
        let sentinel = tracker.begin(kind)
        if hot.pointee.observing {
            deliverObserved(list, kind, &event, sentinel)
        } else if list.count == 1 {
            // One handler (most notification kinds have one): the call inline, no loop to enter.
            event.seq &+= 1
            tracker.enter(first.pointee.index, sentinel)
            let result = first.pointee.handle(first.pointee.service, &event)
            if result != SH_OK { failed(first.pointee, kind, seq: event.seq, result: result, sentinel) }
        } else {
            // The loop itself is C (CSystem's dispatch.c: why there), one function per direction;
            // it returns at a call that did not answer OK, handled here, and goes on after it.
            let current = tracker.currentIndex
            // `if let`, not `Optional.map`: the closure would be main-actor isolated, and the release
            // build checked the executor (`swift_task_isCurrentExecutor`) at every delivery with a sentinel.
            var slot: UnsafeMutablePointer<Int64>?
            if let sentinel { slot = Sentinel.serviceWord(sentinel) }
            var result: Int32 = 0
            if kind.isTearDown {
                var below = list.count
                while true {
                    below = csystem_dispatch_backward(first, below, &event, current, slot, &result)
                    if below < 0 { break }
                    failed(first[below], kind, seq: event.seq, result: result, sentinel)
                }
            } else {
                var from = 0
                while true {
                    from = csystem_dispatch_forward(first, from, list.count, &event, current, slot, &result)
                    if from == list.count { break }
                    failed(first[from], kind, seq: event.seq, result: result, sentinel)
                    from += 1
                }
            }
        }
        tracker.leave(sentinel)
        hot.pointee.sequence = event.seq
        #if DEBUG
            hot.pointee.depth -= 1
        #endif
    }

    /// A call of an unobserved delivery did not answer OK (the C loop returned at it).
    @inline(never)
    private func failed(
        _ entry: DispatchEntry, _ kind: EventKind, seq: UInt64, result: Int32, _ sentinel: UnsafeMutableRawPointer?
    ) {
        tracker.leave(sentinel)
        finishCall(entry.index, kind, seq: seq, result: result, scene: nil)
    }

    /// A delivery while calls are observed (statistics, a trace, a watch client): every call
    /// takes the slow path, with one clock read per call (each call's end is the next one's start).
    @inline(never)
    private func deliverObserved(
        _ list: UnsafeBufferPointer<DispatchEntry>, _ kind: EventKind, _ event: inout sh_event,
        _ sentinel: UnsafeMutableRawPointer?
    ) {
        var position = kind.isTearDown ? list.count - 1 : 0
        let step = kind.isTearDown ? -1 : 1
        var start = Clock.nanoseconds()
        for _ in 0..<list.count {
            let entry = list[position]
            position += step
            event.seq &+= 1
            tracker.enter(entry.index, sentinel)
            let result = entry.handle(entry.service, &event)
            tracker.leave(sentinel)
            start = observed(entry, kind, seq: event.seq, result: result, start: start)
        }
    }

    /// After a call of an observed delivery: its figures, its trace line, what a failure means. Returns the next call's start: the call's end, or a fresh read when a line was
    /// written (so writing it is not counted against the next service).
    @inline(never)
    private func observed(_ entry: DispatchEntry, _ kind: EventKind, seq: UInt64, result: Int32, start: UInt64)
        -> UInt64
    {
        let end = Clock.nanoseconds()
        if let row = entry.stats {
            ServiceStats.record(row, kind: kind.rawValue, nanoseconds: end &- start, failed: result < 0)
        }
        // Statistics alone and a call that went well: nothing else to do (no Swift object touched).
        guard hot.pointee.tracing || result != SH_OK else { return end }
        let wrote = finishCall(
            entry.index, kind, seq: seq, result: result, scene: nil, start: start, duration: end &- start)
        return wrote ? Clock.nanoseconds() : end
    }

    /// Calls service `index` with one event and reports a failure; returns its result and
    /// the call's sequence number. `state` overrides the app state the event carries (a
    /// late service's catch-up); `scene` names a scene event's scene for the trace.
    @discardableResult
    func call(
        _ index: Int, _ kind: EventKind, _ data: UnsafeRawPointer?,
        completion: UnsafePointer<sh_completion>? = nil, scene: String? = nil,
        state: AppState? = nil
    ) -> (result: Int32, seq: UInt64) {
        let service = services[index]
        hot.pointee.sequence &+= 1
        let seq = hot.pointee.sequence
        var event = sh_event(
            size: UInt32(MemoryLayout<sh_event>.size), version: SH_EVENT_VERSION, kind: kind.rawValue,
            app_state: state?.rawValue ?? hot.pointee.appState, seq: seq, data: data, completion: completion)
        #if DEBUG
            hot.pointee.depth += 1
        #endif
        let sentinel = tracker.begin(kind)
        // Not the hot path (launch, catch-up, answers, scenes): always timed, for `blame`.
        let start = Clock.nanoseconds()
        tracker.enter(index, sentinel)
        let result = service.handleEvent(service.descriptor, &event)
        tracker.leave(sentinel)
        let duration = Clock.nanoseconds() &- start
        #if DEBUG
            hot.pointee.depth -= 1
        #endif
        if statisticsEnabled {
            ServiceStats.record(
                stats.row(for: service.id), kind: kind.rawValue, nanoseconds: duration, failed: result < 0)
        }
        // blame's launch cost: the launch events of the latest start (a catch-up starts over).
        if kind == .willFinishLaunching { service.startup.launch = duration }
        if kind == .didFinishLaunching { service.startup.launch &+= duration }
        finishCall(index, kind, seq: seq, result: result, scene: scene, state: state, start: start, duration: duration)
        return (result, seq)
    }

    /// After a call: the trace line, and what a failure means. Returns whether it wrote a line.
    /// `state` is the state the event carried when the caller chose it (a late service's catch-up).
    @discardableResult
    private func finishCall(
        _ index: Int, _ kind: EventKind, seq: UInt64, result: Int32, scene: String?,
        state: AppState? = nil, start: UInt64 = 0, duration: UInt64 = 0
    ) -> Bool {
        let service = services[index]
        let traced = trace?.isActive == true
        if traced, let trace {
            // The state after the event: a did-event or a launch event is delivered in it
            // (a launch into the background stays in the background); a will-event leads to it.
            let carried = state ?? appState
            trace.record(
                seq: seq, event: kind, service: service.id,
                state: kind.isDeliveredInNewState ? carried : kind.stateAfter ?? carried,
                result: result, scene: scene, time: start == 0 ? 0 : start &- Clock.start, duration: duration)
        }
        guard result != SH_OK else { return traced }
        switch result {
        case Int32(SH_FALSE):
            // openURL and continueUserActivity answer false to pass: that is not a failure.
            if kind.stateAfter != nil {
                log.warn(
                    service.id, "answered false to \(kind.name); the other services were still called",
                    event: .eventAnsweredFalse, .string("event", kind.name))
            }
        case Int32(SH_UNSUPPORTED):
            log.debug(service.id, "answered unsupported to \(kind.name)")
        default:
            let message = "\(kind.name) failed (\(ResultCode.name(result)))"
            service.lastError = message
            log.error(
                service.id, message, event: .eventFailed, .string("event", kind.name),
                .string("result", ResultCode.name(result)))
        }
        // A launch answer that is neither OK nor FALSE (an error, or a number the ABI does not
        // define, such as 12345) is a failed launch: the policies treat it as one.
        if kind == .willFinishLaunching || kind == .didFinishLaunching, result != SH_FALSE {
            service.launchFailed = true
        }
        return true
    }
}
