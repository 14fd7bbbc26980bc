import CSystem
import Synchronization

/// Which service the main thread is inside, and for which event, readable from any thread.
///
/// The shutdown watchdog reads it to name the service that did not return; the dispatch
/// path only stores two integers per call (no locks, no allocation). The hang watchdog
/// (issue 5) also reads a call counter, and a memory-mapped sentinel gets the same two
/// integers with plain stores, so the next run can name the call a crash interrupted.
// Unchecked: `currentIndex` is a raw word that only C atomics touch (a releasing store on the
// main thread, acquiring loads elsewhere: CSystem.h); every other field is an Atomic or Locked.
public final class CallTracker: @unchecked Sendable {
    // The service index being called (-1: none), in C-allocated memory because the dispatcher's
    // C loop stores it too (`csystem_dispatch_forward`); C atomics (CSystem.h) on both sides.
    // Allocated once, freed at deinit.
    let currentIndex: UnsafeMutablePointer<Int> = {
        let word = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        word.initialize(to: -1)
        return word
    }()
    private let event = Atomic<UInt32>(0)
    // Counts calls, so the hang watchdog tells one long call from two short ones. Written only
    // on the main thread, hence a load and a store rather than a locked add.
    private let calls = Atomic<UInt64>(0)
    // The mapped sentinel page (Sentinel) as an address, set once when supervision starts; 0 before.
    private let sentinel = Atomic<UInt>(0)
    // The ids of the service indexes, and where each ends in the sentinel page's list (empty
    // without a sentinel). Written on the main thread when services are loaded or attached;
    // read by the watchdog thread.
    private let registered = Locked<(ids: [String], sentinelEnds: [Int])>(([], []))
    // Set by the hang watchdog while a call is past its deadline.
    private let stuckCall = Locked<StuckCall?>(nil)
    // Told when a call becomes stuck (the control snapshot answers the requests waiting for it).
    private let stuckObservers = Locked<[@Sendable () -> Void]>([])

    /// An idle tracker.
    public init() {}

    deinit { currentIndex.deallocate() }

    /// The services' ids, in dispatch order.
    func register(ids newIDs: [String]) {
        let page = sentinelPage
        registered.withLock { $0 = (newIDs, page.map { Sentinel.register($0, ids: newIDs) } ?? []) }
    }

    /// Names `id` as service `index` for an attach: the running services keep the indexes
    /// 0..<index that ``register(ids:)`` gave them, and only `id` is written (all of them at
    /// every attach made a start quadratic in its plugins).
    func register(attaching id: String, at index: Int) {
        let page = sentinelPage
        registered.withLock { registered in
            registered.ids.removeSubrange(min(index, registered.ids.count)...)
            registered.ids.append(id)
            if let page { Sentinel.register(page, id: id, index: index, ends: &registered.sentinelEnds) }
        }
    }

    /// Starts a delivery of `kind` (one or more calls): returns the sentinel page, if any, for
    /// ``enter(_:_:)`` and ``leave(_:)``, so the calls of one delivery read it once.
    @inline(__always) func begin(_ kind: EventKind) -> UnsafeMutableRawPointer? {
        // Relaxed: the watchdog and shutdown threads read it only after an acquiring load of
        // `service`, whose releasing store in `enter` follows this one, so they see this kind
        // (or a newer one) with the index it goes with.
        event.store(kind.rawValue, ordering: .relaxed)
        // One count per delivery: the hang watchdog watches (count, service) pairs, and a
        // delivery calls each service at most once. Relaxed, and a load and a store rather than
        // an atomic add: only the main thread writes it, and `enter`'s release publishes it.
        calls.store(calls.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        let page = sentinelPage
        // Plain stores into the mapped page: no reader in this process (the next run reads the
        // file after this one died, and the kernel's page cache orders nothing it needs).
        if let page { Sentinel.record(page, event: kind.rawValue) }
        return page
    }

    /// The main thread enters service `index` (of the delivery ``begin(_:)`` started).
    @inline(__always) func enter(_ index: Int, _ sentinel: UnsafeMutableRawPointer?) {
        // Releasing: the hang watchdog (signal thread) and the shutdown watchdog read it from
        // another thread and must see `event` and `calls` as stored before it. On x86-64 a
        // release store is a plain `mov` (the disassembly of `Dispatcher.deliver` shows it);
        // on arm64 it is an `stlr`.
        csystem_store_release(currentIndex, index)
        if let sentinel { Sentinel.record(sentinel, service: index) }
    }

    /// The main thread is back in the host.
    @inline(__always) func leave(_ sentinel: UnsafeMutableRawPointer?) {
        // Releasing, as in `enter`: another thread reads it.
        csystem_store_release(currentIndex, -1)
        if let sentinel { Sentinel.record(sentinel, service: -1) }
    }

    /// One call outside a delivery (attach): ``begin(_:)`` and ``enter(_:_:)`` together.
    func enter(service index: Int, event kind: EventKind) { enter(index, begin(kind)) }

    /// Leaves a call entered with ``enter(service:event:)``.
    func leave() { leave(sentinelPage) }

    /// The service id and event name of the call in progress, or nil between calls.
    public var current: (service: String, event: String)? {
        let index = csystem_load_acquire(currentIndex)
        guard index >= 0 else { return nil }
        let name = EventKind(rawValue: event.load(ordering: .relaxed))?.name ?? "an event"
        return (id(at: index), name)
    }

    // MARK: Supervision (issue 5)

    /// A call the hang watchdog found past its deadline.
    public struct StuckCall: Sendable, Equatable {
        /// The service and the event it has not returned from.
        public var service: String, event: String
        /// When the watchdog first saw the call (CLOCK_MONOTONIC seconds).
        public var since: Double
        /// The deadline it missed, in seconds.
        public var deadline: Double
    }

    /// The call past its deadline, if any (set by the hang watchdog).
    public var stuck: StuckCall? {
        get { stuckCall.withLock { $0 } }
        set {
            stuckCall.withLock { $0 = newValue }
            if newValue != nil { for observer in stuckObservers.withLock({ $0 }) { observer() } }
        }
    }

    /// Calls `observer` (on the watchdog's thread) each time a call becomes stuck.
    func whenStuck(_ observer: @escaping @Sendable () -> Void) {
        stuckObservers.withLock { $0.append(observer) }
    }

    /// The call in progress as numbers: service index (-1: none), event kind and the call counter.
    func sample() -> (service: Int, event: UInt32, call: UInt64) {
        let index = csystem_load_acquire(currentIndex)
        return (index, event.load(ordering: .relaxed), calls.load(ordering: .relaxed))
    }

    /// The id of the service at `index`.
    func id(at index: Int) -> String {
        registered.withLock { index < $0.ids.count ? $0.ids[index] : "service #\(index)" }
    }

    /// Starts writing calls to the sentinel's mapped page.
    func attach(_ sentinel: Sentinel) {
        registered.withLock { $0.sentinelEnds = Sentinel.register(sentinel.page, ids: $0.ids) }
        self.sentinel.store(UInt(bitPattern: sentinel.page), ordering: .releasing)
    }

    // Relaxed: the main thread stored it (``attach(_:)``, before any call it tracks), and only
    // the main thread reads it here.
    @inline(__always) private var sentinelPage: UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: sentinel.load(ordering: .relaxed))
    }
}
