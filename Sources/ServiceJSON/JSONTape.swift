import Glibc
import ServiceABI

/// A JSON document as the ABI's `sh_json` tape (json.h) and the exact text it came from:
/// what the host hands every service that receives a push or a notification.
///
/// `init(parsing:)` parses the text straight into the tape, with the rules of
/// `JSONValue(parsing:)` (it accepts and refuses exactly the same documents, with the same
/// reasons), and keeps the text byte for byte. Object members stay in document order.
///
/// Owns its memory (the text, the strings and the nodes), freed on deinit: it must outlive
/// every delivery that points into it.
// @unchecked Sendable: every buffer is written during init only and read-only afterwards.
public final class JSONTape: @unchecked Sendable {
    /// The text, NUL-terminated (events' `json` fields point here).
    public let text: UnsafeBufferPointer<CChar>
    /// The document, pointing into this tape's nodes.
    public let document: sh_json
    /// One allocation: the text, its NUL, then the strings (each NUL-terminated).
    private let block: UnsafeMutableRawPointer
    private let nodes: UnsafeMutablePointer<sh_json_node>

    /// Parses UTF-8 `bytes` (strict JSON) into a tape, keeping them as the text.
    /// - Throws: ``JSONParseError`` with the byte offset of the problem.
    public convenience init(parsing bytes: UnsafeRawBufferPointer, maxDepth: Int = JSONValue.defaultMaxDepth)
        throws(JSONParseError)
    {
        let builder = try JSONTapeBuilder.parse(bytes, maxDepth: maxDepth)
        self.init(block: builder.block, length: bytes.count, nodes: builder.nodes, count: builder.used)
    }

    /// Parses UTF-8 `bytes`; see `init(parsing:maxDepth:)`.
    public convenience init(parsing bytes: [UInt8], maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) -> JSONTapeBuilder in
                try JSONTapeBuilder.parse(buffer, maxDepth: maxDepth)
            }
        }
        let builder = try result.get()
        self.init(block: builder.block, length: bytes.count, nodes: builder.nodes, count: builder.used)
    }

    /// Flattens an already parsed value; `text` is kept as the text (its serialization,
    /// usually). Members follow in the order of their keys' UTF-8 bytes, so the tape is
    /// the same for the same value, whatever the hash seed.
    public convenience init(value: JSONValue, text bytes: [UInt8]) {
        var builder = JSONTapeBuilder(text: bytes, value: value)
        builder.fill(value)
        self.init(block: builder.block, length: bytes.count, nodes: builder.nodes, count: builder.used)
    }

    private init(block: UnsafeMutableRawPointer, length: Int, nodes: UnsafeMutablePointer<sh_json_node>, count: Int) {
        self.block = block
        self.nodes = nodes
        text = UnsafeBufferPointer(start: block.assumingMemoryBound(to: CChar.self), count: length + 1)
        document = sh_json(
            size: UInt32(MemoryLayout<sh_json>.size), version: SH_JSON_VERSION, nodes: UnsafePointer(nodes),
            count: count)
    }

    deinit {
        free(block)
        free(nodes)
    }

    /// Length of the text in bytes (without the NUL).
    public var textLength: Int { text.count - 1 }

    /// The text's bytes (a copy).
    public var bytes: [UInt8] { Array(UnsafeRawBufferPointer(start: text.baseAddress, count: textLength)) }

    /// The node at `index` (0: the root).
    public subscript(index: Int) -> sh_json_node { nodes[index] }

    /// The index of the value of member `key` of the object at `index`, or nil when that is
    /// not an object or has no such member.
    public func member(_ key: String, of index: Int = 0) -> Int? {
        let object = nodes[index]
        guard object.type == SH_JSON_OBJECT.rawValue else { return nil }
        var key = key
        return key.withUTF8 { key in
            var at = index + 1
            for _ in 0..<object.count {
                let name = nodes[at]
                if name.length == key.count, key.isEmpty || memcmp(name.string, key.baseAddress!, key.count) == 0 {
                    return at + 1
                }
                at = Int(nodes[at + 1].next)
            }
            return nil
        }
    }
}

