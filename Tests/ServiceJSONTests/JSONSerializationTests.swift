import ServiceJSON
import Testing

/// `serialized`: compact, keys in UTF-8 byte order, whole numbers without a fraction, and text
/// the parser reads back to the same value.
@Suite struct JSONSerializationTests {
    @Test(
        arguments: [
            (JSONValue.null, "null"), (true, "true"), (false, "false"), (0, "0"), (-7, "-7"), (1.5, "1.5"),
            (-0.25, "-0.25"), (1e300, "1e+300"), (9_007_199_254_740_991, "9007199254740991"),
            (9_007_199_254_740_992, "9007199254740992.0"), ([], "[]"), ([:], "{}"),
            ([1, "a", [true, .null]], #"[1,"a",[true,null]]"#),
        ] as [(JSONValue, String)])
    func values_serializeCompactly(value: JSONValue, text: String) {
        #expect(value.serialized == text)
        #expect(value.description == text)
    }

    @Test func nonFiniteNumbers_serializeAsNull() {
        #expect(JSONValue.number(.nan).serialized == "null")
        #expect(JSONValue.number(.infinity).serialized == "null")
        #expect(JSONValue.array([.number(-.infinity)]).serialized == "[null]")
    }

    @Test func objectKeys_areSortedByTheirUTF8Bytes() {
        let value: JSONValue = ["b": 1, "a": 2, "B": 3, "é": 4, "aa": 5, "": 6]
        #expect(value.serialized == #"{"":6,"B":3,"a":2,"aa":5,"b":1,"é":4}"#)
    }

    @Test func strings_escapeQuotesBackslashesAndControlCharacters() {
        let value = JSONValue.string("\"\\/\n\r\t\u{8}\u{C}\u{0}\u{1F}\u{7F}é😀")
        #expect(value.serialized == #""\"\\/\n\r\t\b\f\u0000\u001f"# + "\u{7F}é😀\"")
    }

    @Test(arguments: [
        #"{"aps":{"alert":{"title":"Hi","body":"\"quoted\" \\ \n"},"badge":3,"content-available":1},"route":"home"}"#,
        #"[0,-1,1.5,-2.25e-5,1e300,true,false,null,"",{},[]]"#,
        #"{"nested":[[[[{"deep":["😀","\u0000","中"]}]]]]}"#,
    ])
    func parsedText_roundTripsThroughSerialization(text: String) throws {
        let value = try JSONValue(parsing: text)
        let again = try JSONValue(parsing: value.serialized)
        #expect(again == value)
        #expect(again.serialized == value.serialized)
    }

    /// The escape scan reads 8 bytes at a time: each byte to escape (and bytes near them that
    /// must not be, such as 0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xE9 of "é") at every
    /// position of strings of 0 to 40 bytes, against escaping byte by byte.
    @Test func everyByteToEscape_atEveryPosition_isEscapedAndNoOtherIs() {
        let special: [UInt8] = [0x00, 0x01, 0x09, 0x0A, 0x1F, 0x22, 0x5C, 0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F]
        for length in 0...40 {
            for position in 0..<max(length, 1) {
                for byte in special where length > 0 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = byte
                    let string = String(decoding: bytes, as: UTF8.self)
                    #expect(
                        JSONValue.string(string).serialized == Self.reference(string), "\(length) \(position) \(byte)")
                }
            }
            let accented = String(repeating: "é", count: length)
            #expect(JSONValue.string(accented).serialized == Self.reference(accented))
        }
    }

    /// JSON escaping one byte at a time, as the serializer writes it.
    static func reference(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{8}": out += "\\b"
            case "\u{C}": out += "\\f"
            case _ where scalar.value < 0x20:
                out += "\\u00" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    @Test func everyControlCharacter_roundTrips() throws {
        let all = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        #expect(try JSONValue(parsing: JSONValue.string(all).serialized) == .string(all))
    }

    @Test func randomValues_roundTrip() throws {
        var generator = SplitMix(seed: 0x5EED)
        for _ in 0..<200 {
            let value = randomValue(depth: 0, using: &generator)
            #expect(try JSONValue(parsing: value.serialized) == value, "\(value.serialized)")
        }
    }

    // MARK: - Accessors and literals

    @Test func accessors_answerOnlyForTheirOwnCase() {
        let value: JSONValue = ["s": "x", "n": 2.5, "i": 3, "b": true, "a": [1], "o": ["k": .null]]
        #expect(value["s"]?.stringValue == "x")
        #expect(value["n"]?.doubleValue == 2.5)
        #expect(value["n"]?.intValue == nil)  // not a whole number
        #expect(value["i"]?.intValue == 3)
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?.arrayValue == [1])
        #expect(value["o"]?.objectValue == ["k": .null])
        #expect(value["missing"] == nil)
        #expect(value["s"]?["k"] == nil)
        #expect(value["s"]?.doubleValue == nil && value["b"]?.stringValue == nil && value["i"]?.boolValue == nil)
        #expect(JSONValue.number(1e30).intValue == nil)
    }

    @Test func dictionaryLiteral_keepsTheLastDuplicate() {
        let value: JSONValue = ["a": 1, "a": 2]
        #expect(value == ["a": 2])
    }

    // MARK: - Helpers

    private func randomValue(depth: Int, using generator: inout SplitMix) -> JSONValue {
        let pick = generator.next() % (depth > 4 ? 4 : 6)
        switch pick {
        case 0: return .null
        case 1: return .bool(generator.next() % 2 == 0)
        case 2:
            let raw = Double(bitPattern: generator.next())
            return .number(raw.isFinite ? raw : Double(Int64(bitPattern: generator.next()) >> 10))
        case 3: return .string(randomString(using: &generator))
        case 4: return .array((0..<generator.next() % 5).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<generator.next() % 5 {
                members[randomString(using: &generator)] = randomValue(depth: depth + 1, using: &generator)
            }
            return .object(members)
        }
    }

    private func randomString(using generator: inout SplitMix) -> String {
        let scalars: [Unicode.Scalar] = ["a", "Z", "\"", "\\", "/", "\n", "\u{0}", "\u{1F}", "é", "中", "😀", " "]
        return String(
            String.UnicodeScalarView(
                (0..<generator.next() % 8).map { _ in
                    scalars[Int(generator.next() % UInt64(scalars.count))]
                }))
    }
}

/// A small deterministic generator, so a failing value can be reproduced.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
