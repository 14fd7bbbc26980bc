import Glibc
import ServiceABI
import ServiceJSON

/// C memory for one event's data (strings, payload structs, JSON tapes), freed together
/// when the event's deliveries are over.
///
/// Only events with data use it: lifecycle events carry none and allocate nothing.
final class EventArena {
    private var blocks: [UnsafeMutableRawPointer] = []
    private var tapes: [JSONTape] = []

    deinit { for block in blocks { free(block) } }

    /// A NUL-terminated copy of `text`.
    func string(_ text: String) -> UnsafePointer<CChar> {
        let copy = strdup(text)!
        blocks.append(copy)
        return UnsafePointer(copy)
    }

    /// A copy of `value` at a stable address.
    func box<T>(_ value: T) -> UnsafePointer<T> {
        let memory = malloc(MemoryLayout<T>.stride)!
        blocks.append(memory)
        let typed = memory.bindMemory(to: T.self, capacity: 1)
        typed.initialize(to: value)
        return UnsafePointer(typed)
    }

    /// A copy of `bytes`.
    func bytes(_ bytes: [UInt8]) -> UnsafePointer<UInt8> {
        let memory = malloc(max(bytes.count, 1))!
        blocks.append(memory)
        bytes.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return UnsafePointer(memory.assumingMemoryBound(to: UInt8.self))
    }

    /// A copy of `items`, contiguous (a C array), or nil when there are none.
    func array<T>(_ items: [T]) -> UnsafePointer<T>? {
        guard !items.isEmpty else { return nil }
        let memory = malloc(MemoryLayout<T>.stride * items.count)!
        blocks.append(memory)
        let typed = memory.bindMemory(to: T.self, capacity: items.count)
        typed.initialize(from: items, count: items.count)
        return UnsafePointer(typed)
    }

    /// Keeps `tape` alive as long as the arena.
    func keep(_ tape: JSONTape) -> UnsafePointer<sh_json> {
        tapes.append(tape)
        return box(tape.document)
    }
}
