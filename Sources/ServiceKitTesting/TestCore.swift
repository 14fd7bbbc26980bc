import Dispatch
internal import HostCore
import ServiceABI
import ServiceKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Runs `body` on the main actor, as the host runs everything that calls services, and returns
/// once the main queue handled what the call left for it (EmbeddedEventLoop's model, with the
/// main queue as the loop): directly on the main thread, else through the main queue, flushed
/// once more so that completions made meanwhile from other threads are in.
func onMain<T: Sendable>(_ body: @MainActor () -> T) -> T {
    if isMainThread() { return MainActor.assumeIsolated(body) }
    let result = DispatchQueue.main.sync { MainActor.assumeIsolated(body) }
    DispatchQueue.main.sync {}
    return result
}

/// Whether this is the process's main thread: its thread id is the process id (Linux), read
/// from /proc/thread-self ("PID/task/TID"), as Glibc does not export gettid to Swift.
private func isMainThread() -> Bool {
    var buffer = [CChar](repeating: 0, count: 64)
    let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard count > 0 else { return false }
    let parts = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: "/")
    return parts.count == 3 && parts[0] == parts[2]
}

/// TestHost's real host: a `Host` on a manual clock, without a state directory, with the
/// service under test attached in process. Every member runs on the main actor.
@MainActor
final class TestCore {
    let host: Host
    let clock = ManualClock()
    let id: String
    private let descriptor: UnsafePointer<sh_service>
    /// Every event delivered to the service, in order.
    private(set) var deliveries: [EventKind] = []
    /// What the service's launch events answered (SH_OK, SH_FALSE or an error).
    private(set) var launchResults: [Int32] = []
    /// Told of the completion of the next event that carries one: the service's result and JSON.
    var nextCompletion: (@Sendable (Int32, [UInt8]?) -> Void)?

    /// /dev/null, opened once, for the host's own log lines (the service's are recorded).
    private static let devNull = Glibc.open("/dev/null", O_WRONLY)

    init(_ service: any ApplicationService, id: String, recorder: TestRecorder) {
        self.id = id
        host = Host(
            log: Log(level: .error, descriptor: Self.devNull), clock: clock, notificationAuthorization: .prompt)
        // Filled in below: the descriptor's closure needs `self`, which needs the descriptor.
        weak var core: TestCore?
        descriptor = TestAttachments.descriptor(for: service, id: id) { event, dispatch in
            MainActor.assumeIsolated { core!.handle(event, dispatch) }
        }
        core = self
        let decide = host.decideAuthorization
        let attached = host.attachInProcess(
            id: id, events: TestAttachments.events(of: service),
            subscriptions: service is any NotificationReceiving ? ["*"] : [], descriptor: descriptor
        ) { TestHostFunctions($0, recorder: recorder, decide: decide) }
        precondition(attached == SH_OK, "TestHost: attaching \(id) failed (\(attached))")
    }

    /// Releases what the service was given; the host goes with the core. The completions handed
    /// to the service stay: a service may call one after its TestHost is gone (late, or a second
    /// time), and it must reach live memory then, as the host's own completions are readable for
    /// the process lifetime (events.h).
    func close() {
        TestAttachments.release(descriptor)
    }

    // MARK: The host's entry points, with the SDK's values

    /// `host run` with `--launch-url`, `--launch-activity`, `--launch-notification` and
    /// `--launch-state`.
    func launch(
        url: String?, activity: (type: String, webpageURL: String?, userInfo: JSONValue?)?, notification: String?,
        into state: AppState
    ) {
        var request = LaunchRequest(state: state)
        request.url = url.flatMap { try? OpenURLInput($0) }
        request.activity = activity.flatMap {
            try? UserActivityInput(type: $0.type, webpageURL: $0.webpageURL, userInfo: $0.userInfo)
        }
        request.notification = notification.flatMap { try? PushPayload(parsing: Array($0.utf8)) }
        _ = try? host.launch(request)
    }

    /// `host ctl request NAME` from `sender`.
    /// One health check of the service, judged by the policy TestHost holds; `answered` gets
    /// the status the host recorded. False when the host did not ask (a check is pending).
    func checkHealth(
        timeout: Double, unhealthyAfter: Int, restart: Bool, answered: @escaping (Int32) -> Void
    ) -> Bool {
        let policy = HealthCheckPolicy(
            interval: timeout, timeout: timeout, unhealthyAfter: unhealthyAfter,
            onUnhealthy: restart ? .restart : .report)
        return host.checkHealth(of: id, policy: policy) { answered($0.rawValue) }
    }

