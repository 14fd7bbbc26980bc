import Glibc
import ServiceJSON

/// The fast path of ``ControlRequest/parse(_:maxPayload:)`` (issue 13): a request without
/// members, such as `{"command":"memory-warning"}` or `{"id":7,"command":"state"}`, read
/// straight from the line's bytes, with no `JSONValue` built for the object.
///
/// It recognises only what it can answer exactly as the full parser would: a flat object of
/// `command` (a plain command's name) and optionally `id` (a short integer, a string, `true`,
/// `false` or `null`), ASCII without escapes, JSON whitespace between tokens, each key once.
/// Anything else (other keys, escapes, duplicate keys, non-ASCII bytes, longer numbers, bad
/// JSON) returns nil and goes to the full parser, so every refusal and its wording come from
/// one place. ControlFastPathTests and the `control` fuzz target compare the two.
enum PlainRequest {
    /// The request on `line`, or nil when the full parser must read it.
    static func parse(_ line: UnsafeRawBufferPointer) -> ControlRequest? {
        var scanner = Scanner(line)
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        var command: (ControlRequest.Command, row: Int)?
        var id: JSONValue?
        var sawID = false
        if !scanner.take(UInt8(ascii: "}")) {
            repeat {
                guard let key = scanner.string(), scanner.take(UInt8(ascii: ":")) else { return nil }
                if Scanner.equals(key, "command") {
                    guard command == nil, let name = scanner.string(), let plain = Self.command(named: name) else {
                        return nil
                    }
                    command = plain
                } else if Scanner.equals(key, "id") {
                    guard !sawID, let value = scanner.scalar() else { return nil }
                    sawID = true
                    id = value
                } else {
                    return nil
                }
            } while scanner.take(UInt8(ascii: ","))
            guard scanner.take(UInt8(ascii: "}")) else { return nil }
        }
        guard scanner.isAtEnd, let command else { return nil }
        return ControlRequest(id: id, command: command.0, row: command.row)
    }

    /// The command without members named `name` (``ControlCommands/plain``, the rows with a
    /// `plain` request), and its row; the lengths are compared first, so most names cost one
    /// comparison.
    private static func command(named name: UnsafeRawBufferPointer) -> (ControlRequest.Command, row: Int)? {
        let table = ControlCommands.plain
        for index in table.entries.indices where table.entries[index].count == name.count {
            let entry = table.entries[index]
            if memcmp(table.names.baseAddress! + entry.start, name.baseAddress!, name.count) == 0 {
                return (table.commands[index], entry.row)
            }
        }
        return nil
    }

    /// Reads tokens of the subset; every read stays within the line (indexes are checked
    /// against its count before each load).
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var isAtEnd: Bool {
            mutating get {
                skipWhitespace()
                return index == bytes.count
            }
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// Takes `byte` after whitespace.
        mutating func take(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A string of printable ASCII without escapes: its contents.
        mutating func string() -> UnsafeRawBufferPointer? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return UnsafeRawBufferPointer(rebasing: bytes[start..<(index - 1)])
                }
                // Control characters are refused by JSON, escapes and non-ASCII need the full parser.
                guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }

        /// An `id`: a string, `true`, `false`, `null` or an integer of at most 15 digits (exact
        /// as a Double, as the full parser reads it).
        mutating func scalar() -> JSONValue? {
            skipWhitespace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return string().map { .string(String(decoding: $0, as: UTF8.self)) }
            case UInt8(ascii: "t"): return word("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return word("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return word("null") ? .null : nil
            default: return integer()
            }
        }

        private mutating func word(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count,
                Self.equals(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]), text)
            else { return false }
            index += count
            return true
        }

        /// `-?(0|[1-9][0-9]*)`, at most 15 digits; what follows it is checked by the caller
        /// (a fraction or exponent is not `,` or `}`, so it goes to the full parser).
        private mutating func integer() -> JSONValue? {
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            // `-0` is left to the full parser (its sign).
            var value = 0
            var digits = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                guard digits < 15, !(digits == 1 && value == 0) else { return nil }
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                digits += 1
                index += 1
            }
            guard digits > 0, !(negative && value == 0) else { return nil }
            return .number(Double(negative ? -value : value))
        }

        /// Whether `bytes` are `text`'s.
        static func equals(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
            bytes.count == text.utf8CodeUnitCount
                && (bytes.isEmpty || memcmp(bytes.baseAddress!, text.utf8Start, bytes.count) == 0)
        }
    }
}
