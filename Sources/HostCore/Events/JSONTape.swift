import Glibc
import ServiceABI
import ServiceJSON

/// A JSON document flattened into the ABI's `sh_json` tape, parsed once and read by every
/// service that receives the event.
///
/// Owns its memory: nodes and one buffer of NUL-terminated strings, freed on deinit, so
/// it must outlive the deliveries that point into it.
final class JSONTape {
    /// The text the tape was parsed from, NUL-terminated (`json` fields point here).
    let text: UnsafeMutableBufferPointer<CChar>
    private let nodes: UnsafeMutableBufferPointer<sh_json_node>
    private let strings: UnsafeMutableRawBufferPointer
    /// The document, pointing into `nodes`.
    private(set) var document: sh_json

    /// Parses `bytes` (strict JSON) into a tape. Throws the parser's error with its offset.
    convenience init(parsing bytes: [UInt8]) throws(JSONParseError) {
        self.init(value: try JSONValue(parsing: bytes), text: bytes)
    }

    /// Flattens an already parsed value; `text` is kept as the event's JSON text.
    init(value: JSONValue, text bytes: [UInt8]) {
        text = .allocate(capacity: bytes.count + 1)
        for (index, byte) in bytes.enumerated() { text[index] = CChar(bitPattern: byte) }
        text[bytes.count] = 0

        var nodeCount = 0
        var stringBytes = 0
        Self.measure(value, nodes: &nodeCount, strings: &stringBytes)
        nodes = .allocate(capacity: max(nodeCount, 1))
        strings = .allocate(byteCount: max(stringBytes, 1), alignment: 1)
        document = sh_json(
            size: UInt32(MemoryLayout<sh_json>.size), version: SH_JSON_VERSION,
            nodes: nil, count: nodeCount)
        var nodeIndex = 0
        var stringOffset = 0
        fill(value, node: &nodeIndex, string: &stringOffset)
        document.nodes = UnsafePointer(nodes.baseAddress)
    }

    deinit {
        text.deallocate()
        nodes.deallocate()
        strings.deallocate()
    }

    /// Length of the JSON text in bytes (without the NUL).
    var textLength: Int { text.count - 1 }

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

    private func fill(_ value: JSONValue, node index: inout Int, string offset: inout Int) {
        let here = index
        index += 1
        var node = sh_json_node()
        switch value {
        case .null: node.type = SH_JSON_NULL.rawValue
        case .bool(let flag): node.type = flag ? SH_JSON_TRUE.rawValue : SH_JSON_FALSE.rawValue
        case .number(let number):
            node.type = SH_JSON_NUMBER.rawValue
            node.number = number
        case .string(let string):
            node.type = SH_JSON_STRING.rawValue
            (node.string, node.length) = store(string, at: &offset)
        case .array(let elements):
            node.type = SH_JSON_ARRAY.rawValue
            node.count = UInt32(elements.count)
            for element in elements { fill(element, node: &index, string: &offset) }
        case .object(let members):
            node.type = SH_JSON_OBJECT.rawValue
            node.count = UInt32(members.count)
            // Sorted keys: the tape is the same for the same document, whatever the hash seed.
            for key in members.keys.sorted() {
                var keyNode = sh_json_node()
                keyNode.type = SH_JSON_STRING.rawValue
                (keyNode.string, keyNode.length) = store(key, at: &offset)
                keyNode.next = UInt32(index + 1)
                nodes[index] = keyNode
                index += 1
                fill(members[key]!, node: &index, string: &offset)
            }
        }
        node.next = UInt32(index)
        nodes[here] = node
    }

    private func store(_ string: String, at offset: inout Int) -> (UnsafePointer<CChar>, Int) {
        let start = strings.baseAddress! + offset
        var utf8 = string.utf8.makeIterator()
        var length = 0
        while let byte = utf8.next() {
            start.storeBytes(of: byte, toByteOffset: length, as: UInt8.self)
            length += 1
        }
        start.storeBytes(of: 0, toByteOffset: length, as: UInt8.self)
        offset += length + 1
        return (UnsafePointer(start.assumingMemoryBound(to: CChar.self)), length)
    }
}
