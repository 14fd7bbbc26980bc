import ServiceABI
import ServiceJSON
import Testing

/// The tape parser (push payloads, notifications): the same documents as `JSONValue`'s
/// parser, accepted or refused with the same reasons; the text kept byte for byte; members
/// in document order.
@Suite struct JSONTapeTests {
    /// The tape read back as a value, checking the `next` links on the way.
    private func value(_ tape: JSONTape, _ index: inout Int) -> JSONValue? {
        let node = tape[index]
        let here = index
        index += 1
        let value: JSONValue
        switch node.type {
        case SH_JSON_NULL.rawValue: value = .null
        case SH_JSON_TRUE.rawValue: value = true
        case SH_JSON_FALSE.rawValue: value = false
        case SH_JSON_NUMBER.rawValue: value = .number(node.number)
        case SH_JSON_STRING.rawValue: value = .string(string(node))
        case SH_JSON_ARRAY.rawValue:
            var elements: [JSONValue] = []
            for _ in 0..<node.count {
                guard let element = self.value(tape, &index) else { return nil }
                elements.append(element)
            }
            value = .array(elements)
        case SH_JSON_OBJECT.rawValue:
            var members: [String: JSONValue] = [:]
            for _ in 0..<node.count {
                let key = string(tape[index])
                guard tape[index].next == UInt32(index + 1) else { return nil }
                index += 1
                guard let member = self.value(tape, &index) else { return nil }
                members[key] = member
            }
            value = .object(members)
        default: return nil
        }
        guard node.next == UInt32(index), here < index else { return nil }
        return value
    }

    private func string(_ node: sh_json_node) -> String {
        #expect(node.string![node.length] == 0, "NUL-terminated")
        return String(decoding: UnsafeRawBufferPointer(start: node.string, count: node.length), as: UTF8.self)
    }

    private func readBack(_ tape: JSONTape) -> JSONValue? {
        var index = 0
        let read = value(tape, &index)
        return index == tape.document.count ? read : nil
    }

    /// The outcome of both parsers on `text`: equal values, or equal errors.
    private func expectSameOutcome(_ text: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = Result { () throws(JSONParseError) -> JSONValue in try JSONValue(parsing: text) }
        let tape = Result { () throws(JSONParseError) -> JSONTape in try JSONTape(parsing: text) }
        switch (expected, tape) {
        case (.success(let value), .success(let tape)):
            #expect(readBack(tape) == value, sourceLocation: sourceLocation)
            #expect(tape.bytes == text, sourceLocation: sourceLocation)
            #expect(tape.text[text.count] == 0, sourceLocation: sourceLocation)
        case (.failure(let expected), .failure(let error)):
            #expect(error == expected, sourceLocation: sourceLocation)
        default:
            Issue.record(
                "\(String(decoding: text, as: UTF8.self)): \(expected) vs \(tape)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: [
        "null", "true", "false", "0", "-0", "1.5e3", #""""#, "[]", "{}", " \t\r\n 1 \n", #"[1,"a",true,null,{"k":[]}]"#,
        #"{"a":{"b":{"c":[1,[2,[3]]]}}}"#, #"{"z":1,"a":2,"m":[{"q":null}]}"#, #""\u00e9\ud83d\ude00\n\t\"\\\/""#,
        #""é😀 plain""#, #"{"":0," ":1}"#,
        // Refused, with the same reason at the same byte.
        "", " ", "[1,]", "{\"a\":1,}", "01", "1.", "-", "1e", "NaN", "[1 2]", "{\"a\" 1}", "{1:2}", "tru", "nul",
        #""\x""#, #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""abc"#, "\"a\u{1}\"", "[[]", "{\"a\":1,\"a\":2}",
        "1 2", "1e400", "\"\\u12\"", "\"\\u12G4\"",
        // Found by the fuzzer: a duplicate key before a syntax error in the same object (the
        // syntax error comes first: duplicates are checked when the object closes).
        #"{"a":1,"a";"&:2}"#, #"{"a":{"b":1,"b":2},"c" 1}"#,
    ])
    func theTapeAndTheValueParser_agree(text: String) {
        expectSameOutcome(Array(text.utf8))
    }

    @Test(
        arguments: [
            [0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22],
        ] as [[UInt8]])
    func invalidUTF8_isRefusedWithAReason(bytes: [UInt8]) {
        expectSameOutcome(bytes)
        #expect(throws: JSONParseError(offset: 0, reason: "invalid UTF-8 in string")) { try JSONTape(parsing: bytes) }
    }

    @Test func theText_isKeptByteForByte_andMembersStayInDocumentOrder() throws {
        let text = "{ \"zeta\" :1,\n\t\"alpha\": \"\\u00e9\" , \"mid\":[ 2 ,3 ] }\n"
        let tape = try JSONTape(parsing: Array(text.utf8))
        #expect(String(decoding: tape.bytes, as: UTF8.self) == text)
        #expect(tape[0].type == SH_JSON_OBJECT.rawValue && tape[0].count == 3)
        #expect(string(tape[1]) == "zeta")
        #expect(string(tape[3]) == "alpha")
        #expect(string(tape[4]) == "é")
        #expect(string(tape[5]) == "mid")
        #expect(tape.member("mid").map { tape[$0].count } == 2)
        #expect(tape.member("nope") == nil)
    }

    @Test func duplicateKeys_areFound_inSmallAndLargeObjects() {
        for size in [2, 8, 9, 200] {
            var members = (0..<size).map { "\"k\($0)\":\($0)" }
            members.append("\"k\(size / 2)\":0")
            expectSameOutcome(Array(("{" + members.joined(separator: ",") + "}").utf8))
            #expect(throws: JSONParseError.self) {
                try JSONTape(parsing: Array(("{" + members.joined(separator: ",") + "}").utf8))
            }
        }
    }

    @Test func nesting_isLimitedLikeTheValueParser() {
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        expectSameOutcome(Array(deep.utf8))
        #expect(throws: JSONParseError(offset: 128, reason: "nesting deeper than 128")) {
            try JSONTape(parsing: Array(deep.utf8))
        }
    }

    @Test func randomDocuments_parseTheSameBothWays() {
        var generator = SplitMix64(seed: 7)
        for _ in 0..<300 {
            var text = ""
            Self.randomValue(&generator, depth: 0, into: &text)
            expectSameOutcome(Array(text.utf8))
            // And with one byte changed: both accept or both refuse, the same way.
            var bytes = Array(text.utf8)
            bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            expectSameOutcome(bytes)
        }
    }

    static func randomValue(_ g: inout SplitMix64, depth: Int, into text: inout String) {
        switch g.next() % (depth > 4 ? 5 : 7) {
        case 0: text += "null"
        case 1: text += g.next() % 2 == 0 ? "true" : "false"
        case 2: text += String(Double(Int64(bitPattern: g.next()) % 1_000_000) / 100)
        case 3: text += String(Int64(bitPattern: g.next()) >> 20)
        case 4: text += ["\"a\"", "\"\\u00e9\\n\"", "\"😀 x\"", "\"\"", "\"\\\"q\\\\\""][Int(g.next() % 5)]
        case 5:
            text += "["
            for i in 0..<Int(g.next() % 5) {
                if i > 0 { text += ", " }
                randomValue(&g, depth: depth + 1, into: &text)
            }
            text += "]"
        default:
            text += "{"
            for i in 0..<Int(g.next() % 12) {
                if i > 0 { text += "," }
                text += "\"k\(i)\" : "
                randomValue(&g, depth: depth + 1, into: &text)
            }
            text += "}"
        }
    }
}
