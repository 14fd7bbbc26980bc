extension JSONValue {
    /// Parses `text` as one JSON value (RFC 8259, strict).
    ///
    /// Strict means: no trailing commas, comments, single quotes, leading
    /// zeros, `NaN` or trailing garbage; strings must be valid UTF-8 without
    /// raw control characters and with paired `\u` surrogates; numbers must be
    /// finite as `Double`; object keys must be unique; nesting deeper than
    /// `maxDepth` arrays and objects is refused.
    /// - Throws: ``JSONParseError`` with the byte offset of the problem.
    public init(parsing text: String, maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) {
        var text = text
        let result = text.withUTF8 { bytes in
            Result { () throws(JSONParseError) -> JSONValue in
                try JSONValue(parsing: UnsafeRawBufferPointer(bytes), maxDepth: maxDepth)
            }
        }
        self = try result.get()
    }

    /// Parses UTF-8 `bytes` as one JSON value; see `init(parsing:maxDepth:)` on `String`.
    /// - Throws: ``JSONParseError`` with the byte offset of the problem.
    public init(parsing bytes: [UInt8], maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) -> JSONValue in
                try JSONValue(parsing: buffer, maxDepth: maxDepth)
            }
        }
        self = try result.get()
    }

    /// Parses UTF-8 `bytes` as one JSON value; see `init(parsing:maxDepth:)` on `String`.
    /// - Throws: ``JSONParseError`` with the byte offset of the problem.
    public init(parsing bytes: UnsafeRawBufferPointer, maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError)
    {
        var parser = JSONParser(scanner: JSONScanner(bytes, maxDepth: maxDepth))
        self = try parser.parseDocument()
    }
}

/// A recursive-descent parser building `JSONValue`s.
///
/// The members of the objects and the elements of the arrays being parsed wait on two
/// stacks shared by every level, so each container is built once at its final size: a
/// dictionary with its capacity reserved, each key hashed once.
private struct JSONParser {
    var scanner: JSONScanner
    var members: [(key: String, offset: Int, value: JSONValue)] = []
    var elements: [JSONValue] = []

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        scanner.skipWhitespace()
        let value = try parseValue()
        try scanner.finish()
        return value
    }

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard let byte = scanner.current else { throw scanner.fail("unexpected end of input, expected a value") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try scanner.expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try scanner.expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try scanner.expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try scanner.scanNumber())
        default: throw scanner.fail("unexpected \(scanner.describeCurrent()), expected a value")
        }
    }

    mutating func parseString() throws(JSONParseError) -> String {
        let span = try scanner.scanString()
        if !span.escaped {
            // Already validated: decoding only copies (and finds the ASCII fast path).
            return String(
                decoding: UnsafeBufferPointer(start: scanner.base + span.start, count: span.rawLength), as: UTF8.self)
        }
        let scanner = self.scanner
        return String(unsafeUninitializedCapacity: span.rawLength) { buffer in
            scanner.unescape(span, into: buffer.baseAddress!)
        }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try scanner.enter()
        scanner.index += 1  // {
        scanner.skipWhitespace()
        if scanner.current == UInt8(ascii: "}") {
            scanner.index += 1
            scanner.depth -= 1
            return .object([:])
        }
        let mark = members.count
        while true {
            scanner.skipWhitespace()
            guard scanner.current == UInt8(ascii: "\"") else {
                throw scanner.fail("unexpected \(scanner.describeCurrent()), expected a string key")
            }
            let keyOffset = scanner.index
            let key = try parseString()
            scanner.skipWhitespace()
            guard scanner.current == UInt8(ascii: ":") else {
                throw scanner.fail("unexpected \(scanner.describeCurrent()), expected ':'")
            }
            scanner.index += 1
            scanner.skipWhitespace()
            let value = try parseValue()
            members.append((key, keyOffset, value))
            scanner.skipWhitespace()
            guard let byte = scanner.current else { throw scanner.fail("unexpected end of input, expected ',' or '}'") }
            switch byte {
            case UInt8(ascii: ","):
                scanner.index += 1
            case UInt8(ascii: "}"):
                scanner.index += 1
                scanner.depth -= 1
                return .object(try takeMembers(from: mark))
            default:
                throw scanner.fail("unexpected \(scanner.describeCurrent()), expected ',' or '}'")
            }
        }
    }

    /// The members above `mark` as a dictionary, removed from the stack.
    mutating func takeMembers(from mark: Int) throws(JSONParseError) -> [String: JSONValue] {
        defer { members.removeSubrange(mark...) }
        var object = [String: JSONValue](minimumCapacity: members.count - mark)
        for index in mark..<members.count {
            let member = members[index]
            if object.updateValue(member.value, forKey: member.key) != nil {
                throw scanner.fail("duplicate key \"\(member.key)\"", at: member.offset)
            }
        }
        return object
    }

    mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try scanner.enter()
        scanner.index += 1  // [
        scanner.skipWhitespace()
        if scanner.current == UInt8(ascii: "]") {
            scanner.index += 1
            scanner.depth -= 1
            return .array([])
        }
        let mark = elements.count
        while true {
            scanner.skipWhitespace()
            elements.append(try parseValue())
            scanner.skipWhitespace()
            guard let byte = scanner.current else { throw scanner.fail("unexpected end of input, expected ',' or ']'") }
            switch byte {
            case UInt8(ascii: ","):
                scanner.index += 1
            case UInt8(ascii: "]"):
                scanner.index += 1
                scanner.depth -= 1
                let array = Array(elements[mark...])
                elements.removeSubrange(mark...)
                return .array(array)
            default:
                throw scanner.fail("unexpected \(scanner.describeCurrent()), expected ',' or ']'")
            }
        }
    }
}
