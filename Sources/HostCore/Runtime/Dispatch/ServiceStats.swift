import ServiceABI

/// Per-service, per-event-kind figures: deliveries, failures, total and longest duration, and
/// a fixed-bucket histogram, in flat memory allocated once per service when statistics are
/// on, so the dispatch path only adds to integers (no allocation, no dictionary, no lock).
///
/// A service's row is `kinds` cells of `cellWords` `UInt64`s: count, failures, total ns,
/// max ns, then one count per bucket (≤ 1 µs, ≤ 10 µs, … ≤ 1 s, more). Rows are never freed:
/// a stopped or replaced service keeps its figures, and a service that comes back under the
/// same id adds to them. Main thread only, like the dispatcher that writes them.
@MainActor
final class ServiceStats {
    /// Event kinds with a cell: every kind the vocabulary names (0 is unused).
    nonisolated static let kinds = Int(EventKind.allCases.map(\.rawValue).max()!) + 1
    /// The histogram's upper bounds in nanoseconds; a last bucket takes the rest.
    nonisolated static let bounds: [UInt64] = [
        1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000,
    ]
    nonisolated static let cellWords = 4 + 8
    private nonisolated static let count = 0, failures = 1, total = 2, longest = 3, buckets = 4

    // Allocated on first sight of an id, never freed (figures outlive the service).
    private var rows: [String: UnsafeMutablePointer<UInt64>] = [:]
    /// Ids in the order they were first seen.
    private(set) var ids: [String] = []

    /// The row of service `id`, allocated zeroed the first time.
    func row(for id: String) -> UnsafeMutablePointer<UInt64> {
        if let row = rows[id] { return row }
        let words = Self.kinds * Self.cellWords
        let row = UnsafeMutablePointer<UInt64>.allocate(capacity: words)
        row.initialize(repeating: 0, count: words)
        rows[id] = row
        ids.append(id)
        return row
    }

    /// Adds one call to `row`: `nanoseconds` long, failed when its result was an error.
    @inline(__always) nonisolated static func record(
        _ row: UnsafeMutablePointer<UInt64>, kind: UInt32, nanoseconds: UInt64,
        failed: Bool
    ) {
        guard Int(kind) < kinds else { return }
        let cell = row + Int(kind) * cellWords
        cell[count] &+= 1
        if failed { cell[failures] &+= 1 }
        cell[total] &+= nanoseconds
        if nanoseconds > cell[longest] { cell[longest] = nanoseconds }
        var bucket = 0
        var bound: UInt64 = 1_000
        while bucket < 7 && nanoseconds > bound {
            bound &*= 10
            bucket += 1
        }
        cell[buckets + bucket] &+= 1
    }

    /// One service's figures for one event kind.
    struct Figures: Sendable, Equatable {
        var kind: EventKind
        var count: UInt64
        var failures: UInt64
        var totalNanoseconds: UInt64
        var maxNanoseconds: UInt64
        /// Counts per bucket of ``ServiceStats/bounds`` (not cumulative), the last one unbounded.
        var buckets: [UInt64]
    }

    /// The figures of service `id`, one per event kind it received; empty when never seen.
    func figures(for id: String) -> [Figures] {
        guard let row = rows[id] else { return [] }
        return EventKind.allCases.compactMap { kind in
            let cell = row + Int(kind.rawValue) * Self.cellWords
            guard cell[Self.count] > 0 else { return nil }
            return Figures(
                kind: kind, count: cell[Self.count], failures: cell[Self.failures],
                totalNanoseconds: cell[Self.total], maxNanoseconds: cell[Self.longest],
                buckets: (0..<8).map { cell[Self.buckets + $0] })
        }
    }
}

/// What starting one service cost, step by step, for `host ctl blame` (systemd-analyze
/// blame's question: who made start-up slow?). Recorded whether or not statistics are on:
/// start-up is not the dispatch path.
struct StartupCost: Sendable, Equatable {
    /// Reading its file's metadata (no plugin code runs); shared by the file's services.
    var inspect: UInt64 = 0
    /// `dlopen`: the library's ELF constructors (for a worker: starting it and its load).
    var dlopen: UInt64 = 0
    /// `servicehost_entry`.
    var entry: UInt64 = 0
    /// The service's `attach`.
    var attach: UInt64 = 0
    /// Its launch events (willFinishLaunching, didFinishLaunching, then the move to the
    /// app's state), as delivered at start or in its latest catch-up.
    var launch: UInt64 = 0

    /// All of it.
    var total: UInt64 { inspect &+ dlopen &+ entry &+ attach &+ launch }
}
