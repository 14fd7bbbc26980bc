import CSystem
import Glibc
import ServiceABI

/// What one call into a service needs, and nothing else: the dispatcher reads these flat
/// records on the hot path without touching a Swift class across the C call. A C struct
/// (CSystem.h), because the unobserved loop that reads them is C (`csystem_dispatch_forward`).
typealias DispatchEntry = csystem_dispatch_entry

/// The handlers of every event kind, in dispatch order, in one C-allocated block:
/// `entries[starts[kind] ..< starts[kind + 1]]` are the services that asked for `kind`.
///
/// Built once per change of the service list and never mutated afterwards, so a delivery
/// reads it through raw pointers: no reference counting, no exclusivity checks, no bounds
/// checks beyond the kind's own range.
struct DispatchTable {
    private(set) var entries: UnsafeMutablePointer<DispatchEntry>?
    // SH_EVENT_KIND_LIMIT + 1 offsets into `entries`.
    let starts: UnsafeMutablePointer<Int>

    /// An empty table.
    init() {
        entries = nil
        starts = .allocate(capacity: Int(SH_EVENT_KIND_LIMIT) + 1)
        starts.initialize(repeating: 0, count: Int(SH_EVENT_KIND_LIMIT) + 1)
    }

    /// A table for `services`, in their order, each with its statistics row from `rows` (nil:
    /// statistics are off, no row is asked for).
    @MainActor init(_ services: [ServiceSlot], rows: ((ServiceSlot) -> UnsafeMutablePointer<UInt64>?)?) {
        self.init()
        let limit = Int(SH_EVENT_KIND_LIMIT)
        // Each service's mask read once: a kind-by-service pass over the slots loaded each
        // service's metadata once per kind (~1 µs per service at start-up).
        // And each service's entry made once, copied per kind it handles: taking the slot out
        // of the array per kind retained and released it ~10 times per service.
        var masks: [EventMask] = []
        var prototypes: [DispatchEntry] = []
        masks.reserveCapacity(services.count)
        prototypes.reserveCapacity(services.count)
        // A counting sort by kind over the bits set, not a test of every kind for every
        // service (128 per service, ~1200 instructions each at every start): count each
        // kind's handlers, make `starts` their running sum, then place the entries in service
        // order, each at its kind's next free place.
        for (index, service) in services.enumerated() {
            let mask = service.metadata.events
            masks.append(mask)
            prototypes.append(
                DispatchEntry(
                    handle: service.handleEvent, service: service.descriptor, index: index, stats: rows?(service)))
            Self.forEachKind(of: mask, below: limit) { starts[$0 + 1] += 1 }
        }
        for kind in 0..<limit { starts[kind + 1] += starts[kind] }
        let count = starts[limit]
        guard count > 0 else { return }
        let table = UnsafeMutablePointer<DispatchEntry>.allocate(capacity: count)
        // Each kind's next free place, from its start.
        let next = UnsafeMutablePointer<Int>.allocate(capacity: limit)
        defer { next.deallocate() }
        next.initialize(from: starts, count: limit)
        for index in masks.indices {
            Self.forEachKind(of: masks[index], below: limit) { kind in
                (table + next[kind]).initialize(to: prototypes[index])
                next[kind] += 1
            }
        }
        entries = table
    }

    /// Calls `body` with each kind below `limit` whose bit `mask` sets, in increasing order.
    private static func forEachKind(of mask: EventMask, below limit: Int, _ body: (Int) -> Void) {
        forEachBit(of: mask.words.0, from: 0, below: limit, body)
        forEachBit(of: mask.words.1, from: 64, below: limit, body)
    }

    private static func forEachBit(of word: UInt64, from base: Int, below limit: Int, _ body: (Int) -> Void) {
        var rest = word
        while rest != 0 {
            let kind = base + rest.trailingZeroBitCount
            guard kind < limit else { return }
            body(kind)
            rest &= rest - 1
        }
    }

    /// The handlers of `kind`, in dispatch order.
    @inline(__always) func handlers(_ kind: UInt32) -> UnsafeBufferPointer<DispatchEntry> {
        let start = starts[Int(kind)]
        let end = starts[Int(kind) + 1]
        guard let entries, end > start else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: entries + start, count: end - start)
    }

    /// Frees the memory; the table must not be used afterwards.
    func deallocate() {
        entries?.deallocate()
        starts.deallocate()
    }
}
