/// Why JSON text could not be parsed, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset (from 0) in the input where the problem was found.
    public var offset: Int
    /// What is wrong, e.g. "expected ',' or '}'".
    public var reason: String

    /// Creates an error at `offset` for `reason`.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// "byte <offset>: <reason>".
    public var description: String { "byte \(offset): \(reason)" }
}

/// Where a string's content is in the input, between its quotes.
struct JSONStringSpan {
    /// The offset of the first byte after the opening quote.
    var start: Int
    /// The offset of the closing quote.
    var end: Int
    /// Whether it holds a backslash escape (else its bytes are the string's bytes).
    var escaped: Bool
    /// The raw length: an upper bound of the unescaped length (an escape never grows).
    var rawLength: Int { end - start }
}

/// The byte-level half of both parsers (`JSONValue` and the tape): whitespace, literals,
/// strings validated in place and numbers, over one buffer, with RFC 8259's strict rules.
///
/// Strings are scanned once to validate them (ASCII runs byte by byte, other bytes as
/// UTF-8 sequences checked here) and copied with `unescape`, so no generic validation
/// and no temporary array is needed per string.
struct JSONScanner {
    let base: UnsafePointer<UInt8>
    let count: Int
    let maxDepth: Int
    var index = 0
    var depth = 0

    init(_ bytes: UnsafeRawBufferPointer, maxDepth: Int) {
        // An empty buffer may have no address; nothing is read from it then (count is 0).
        base = bytes.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) } ?? UnsafePointer(bitPattern: 1)!
        count = bytes.count
        self.maxDepth = maxDepth
    }

    func fail(_ reason: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(offset: offset ?? index, reason: reason)
    }

    func describeCurrent() -> String {
        guard index < count else { return "end of input" }
        let byte = base[index]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16)
    }

    /// The byte at `index`, or nil at the end.
    @inline(__always) var current: UInt8? { index < count ? base[index] : nil }

    @inline(__always) mutating func skipWhitespace() {
        while index < count {
            switch base[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// After the document: only whitespace may follow.
    mutating func finish() throws(JSONParseError) {
        skipWhitespace()
        if index < count { throw fail("unexpected \(describeCurrent()) after the value") }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = index
        let length = literal.utf8CodeUnitCount
        var matches = length <= count - index
        var offset = 0
        while matches && offset < length {
            matches = base[index + offset] == literal.utf8Start[offset]
            offset += 1
        }
        guard matches else { throw fail("invalid literal, expected '\(literal)'", at: start) }
        index += length
    }

    mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > maxDepth { throw fail("nesting deeper than \(maxDepth)") }
    }

    // MARK: Strings

    /// Validates the string at `index` (its opening quote) and moves past it.
    mutating func scanString() throws(JSONParseError) -> JSONStringSpan {
        let quote = index
        index += 1
        let start = index
        var escaped = false
        while true {
            // The common case: a run of printable ASCII.
            while index < count {
                let byte = base[index]
                if byte == 0x22 || byte == 0x5C || byte < 0x20 || byte >= 0x80 { break }
                index += 1
            }
            guard index < count else { throw fail("unterminated string", at: quote) }
            let byte = base[index]
            if byte == 0x22 {
                index += 1
                return JSONStringSpan(start: start, end: index - 1, escaped: escaped)
            }
            if byte == 0x5C {
                escaped = true
                try scanEscape(quote: quote)
            } else if byte < 0x20 {
                throw fail("raw control character in string (must be escaped)")
            } else {
                guard let length = utf8SequenceLength(at: index) else {
                    throw fail("invalid UTF-8 in string", at: quote)
                }
                index += length
            }
        }
    }

    /// The length of the well-formed UTF-8 sequence starting with a byte ≥ 0x80 at `offset`
    /// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or nil.
    @inline(__always) func utf8SequenceLength(at offset: Int) -> Int? {
        let lead = base[offset]
        let available = count - offset
        func continuation(_ i: Int) -> UInt8? {
            let byte = base[offset + i]
            return byte & 0xC0 == 0x80 ? byte : nil
        }
        switch lead {
        case 0xC2...0xDF:
            guard available >= 2, continuation(1) != nil else { return nil }
            return 2
        case 0xE0...0xEF:
            guard available >= 3, let second = continuation(1), continuation(2) != nil else { return nil }
            if lead == 0xE0 && second < 0xA0 { return nil }  // overlong
            if lead == 0xED && second >= 0xA0 { return nil }  // a surrogate
            return 3
        case 0xF0...0xF4:
            guard available >= 4, let second = continuation(1), continuation(2) != nil, continuation(3) != nil else {
                return nil
            }
            if lead == 0xF0 && second < 0x90 { return nil }  // overlong
            if lead == 0xF4 && second >= 0x90 { return nil }  // above U+10FFFF
            return 4
        default:
            return nil  // a continuation byte, an overlong lead (C0, C1) or F5…FF
        }
    }

    /// Validates the escape at `index` (its backslash) and moves past it.
    private mutating func scanEscape(quote: Int) throws(JSONParseError) {
        let escapeStart = index
        index += 1
        guard index < count else { throw fail("unterminated string", at: quote) }
        let escaped = base[index]
        index += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return
        case UInt8(ascii: "u"):
            let unit = try parseHex4()
            if (0xD800...0xDBFF).contains(unit) {
                guard count - index >= 2, base[index] == UInt8(ascii: "\\"), base[index + 1] == UInt8(ascii: "u") else {
                    throw fail("unpaired high surrogate in \\u escape", at: escapeStart)
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw fail("unpaired high surrogate in \\u escape", at: escapeStart)
                }
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw fail("unpaired low surrogate in \\u escape", at: escapeStart)
            }
        default:
            throw fail("invalid escape '\\\(Character(Unicode.Scalar(escaped)))'", at: escapeStart)
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard index < count else { throw fail("unexpected end of input in \\u escape") }
            guard let digit = Hex.value(base[index]) else { throw fail("invalid \\u escape, expected a hex digit") }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// Writes the unescaped bytes of a span `scanString` accepted to `out` (room for
    /// `span.rawLength` bytes) and returns how many it wrote.
    func unescape(_ span: JSONStringSpan, into out: UnsafeMutablePointer<UInt8>) -> Int {
        guard span.escaped else {
            out.update(from: base + span.start, count: span.rawLength)
            return span.rawLength
        }
        var written = 0
        var i = span.start
        while i < span.end {
            let byte = base[i]
            if byte != 0x5C {
                out[written] = byte
                written += 1
                i += 1
                continue
            }
            let escaped = base[i + 1]
            i += 2
            let simple: UInt8
            switch escaped {
            case UInt8(ascii: "b"): simple = 0x08
            case UInt8(ascii: "f"): simple = 0x0C
            case UInt8(ascii: "n"): simple = 0x0A
            case UInt8(ascii: "r"): simple = 0x0D
            case UInt8(ascii: "t"): simple = 0x09
            case UInt8(ascii: "u"):
                var scalar = hex4(at: i)
                i += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (hex4(at: i + 2) - 0xDC00)
                    i += 6
                }
                written += Self.encodeUTF8(scalar, into: out + written)
                continue
            default: simple = escaped  // " \ /
            }
            out[written] = simple
            written += 1
        }
        return written
    }

    /// Four hex digits `scanString` already checked.
    private func hex4(at offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 4 | UInt32(Hex.value(base[offset + i]) ?? 0) }
        return value
    }

    /// Writes a valid scalar value as UTF-8 and returns its length. An escape of n bytes
    /// (6, or 12 for a pair) always encodes in fewer bytes, so `unescape` never overruns.
    private static func encodeUTF8(_ scalar: UInt32, into out: UnsafeMutablePointer<UInt8>) -> Int {
        switch scalar {
        case 0..<0x80:
            out[0] = UInt8(scalar)
            return 1
        case 0x80..<0x800:
            out[0] = UInt8(0xC0 | scalar >> 6)
            out[1] = UInt8(0x80 | scalar & 0x3F)
            return 2
        case 0x800..<0x10000:
            out[0] = UInt8(0xE0 | scalar >> 12)
            out[1] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[2] = UInt8(0x80 | scalar & 0x3F)
            return 3
        default:
            out[0] = UInt8(0xF0 | scalar >> 18)
            out[1] = UInt8(0x80 | scalar >> 12 & 0x3F)
            out[2] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[3] = UInt8(0x80 | scalar & 0x3F)
            return 4
        }
    }

    // MARK: Numbers

    /// Exact powers of ten: every one up to 1e22 is a `Double` without rounding.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
        1e19, 1e20, 1e21, 1e22,
    ]

    /// Parses the number at `index` (a '-' or a digit).
    ///
    /// Fast path (Clinger's): a mantissa of at most 2^53 and a decimal exponent within ±22
    /// are both exact doubles, so one multiplication or division rounds once, correctly.
    /// Anything else goes to the standard library's correctly rounded `Double(_:)`.
    mutating func scanNumber() throws(JSONParseError) -> Double {
        let start = index
        let negative = base[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < count, Self.isDigit(base[index]) else { throw fail("invalid number, expected a digit") }
        var mantissa: UInt64 = 0
        var significant = 0  // digits in the mantissa, from the first non-zero one
        var exponent = 0  // the decimal exponent of the mantissa's last digit
        var exact = true  // false once a non-zero digit did not fit the mantissa
        @inline(__always) func take(_ digit: UInt8, fraction: Bool) {
            if significant < 19 {
                if mantissa != 0 || digit != 0 {
                    mantissa = mantissa &* 10 &+ UInt64(digit)
                    significant += 1
                }
                if fraction { exponent -= 1 }
            } else {
                if digit != 0 { exact = false }
                if !fraction { exponent += 1 }
            }
        }
        if base[index] == UInt8(ascii: "0") {
            index += 1
            if index < count && Self.isDigit(base[index]) { throw fail("invalid number, leading zero") }
        } else {
            while index < count, Self.isDigit(base[index]) {
                take(base[index] &- 0x30, fraction: false)
                index += 1
            }
        }
        if index < count && base[index] == UInt8(ascii: ".") {
            index += 1
            guard index < count, Self.isDigit(base[index]) else {
                throw fail("invalid number, expected a digit after '.'")
            }
            while index < count, Self.isDigit(base[index]) {
                take(base[index] &- 0x30, fraction: true)
                index += 1
            }
        }
        if index < count && (base[index] == UInt8(ascii: "e") || base[index] == UInt8(ascii: "E")) {
            index += 1
            var negativeExponent = false
            if index < count && (base[index] == UInt8(ascii: "+") || base[index] == UInt8(ascii: "-")) {
                negativeExponent = base[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < count, Self.isDigit(base[index]) else {
                throw fail("invalid number, expected a digit in the exponent")
            }
            var written = 0
            while index < count, Self.isDigit(base[index]) {
                // Saturates: an exponent this large is for the slow path, which knows its value.
                if written < 100_000 { written = written * 10 + Int(base[index] &- 0x30) }
                index += 1
            }
            exponent += negativeExponent ? -written : written
        }
        if exact && mantissa <= 1 << 53 {
            var value: Double?
            if mantissa == 0 {
                value = 0
            } else if exponent >= 0 && exponent <= 22 {
                value = Double(mantissa) * Self.powersOfTen[exponent]
            } else if exponent < 0 && exponent >= -22 {
                value = Double(mantissa) / Self.powersOfTen[-exponent]
            }
            if let value { return negative ? -value : value }
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw fail("number out of range", at: start) }
        return value
    }

    @inline(__always) static func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }
}