    /// The host's record of the service's health: status (nil before the first check), reason,
    /// unhealthy answers in a row, restarts.
    var health: (status: Int32?, reason: String?, unhealthyChecks: Int, restarts: Int) {
        let record = host.healthRecord(of: id)
        return (record.status?.rawValue, record.reason, record.unhealthyChecks, record.restarts)
    }

    func request(_ name: String, from sender: String, json: [UInt8]?) {
        host.request(name, from: sender, json: json)
    }

    /// `host ctl push`, with `--tap ACTION` for a response.
    func push(json: String, tap: String?) {
        guard let payload = try? PushPayload(parsing: Array(json.utf8)) else { return }
        host.push(payload, tap: tap) { _ in }
    }

    /// `host ctl open URL`: whether the service claimed it; nil for text that is not a URL.
    func open(_ url: String) -> Bool? {
        guard let input = try? OpenURLInput(url) else { return nil }
        return host.open(input).handledBy == id
    }

    /// `host ctl action ID`: whether the service handled it.
    func performAction(_ shortcut: String) -> Bool { host.performAction(shortcut).handledBy == id }

    /// `host ctl activity TYPE`: whether the service claimed it; nil for an activity the host refuses.
    func continueActivity(type: String, webpageURL: String?, userInfo: JSONValue?) -> Bool? {
        guard let input = try? UserActivityInput(type: type, webpageURL: webpageURL, userInfo: userInfo) else {
            return nil
        }
        return host.continueActivity(input).handledBy == id
    }

    /// `host ctl token HEX`.
    func register(hex: String) {
        guard let token = try? HostCore.DeviceToken(hex: hex) else { return }
        _ = host.register(token: token)
    }

    /// One event from the host to the service: recorded, its completion observed when a test
    /// waits for it, then the SDK's dispatch.
    private func handle(_ event: UnsafePointer<sh_event>, _ dispatch: (UnsafePointer<sh_event>) -> Int32) -> Int32 {
        guard let kind = EventKind(rawValue: event.pointee.kind) else { return dispatch(event) }
        deliveries.append(kind)
        var result: Int32
        if let completion = event.pointee.completion, let observe = nextCompletion {
            nextCompletion = nil
            let wrapper = UnsafeMutablePointer<sh_completion>.allocate(capacity: 1)
            wrapper.initialize(
                to: sh_completion(
                    size: UInt32(MemoryLayout<sh_completion>.size), version: SH_COMPLETION_VERSION,
                    host_data: Unmanaged.passRetained(CompletionObserver(completion, observe)).toOpaque(),
                    complete: { wrapper, result, json, length in
                        guard let data = wrapper?.pointee.host_data else { return }
                        let observer = Unmanaged<CompletionObserver>.fromOpaque(data).takeUnretainedValue()
                        observer.observe(result, json.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) })
                        observer.original.pointee.complete?(observer.original, result, json, length)
                    }))
            var copy = event.pointee
            copy.completion = UnsafePointer(wrapper)
            result = withUnsafePointer(to: &copy) { dispatch($0) }
        } else {
            result = dispatch(event)
        }
        if kind == .willFinishLaunching || kind == .didFinishLaunching { launchResults.append(result) }
        return result
    }

}

/// The host's completion behind a test's, and who is told of the answer first.
private final class CompletionObserver: Sendable {
    // `original` is the host's completion, readable for the process lifetime and [thread-safe] (events.h).
    nonisolated(unsafe) let original: UnsafePointer<sh_completion>
    let observe: @Sendable (Int32, [UInt8]?) -> Void
    init(_ original: UnsafePointer<sh_completion>, _ observe: @escaping @Sendable (Int32, [UInt8]?) -> Void) {
        self.original = original
        self.observe = observe
    }
}

extension TestCore {
    /// The moves of the host's lock and time sources, through the same ``AppDriver`` they use.
    func lockSession() { AppDriver(host: host, terminate: {}).lock() }
    func unlockSession() { AppDriver(host: host, terminate: {}).unlock(becomeActive: true) }
    func significantTimeChange() { AppDriver(host: host, terminate: {}).significantTimeChange() }

    /// The host answers each of `states` by request name; a built-in source's name without one,
    /// and a name of `previous` no longer there, as while that source is off.
    func setCurrentStates(_ states: [String: JSONValue], previous: [String]) {
        let driver = AppDriver(host: host, terminate: {})
        for name in SystemSources.stateRequests.union(previous).union(states.keys) {
            if let state = states[name] {
                driver.setCurrentState(name, state)
            } else {
                let source = name.split(separator: ".").first.map(String.init) ?? name
                driver.setCurrentStateUnavailable(name, reason: "the \(source) source is off: TestHost runs no sources")
            }
        }
    }
}
