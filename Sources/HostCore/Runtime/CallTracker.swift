import Synchronization

/// Which service the main thread is inside, and for which event, readable from any thread.
///
/// The shutdown watchdog reads it to name the service that did not return; the dispatch
/// path only stores two integers per call (no locks, no allocation).
public final class CallTracker: Sendable {
    private let service = Atomic<Int>(-1)
    private let event = Atomic<UInt32>(0)
    // Written on the main thread when services are loaded; read by the watchdog thread.
    private let ids = Mutex<[String]>([])

    /// An idle tracker.
    public init() {}

    func register(ids newIDs: [String]) { ids.withLock { $0 = newIDs } }

    @inline(__always) func enter(service index: Int, event kind: EventKind) {
        event.store(kind.rawValue, ordering: .relaxed)
        service.store(index, ordering: .releasing)
    }

    @inline(__always) func leave() { service.store(-1, ordering: .releasing) }

    /// The service id and event name of the call in progress, or nil between calls.
    public var current: (service: String, event: String)? {
        let index = service.load(ordering: .acquiring)
        guard index >= 0 else { return nil }
        let name = EventKind(rawValue: event.load(ordering: .relaxed))?.name ?? "an event"
        let id = ids.withLock { index < $0.count ? $0[index] : "service #\(index)" }
        return (id, name)
    }
}
