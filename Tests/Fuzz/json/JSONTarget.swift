import ServiceABI
import ServiceJSON

// Fuzz target `json`: bytes through both of ServiceJSON's parsers, `JSONValue` and the tape
// parser the host runs on every push (JSONTape(parsing:)). Checks what must hold for every
// input: both parsers accept it or refuse it with the same error; an accepted document
// serializes to text that parses back to the same value, and both tapes (parsed from the
// bytes, and flattened from the value) read back to it, the parsed one keeping the bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let parsedTape = Result { () throws(JSONParseError) -> JSONTape in try JSONTape(parsing: bytes) }
    let value: JSONValue
    do { value = try JSONValue(parsing: bytes) } catch {
        guard case .failure(let tapeError) = parsedTape else {
            fatalError("the tape parser accepts what JSONValue refuses: \(error)")
        }
        guard tapeError == error else { fatalError("the parsers disagree: \(tapeError) vs \(error)") }
        return 0
    }
    guard case .success(let direct) = parsedTape else { fatalError("the tape parser refuses what JSONValue accepts") }
    guard direct.bytes == bytes else { fatalError("the parsed tape does not keep the text") }
    check(direct, value)
    let text = value.serialized
    guard let again = try? JSONValue(parsing: Array(text.utf8)) else {
        fatalError("serialized text does not parse: \(text)")
    }
    guard again == value else { fatalError("serialized text parses to another value: \(text)") }
    check(JSONTape(value: value, text: bytes), value)
    return 0
}

/// The tape reads back as `value`, node for node.
func check(_ tape: JSONTape, _ value: JSONValue) {
    let text = value.serialized
    let document = tape.document
    guard let nodes = document.nodes, document.count > 0 else { fatalError("an empty tape for \(text)") }
    var index = 0
    guard let read = readTape(nodes, document.count, &index), index == document.count, read == value else {
        fatalError("the tape does not read back as the value: \(text)")
    }
}

/// The value at `index` (moved past it), or nil when a node breaks the tape's rules.
func readTape(_ nodes: UnsafePointer<sh_json_node>, _ count: Int, _ index: inout Int) -> JSONValue? {
    guard index < count else { return nil }
    let node = nodes[index]
    let here = index
    index += 1
    let value: JSONValue
    switch node.type {
    case SH_JSON_NULL.rawValue: value = .null
    case SH_JSON_TRUE.rawValue: value = .bool(true)
    case SH_JSON_FALSE.rawValue: value = .bool(false)
    case SH_JSON_NUMBER.rawValue: value = .number(node.number)
    case SH_JSON_STRING.rawValue:
        guard let string = tapeString(node) else { return nil }
        value = .string(string)
    case SH_JSON_ARRAY.rawValue:
        var elements: [JSONValue] = []
        for _ in 0..<node.count {
            guard let element = readTape(nodes, count, &index) else { return nil }
            elements.append(element)
        }
        value = .array(elements)
    case SH_JSON_OBJECT.rawValue:
        var members: [String: JSONValue] = [:]
        for _ in 0..<node.count {
            guard index < count, nodes[index].type == SH_JSON_STRING.rawValue, let key = tapeString(nodes[index]),
                nodes[index].next == UInt32(index + 1)
            else { return nil }
            index += 1
            guard let member = readTape(nodes, count, &index) else { return nil }
            members[key] = member
        }
        value = .object(members)
    default: return nil
    }
    // `next` skips the whole subtree: the index right after it.
    guard node.next == UInt32(index), here < index else { return nil }
    return value
}

private func tapeString(_ node: sh_json_node) -> String? {
    guard let start = node.string else { return nil }
    let bytes = UnsafeRawBufferPointer(start: start, count: node.length)
    guard start[node.length] == 0 else { return nil }  // NUL-terminated, as the ABI promises
    return String(validating: bytes, as: UTF8.self)
}
