import Dispatch
import ServiceABI

/// The running host: its services in dispatch order, the app state, and event delivery.
///
/// Every call into a service happens here, on the main actor (the process's main thread,
/// driven by the main dispatch queue), never two at once.
@MainActor
public final class Host {
    /// Where log lines go.
    public let log: Log
    /// What the main thread is doing, for the shutdown watchdog.
    public let tracker = CallTracker()
    /// The services, in dispatch order: priority (higher first), then load order.
    public private(set) var services: [ServiceSlot] = []

    private var lifecycle = AppLifecycle()
    private let stateCell = AppStateCell()
    private var loader = PluginLoader()
    private let trace: TraceWriter?
    private var sequence: UInt64 = 0
    // handlers[kind] lists the indexes of the services that asked for that kind, in
    // dispatch order, so a delivery never calls (or even looks at) a service that did not ask.
    private var handlers = ContiguousArray(repeating: ContiguousArray<Int>(), count: Int(SH_EVENT_KIND_LIMIT))
    private lazy var bus = NotificationBus { [weak self] in
        DispatchQueue.main.async { MainActor.assumeIsolated { self?.deliverNotifications() } }
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
        let index = services.count
        let context = ServiceContext(id: info.metadata.id, index: index, log: log, state: stateCell, bus: bus)
        if let attach = info.descriptor.pointee.attach {
            tracker.register(ids: services.map(\.id) + [info.metadata.id])
            tracker.enter(service: index, event: .willFinishLaunching)
            let result = attach(info.descriptor, HostTable.make(for: context))
            tracker.leave()
            if result < 0 {
                return LoadFailure(path: info.path, reason: .attachFailed(id: info.metadata.id, result: result))
            }
        }
        let slot = ServiceSlot(info)
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

    // MARK: Lifecycle

    /// Moves the app to `target` through the legal path, delivering each step to every
    /// service that handles it. `target == .notRunning` terminates.
    public func transition(to target: AppState) throws(TransitionError) {
        for kind in try lifecycle.steps(to: target) { deliverLifecycle(kind) }
    }

    /// Launches: willFinishLaunching, didFinishLaunching, then didBecomeActive.
    public func launch() throws(TransitionError) { try transition(to: .active) }

    /// Terminates from any running state: willResignActive, didEnterBackground and
    /// willTerminate as needed, each in reverse service order.
    public func terminate() throws(TransitionError) { try transition(to: .notRunning) }

    private func deliverLifecycle(_ kind: EventKind) {
        if kind.isDeliveredInNewState { applyState(kind) }
        if kind == .willFinishLaunching || kind == .didFinishLaunching {
            var options = sh_launch_options(
                size: UInt32(MemoryLayout<sh_launch_options>.size), version: SH_LAUNCH_OPTIONS_VERSION,
                flags: 0, reserved: 0, settings_json: nil, settings_len: 0)
            withUnsafePointer(to: &options) { deliver(kind, data: UnsafeRawPointer($0)) }
        } else {
            deliver(kind, data: nil)
        }
        if !kind.isDeliveredInNewState { applyState(kind) }
        log.debug("host", "\(kind.name): app is \(lifecycle.state.name)")
        deliverNotifications()
    }

    private func applyState(_ kind: EventKind) {
        lifecycle.apply(kind)
        stateCell.value = lifecycle.state
    }

    /// Delivers one event to every service that asked for it: no allocation unless tracing.
    private func deliver(_ kind: EventKind, data: UnsafeRawPointer?) {
        let list = handlers[Int(kind.rawValue)]
        if kind.isTearDown {
            for index in list.reversed() { call(index, kind, data) }
        } else {
            for index in list { call(index, kind, data) }
        }
    }

    @inline(__always)
    private func call(_ index: Int, _ kind: EventKind, _ data: UnsafeRawPointer?) {
        let service = services[index]
        sequence &+= 1
        var event = sh_event(
            size: UInt32(MemoryLayout<sh_event>.size), version: SH_EVENT_VERSION, kind: kind.rawValue,
            app_state: lifecycle.state.rawValue, seq: sequence, data: data, completion: nil)
        tracker.enter(service: index, event: kind)
        let result = service.handleEvent(service.descriptor, &event)
        tracker.leave()
        if let trace {
            trace.record(seq: sequence, event: kind, service: service.id,
                         state: kind.stateAfter ?? lifecycle.state, result: result)
        }
        if result != SH_OK { report(result, from: service, for: kind) }
    }

    private func report(_ result: Int32, from service: ServiceSlot, for kind: EventKind) {
        switch result {
        case Int32(SH_FALSE):
            log.warn(service.id, "answered false to \(kind.name); the other services were still called")
        case Int32(SH_UNSUPPORTED):
            log.debug(service.id, "answered unsupported to \(kind.name)")
        default:
            let message = "\(kind.name) failed (\(ResultCode.name(result)))"
            service.lastError = message
            log.error(service.id, message)
        }
    }

    // MARK: Notifications

    /// Delivers the notifications posted so far, on the main thread, in post order and
    /// service order; the poster does not receive its own. Posts made during delivery wait
    /// for the next round so a chatty pair cannot starve the main queue.
    public func deliverNotifications() {
        for pending in bus.takeAll() {
            pending.name.withCString { name in
                pending.sender.withCString { sender in
                    let deliverWith = { (json: UnsafePointer<CChar>?, length: Int) in
                        var notification = sh_notification(
                            size: UInt32(MemoryLayout<sh_notification>.size), version: SH_NOTIFICATION_VERSION,
                            name: name, sender: sender, json: json, json_len: length)
                        withUnsafePointer(to: &notification) { pointer in
                            for index in self.handlers[Int(EventKind.notification.rawValue)]
                            where self.services[index].id != pending.sender {
                                self.call(index, .notification, UnsafeRawPointer(pointer))
                            }
                        }
                    }
                    if let json = pending.json {
                        json.withUnsafeBufferPointer { buffer in
                            buffer.withMemoryRebound(to: CChar.self) { deliverWith($0.baseAddress, $0.count) }
                        }
                    } else {
                        deliverWith(nil, 0)
                    }
                }
            }
        }
    }
}