/// Builds the nodes and strings of a tape: from text (one pass, no intermediate values) or
/// from a `JSONValue`.
private struct JSONTapeBuilder {
    var scanner: JSONScanner
    /// The text (NUL-terminated) followed by room for every string: the unescaped strings
    /// with their NULs never take more than the text does (each has two quotes).
    let block: UnsafeMutableRawPointer
    var strings: UnsafeMutablePointer<UInt8>
    var nodes: UnsafeMutablePointer<sh_json_node>
    var capacity: Int
    var used = 0
    /// The text offsets of the keys of the objects being parsed, outermost first (for the
    /// duplicate-key error).
    var keyOffsets: [Int] = []

    init(_ bytes: UnsafeRawBufferPointer, maxDepth: Int) {
        scanner = JSONScanner(bytes, maxDepth: maxDepth)
        block = Self.allocate(text: bytes, stringBytes: bytes.count + 1)
        strings = (block + bytes.count + 1).assumingMemoryBound(to: UInt8.self)
        // A guess that fits typical payloads (a node per ~8 bytes); grown by doubling.
        capacity = bytes.count / 8 + 16
        nodes = Self.allocateNodes(capacity)
    }

    init(text bytes: [UInt8], value: JSONValue) {
        var nodeCount = 0
        var stringBytes = 0
        Self.measure(value, nodes: &nodeCount, strings: &stringBytes)
        scanner = JSONScanner(UnsafeRawBufferPointer(start: nil, count: 0), maxDepth: 0)
        block = bytes.withUnsafeBytes { Self.allocate(text: $0, stringBytes: stringBytes) }
        strings = (block + bytes.count + 1).assumingMemoryBound(to: UInt8.self)
        capacity = max(nodeCount, 1)
        nodes = Self.allocateNodes(capacity)
    }

    private static func allocate(text: UnsafeRawBufferPointer, stringBytes: Int) -> UnsafeMutableRawPointer {
        let (size, overflow) = (text.count + 1).addingReportingOverflow(stringBytes)
        precondition(!overflow, "a JSON text of \(text.count) bytes")
        let block = malloc(max(size, 1))!
        if let base = text.baseAddress { block.copyMemory(from: base, byteCount: text.count) }
        block.storeBytes(of: 0, toByteOffset: text.count, as: UInt8.self)
        return block
    }

    private static func allocateNodes(_ count: Int) -> UnsafeMutablePointer<sh_json_node> {
        let (size, overflow) = count.multipliedReportingOverflow(by: MemoryLayout<sh_json_node>.stride)
        precondition(!overflow, "a tape of \(count) nodes")
        return malloc(size)!.bindMemory(to: sh_json_node.self, capacity: count)
    }

