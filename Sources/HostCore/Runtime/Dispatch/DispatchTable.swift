import Glibc
import ServiceABI

/// What one call into a service needs, and nothing else: the dispatcher reads these flat
/// records on the hot path without touching a Swift class across the C call.
struct DispatchEntry {
    /// The service's `handle_event` (cached: the plugin promises it never changes).
    let handle: @convention(c) (UnsafePointer<sh_service>?, UnsafePointer<sh_event>?) -> Int32
    /// The service's descriptor, passed back as the call's first argument.
    let service: UnsafePointer<sh_service>
    /// The service's index in the dispatcher's service list (tracking, trace, failures).
    let index: Int
    /// The service's statistics row (``ServiceStats``); nil while statistics are off.
    let stats: UnsafeMutablePointer<UInt64>?
}

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
        var count = 0
        for (index, service) in services.enumerated() {
            let mask = service.metadata.events
            masks.append(mask)
            prototypes.append(DispatchEntry(handle: service.handleEvent, service: service.descriptor, index: index, stats: rows?(service)))
            count += mask.words.0.nonzeroBitCount + mask.words.1.nonzeroBitCount
        }
        var built: [DispatchEntry] = []
        built.reserveCapacity(count)
        for kind in 0..<limit {
            starts[kind] = built.count
            for index in masks.indices where masks[index].contains(rawKind: UInt32(kind)) { built.append(prototypes[index]) }
        }
        starts[limit] = built.count
        guard !built.isEmpty else { return }
        entries = .allocate(capacity: built.count)
        entries!.initialize(from: built, count: built.count)
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
