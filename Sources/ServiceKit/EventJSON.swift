import Locking
import ServiceABI

/// A JSON document that arrived with an event: its text and the host's parsed tape
/// (json.h), both in host memory that is valid only until the event returns.
///
/// The `JSONValue` is built from the tape on first access, once per service, and the text
/// is copied on first access: the host parses each payload once for every service, so
/// no service parses it again. When a service keeps the value past its event (stores it,
/// captures it in a completion it calls later), ``ServicePlugin`` calls
/// ``endEvent()`` before handing control back to the host, which copies whatever was not
/// read yet; after that the storage no longer points into host memory.
///
/// Thread-safe: a service may read it from another thread while its event runs; the
/// lock orders that read against ``endEvent()``.
final class EventJSON: Sendable {
    // @unchecked: the pointers are to read-only host memory that any thread may read
    // during the event (json.h); the mutex orders every read before endEvent() drops them.
    private struct State: @unchecked Sendable {
        /// The host's tape, or nil once detached (or when there is none).
        var tape: UnsafePointer<sh_json>?
        /// The text in host memory, or nil once detached (or when there is none).
        var bytes: UnsafeRawBufferPointer?
        /// The text, once copied.
        var text: String?
        /// The value, once built (`.some(nil)`: there is no document).
        var value: JSONValue??
    }

    private let state: Locked<State>

    /// Points at the host's memory; valid until ``endEvent()``.
    init(tape: UnsafePointer<sh_json>?, text: UnsafeRawBufferPointer?) {
        state = Locked(State(tape: tape, bytes: text, text: nil, value: nil))
    }

    /// Holds a value that owns its memory (for tests and previews).
    init(value: JSONValue?, text: String?) {
        state = Locked(State(tape: nil, bytes: nil, text: text, value: .some(value)))
    }

    /// The JSON text, or nil when the event had none.
    var text: String? {
        state.withLock { state in Self.text(&state) }
    }

    /// The parsed document, or nil when the event had none (or its text is not valid
    /// JSON and the host sent no tape).
    var value: JSONValue? {
        state.withLock { state in Self.value(&state) }
    }

    /// Copies what was not read yet out of host memory and forgets the pointers.
    func endEvent() {
        state.withLock { state in
            _ = Self.text(&state)
            _ = Self.value(&state)
            state.tape = nil
            state.bytes = nil
        }
    }

    private static func text(_ state: inout State) -> String? {
        if let text = state.text { return text }
        guard let bytes = state.bytes else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        state.text = text
        return text
    }

    private static func value(_ state: inout State) -> JSONValue? {
        if let value = state.value { return value }
        let value: JSONValue?
        if let tape = state.tape {
            value = JSONValue(tape: tape)
        } else if let bytes = state.bytes {
            // No tape (allowed for user activities without userInfo): only then parse text.
            value = try? JSONValue(parsing: bytes)
        } else {
            value = nil
        }
        state.value = .some(value)
        return value
    }
}

extension JSONValue {
    /// Builds a value from the host's parsed tape (json.h), without parsing any text.
    ///
    /// A malformed tape (a host bug) never crashes: nodes past the end read as `null`.
    init(tape: UnsafePointer<sh_json>) {
        let document = tape.copyWithinDeclaredSize()
        let countOffset = MemoryLayout<sh_json>.offset(of: \.count)!
        guard Int(document.size) >= countOffset + MemoryLayout<Int>.size,
            let nodes = document.nodes, document.count > 0
        else {
            self = .null
            return
        }
        var reader = TapeReader(nodes: UnsafeBufferPointer(start: nodes, count: document.count))
        self = reader.value()
    }
}

/// Walks a tape in document order; each node is read once.
private struct TapeReader {
    let nodes: UnsafeBufferPointer<sh_json_node>
    var index = 0

    mutating func value(depth: Int = 0) -> JSONValue {
        guard index < nodes.count, depth <= JSONValue.defaultMaxDepth else { return .null }
        let node = nodes[index]
        index += 1
        switch sh_json_type(rawValue: node.type) {
        case SH_JSON_FALSE: return .bool(false)
        case SH_JSON_TRUE: return .bool(true)
        case SH_JSON_NUMBER: return node.number.isFinite ? .number(node.number) : .null
        case SH_JSON_STRING: return .string(Self.string(node))
        case SH_JSON_ARRAY:
            var elements: [JSONValue] = []
            elements.reserveCapacity(Int(node.count))
            for _ in 0..<node.count where index < nodes.count {
                elements.append(value(depth: depth + 1))
            }
            return .array(elements)
        case SH_JSON_OBJECT:
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(Int(node.count))
            for _ in 0..<node.count where index < nodes.count {
                let key = Self.string(nodes[index])
                index += 1
                members[key] = value(depth: depth + 1)
            }
            return .object(members)
        default:
            // SH_JSON_NULL, or a type this SDK does not know: skip its descendants.
            index = max(index, min(Int(node.next), nodes.count))
            return .null
        }
    }

    static func string(_ node: sh_json_node) -> String {
        guard let bytes = node.string else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: node.length), as: UTF8.self)
    }
}