    /// A tape parsed from `bytes`; on error nothing stays allocated.
    static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int) throws(JSONParseError) -> JSONTapeBuilder {
        var builder = JSONTapeBuilder(bytes, maxDepth: maxDepth)
        do { try builder.parseDocument() } catch {
            free(builder.block)
            free(builder.nodes)
            throw error
        }
        return builder
    }

    /// Reserves the next node and returns its index.
    @inline(__always) mutating func reserve() throws(JSONParseError) -> Int {
        if used == capacity {
            // UInt32 indexes (`next`): a larger tape cannot be written.
            guard capacity < Int(UInt32.max) / 2 else { throw scanner.fail("the document has too many values") }
            capacity *= 2
            nodes = realloc(nodes, capacity * MemoryLayout<sh_json_node>.stride)!.bindMemory(
                to: sh_json_node.self, capacity: capacity)
        }
        used += 1
        return used - 1
    }

    @inline(__always) mutating func set(
        _ index: Int, _ type: sh_json_type, count: Int = 0, string: UnsafePointer<UInt8>? = nil, length: Int = 0,
        number: Double = 0
    ) {
        nodes[index] = sh_json_node(
            type: type.rawValue, count: UInt32(truncatingIfNeeded: count), next: UInt32(truncatingIfNeeded: used),
            reserved: 0,
            string: UnsafeRawPointer(string)?.assumingMemoryBound(to: CChar.self), length: length, number: number)
    }

    // MARK: From text

    mutating func parseDocument() throws(JSONParseError) {
        scanner.skipWhitespace()
        try parseValue()
        try scanner.finish()
    }

    mutating func parseValue() throws(JSONParseError) {
        guard let byte = scanner.current else { throw scanner.fail("unexpected end of input, expected a value") }
        switch byte {
        case UInt8(ascii: "{"): try parseObject()
        case UInt8(ascii: "["): try parseArray()
        case UInt8(ascii: "\""): try parseString()
        case UInt8(ascii: "t"):
            try scanner.expectLiteral("true")
            set(try reserve(), SH_JSON_TRUE)
        case UInt8(ascii: "f"):
            try scanner.expectLiteral("false")
            set(try reserve(), SH_JSON_FALSE)
        case UInt8(ascii: "n"):
            try scanner.expectLiteral("null")
            set(try reserve(), SH_JSON_NULL)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let number = try scanner.scanNumber()
            set(try reserve(), SH_JSON_NUMBER, number: number)
        default: throw scanner.fail("unexpected \(scanner.describeCurrent()), expected a value")
        }
    }

    mutating func parseString() throws(JSONParseError) {
        let span = try scanner.scanString()
        let length = scanner.unescape(span, into: strings)
        strings[length] = 0
        let index = try reserve()
        set(index, SH_JSON_STRING, string: strings, length: length)
        strings += length + 1
    }

    mutating func parseArray() throws(JSONParseError) {
        try scanner.enter()
        let here = try reserve()
        scanner.index += 1  // [
        scanner.skipWhitespace()
        var count = 0
        if scanner.current == UInt8(ascii: "]") {
            scanner.index += 1
        } else {
            loop: while true {
                scanner.skipWhitespace()
                try parseValue()
                count += 1
                scanner.skipWhitespace()
                guard let byte = scanner.current else {
                    throw scanner.fail("unexpected end of input, expected ',' or ']'")
                }
                switch byte {
                case UInt8(ascii: ","): scanner.index += 1
                case UInt8(ascii: "]"):
                    scanner.index += 1
                    break loop
                default: throw scanner.fail("unexpected \(scanner.describeCurrent()), expected ',' or ']'")
                }
            }
        }
        scanner.depth -= 1
        set(here, SH_JSON_ARRAY, count: count)
    }

    mutating func parseObject() throws(JSONParseError) {
        try scanner.enter()
        let here = try reserve()
        scanner.index += 1  // {
        scanner.skipWhitespace()
        var count = 0
        let mark = keyOffsets.count
        if scanner.current == UInt8(ascii: "}") {
            scanner.index += 1
        } else {
            loop: while true {
                scanner.skipWhitespace()
                guard scanner.current == UInt8(ascii: "\"") else {
                    throw scanner.fail("unexpected \(scanner.describeCurrent()), expected a string key")
                }
                keyOffsets.append(scanner.index)
                try parseString()
                scanner.skipWhitespace()
                guard scanner.current == UInt8(ascii: ":") else {
                    throw scanner.fail("unexpected \(scanner.describeCurrent()), expected ':'")
                }
                scanner.index += 1
                scanner.skipWhitespace()
                try parseValue()
                count += 1
                scanner.skipWhitespace()
                guard let byte = scanner.current else {
                    throw scanner.fail("unexpected end of input, expected ',' or '}'")
                }
                switch byte {
                case UInt8(ascii: ","): scanner.index += 1
                case UInt8(ascii: "}"):
                    scanner.index += 1
                    break loop
                default: throw scanner.fail("unexpected \(scanner.describeCurrent()), expected ',' or '}'")
                }
            }
        }
        try checkUnique(here, count: count, mark: mark)
        keyOffsets.removeSubrange(mark...)
        scanner.depth -= 1
        set(here, SH_JSON_OBJECT, count: count)
    }

    /// Refuses the object at `object` when two of its `count` members have the same key,
    /// naming the later one (at `keyOffsets[mark + i]`). Checked once the object is closed, as
    /// `JSONValue`'s parser does (so both report the same error first): linearly up to 8
    /// members, by hash past that.
    private func checkUnique(_ object: Int, count: Int, mark: Int) throws(JSONParseError) {
        guard count > 1 else { return }
        var at = object + 1
        if count <= 8 {
            for i in 0..<count {
                let key = JSONKey(nodes[at])
                var other = object + 1
                for _ in 0..<i {
                    if JSONKey(nodes[other]) == key { throw duplicate(key, keyOffsets[mark + i]) }
                    other = Int(nodes[other + 1].next)
                }
                at = Int(nodes[at + 1].next)
            }
            return
        }
        var seen = Set<JSONKey>(minimumCapacity: count)
        for i in 0..<count {
            let key = JSONKey(nodes[at])
            if !seen.insert(key).inserted { throw duplicate(key, keyOffsets[mark + i]) }
            at = Int(nodes[at + 1].next)
        }
    }

    private func duplicate(_ key: JSONKey, _ offset: Int) -> JSONParseError {
        scanner.fail("duplicate key \"\(String(decoding: key.bytes, as: UTF8.self))\"", at: offset)
    }

    // MARK: From a value

    private static func measure(_ value: JSONValue, nodes: inout Int, strings: inout Int) {
        nodes += 1
        switch value {
        case .string(let string): strings += string.utf8.count + 1
        case .array(let elements): for element in elements { measure(element, nodes: &nodes, strings: &strings) }
        case .object(let members):
            for (key, member) in members {
                nodes += 1
                strings += key.utf8.count + 1
                measure(member, nodes: &nodes, strings: &strings)
            }
        default: break
        }
    }

    mutating func fill(_ value: JSONValue) {
        let here = used
        used += 1
        switch value {
        case .null: set(here, SH_JSON_NULL)
        case .bool(let flag): set(here, flag ? SH_JSON_TRUE : SH_JSON_FALSE)
        case .number(let number): set(here, SH_JSON_NUMBER, number: number)
        case .string(let string): store(string, at: here)
        case .array(let elements):
            for element in elements { fill(element) }
            set(here, SH_JSON_ARRAY, count: elements.count)
        case .object(let members):
            for key in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                let keyIndex = used
                used += 1
                store(key, at: keyIndex)
                fill(members[key]!)
            }
            set(here, SH_JSON_OBJECT, count: members.count)
        }
    }

    private mutating func store(_ string: String, at index: Int) {
        let start = strings
        var length = 0
        for byte in string.utf8 {
            start[length] = byte
            length += 1
        }
        start[length] = 0
        strings += length + 1
        set(index, SH_JSON_STRING, string: start, length: length)  // `used` is index + 1: its `next`
    }
}

/// A key's bytes in a tape, compared and hashed by content.
private struct JSONKey: Hashable {
    let bytes: UnsafeRawBufferPointer

    init(_ node: sh_json_node) { bytes = UnsafeRawBufferPointer(start: node.string, count: node.length) }

    static func == (a: JSONKey, b: JSONKey) -> Bool {
        a.bytes.count == b.bytes.count
            && (a.bytes.count == 0 || memcmp(a.bytes.baseAddress!, b.bytes.baseAddress!, a.bytes.count) == 0)
    }

    func hash(into hasher: inout Hasher) { hasher.combine(bytes: bytes) }
}
