import ServiceJSON
import Testing

/// The strict RFC 8259 parser: what it accepts, what it refuses and where it says the problem is.
@Suite struct JSONParserTests {
    private func parse(_ text: String, maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try JSONValue(parsing: text, maxDepth: maxDepth)
    }

    /// The error `text` gives, or nil when it parses.
    private func failure(_ text: String) -> JSONParseError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Accepted

    @Test(
        arguments: [
            ("null", JSONValue.null), ("true", true), ("false", false), ("0", 0), ("-0", 0), ("42", 42),
            ("\"\"", ""), ("[]", []), ("{}", [:]), (" \t\r\n 1 \n", 1),
            (#"[1,"a",true,null,{"k":[]}]"#, [1, "a", true, .null, ["k": []]]),
            (#"{"a":{"b":{"c":[1,[2,[3]]]}}}"#, ["a": ["b": ["c": [1, [2, [3]]]]]]),
        ] as [(String, JSONValue)])
    func everyKindOfValue_parses(text: String, value: JSONValue) throws {
        #expect(try parse(text) == value)
    }

    @Test(
        arguments: [
            ("1.5", 1.5), ("-0.25", -0.25), ("1e3", 1000), ("1E+2", 100), ("25e-1", 2.5), ("-1.5e-3", -0.0015),
            ("123456789012", 123_456_789_012), ("1.7976931348623157e308", 1.7976931348623157e308), ("5e-324", 5e-324),
            ("1e-400", 0),  // underflows to zero: finite, so accepted
        ] as [(String, Double)])
    func numbers_parseAsDoubles(text: String, value: Double) throws {
        #expect(try parse(text) == .number(value))
    }

    @Test func negativeZero_keepsItsSign() throws {
        let value = try #require(try parse("-0.0").doubleValue)
        #expect(value == 0 && value.sign == .minus)
    }

    @Test(arguments: [
        (#""\"\\\/\b\f\n\r\t""#, "\"\\/\u{8}\u{C}\n\r\t"),
        (#""\u0041\u00e9\u4E2D""#, "Aé中"),
        (#""\u0000""#, "\u{0}"),
        (#""\ud83d\ude00""#, "😀"),  // a surrogate pair
        (#""\uD834\uDD1E""#, "𝄞"),
        ("\"héllo 中文 😀\"", "héllo 中文 😀"),  // raw UTF-8
        ("\"\u{7F}\"", "\u{7F}"),  // DEL is not a control character in JSON
    ])
    func strings_decodeEscapesAndUnicode(text: String, value: String) throws {
        #expect(try parse(text) == .string(value))
    }

    @Test func aStringOfEveryPlainByte_parsesInOneRun() throws {
        let plain = String(repeating: "abc", count: 10_000)
        #expect(try parse("\"\(plain)\"") == .string(plain))
    }

    @Test func bytesAndStrings_parseTheSame() throws {
        let text = #"{"a":[1,2,{"b":"c"}]}"#
        let expected = try parse(text)
        #expect(try JSONValue(parsing: Array(text.utf8)) == expected)
        let fromBuffer = try Array(text.utf8).withUnsafeBytes { bytes throws(JSONParseError) in
            try JSONValue(parsing: bytes)
        }
        #expect(fromBuffer == expected)
    }

    // MARK: - Refused, with where and why

    @Test(arguments: [
        ("", 0, "unexpected end of input, expected a value"),
        ("   ", 3, "unexpected end of input, expected a value"),
        ("[1,]", 3, "unexpected ']', expected a value"),
        (#"{"a":1,}"#, 7, "unexpected '}', expected a string key"),
        ("[1 2]", 3, "unexpected '2', expected ',' or ']'"),
        (#"{"a" 1}"#, 5, "unexpected '1', expected ':'"),
        (#"{"a":1 "b":2}"#, 7, "unexpected '\"', expected ',' or '}'"),
        ("{a:1}", 1, "unexpected 'a', expected a string key"),
        ("['a']", 1, "unexpected ''', expected a value"),
        ("// c\n1", 0, "unexpected '/', expected a value"),
        ("1 2", 2, "unexpected '2' after the value"),
        ("{} x", 3, "unexpected 'x' after the value"),
        ("[1", 2, "unexpected end of input, expected ',' or ']'"),
        (#"{"a":1"#, 6, "unexpected end of input, expected ',' or '}'"),
        ("nul", 0, "invalid literal, expected 'null'"),
        ("True", 0, "unexpected 'T', expected a value"),
        ("tru", 0, "invalid literal, expected 'true'"),
        ("falsy", 0, "invalid literal, expected 'false'"),
        ("NaN", 0, "unexpected 'N', expected a value"),
        ("Infinity", 0, "unexpected 'I', expected a value"),
        ("1\u{0}", 1, "unexpected byte 0x0 after the value"),
    ])
    func malformedText_isRefused_atItsOffset(text: String, offset: Int, reason: String) {
        #expect(failure(text) == JSONParseError(offset: offset, reason: reason))
    }

    @Test(arguments: [
        ("01", 1, "invalid number, leading zero"),
        ("-", 1, "invalid number, expected a digit"),
        ("-a", 1, "invalid number, expected a digit"),
        ("+1", 0, "unexpected '+', expected a value"),
        (".5", 0, "unexpected '.', expected a value"),
        ("1.", 2, "invalid number, expected a digit after '.'"),
        ("1.e5", 2, "invalid number, expected a digit after '.'"),
        ("1e", 2, "invalid number, expected a digit in the exponent"),
        ("1e+", 3, "invalid number, expected a digit in the exponent"),
        ("1e309", 0, "number out of range"),
        ("-1e309", 0, "number out of range"),
        ("[0, 1e999]", 4, "number out of range"),
    ])
    func malformedNumbers_areRefused(text: String, offset: Int, reason: String) {
        #expect(failure(text) == JSONParseError(offset: offset, reason: reason))
    }

    @Test(arguments: [
        ("\"abc", 0, "unterminated string"),
        ("\"ab\\", 0, "unterminated string"),
        ("\"a\nb\"", 2, "raw control character in string (must be escaped)"),
        ("\"a\tb\"", 2, "raw control character in string (must be escaped)"),
        (#""\x""#, 1, "invalid escape '\\x'"),
        (#""\'""#, 1, "invalid escape '\\''"),
        (#""\u12""#, 5, "invalid \\u escape, expected a hex digit"),
        (#""\u12G4""#, 5, "invalid \\u escape, expected a hex digit"),
        ("\"\\u12", 5, "unexpected end of input in \\u escape"),
        (#""\ud83d""#, 1, "unpaired high surrogate in \\u escape"),
        (#""\ud83dx""#, 1, "unpaired high surrogate in \\u escape"),
        (#""\ud83d\u0041""#, 1, "unpaired high surrogate in \\u escape"),
        (#""\ude00""#, 1, "unpaired low surrogate in \\u escape"),
        (#"{"a":1,"a":2}"#, 7, "duplicate key \"a\""),
        (#"{"a":1,"\u0061":2}"#, 7, "duplicate key \"a\""),  // equal after decoding
    ])
    func malformedStrings_areRefused(text: String, offset: Int, reason: String) {
        #expect(failure(text) == JSONParseError(offset: offset, reason: reason))
    }

    @Test(
        arguments: [
            [0x22, 0xFF, 0x22],  // a byte that never starts UTF-8
            [0x22, 0xC3, 0x22],  // a sequence cut short
            [0x22, 0xC0, 0xAF, 0x22],  // an overlong '/'
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // a surrogate encoded as UTF-8
            [0x22, 0x61, 0x5C, 0x6E, 0xF8, 0x22],  // bad UTF-8 after an escape
        ] as [[UInt8]])
    func invalidUTF8_inAString_isRefused(bytes: [UInt8]) {
        #expect(throws: JSONParseError(offset: 0, reason: "invalid UTF-8 in string")) {
            try JSONValue(parsing: bytes)
        }
    }

    // MARK: - Depth

    @Test func nesting_upToTheLimit_parses_andOneMoreIsRefused() throws {
        let limit = 5
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(throws: Never.self) { try parse(deepest, maxDepth: limit) }
        let tooDeep = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        #expect(throws: JSONParseError(offset: limit, reason: "nesting deeper than \(limit)")) {
            try parse(tooDeep, maxDepth: limit)
        }
        let objects = String(repeating: #"{"a":"#, count: limit + 1) + "1" + String(repeating: "}", count: limit + 1)
        #expect(throws: JSONParseError(offset: 5 * limit, reason: "nesting deeper than \(limit)")) {
            try parse(objects, maxDepth: limit)
        }
    }

    @Test func siblings_doNotAddToTheDepth() throws {
        let wide = "[" + Array(repeating: "[[]]", count: 1000).joined(separator: ",") + "]"
        #expect(try parse(wide, maxDepth: 3).arrayValue?.count == 1000)
    }

    @Test func theDefaultLimit_refusesAHostileDocumentWithoutCrashing() {
        let hostile = String(repeating: "[", count: 100_000)
        #expect(
            failure(hostile)
                == JSONParseError(
                    offset: JSONValue.defaultMaxDepth, reason: "nesting deeper than \(JSONValue.defaultMaxDepth)"))
        let limit =
            String(repeating: "[", count: JSONValue.defaultMaxDepth)
            + String(repeating: "]", count: JSONValue.defaultMaxDepth)
        #expect(failure(limit) == nil)
    }

    @Test func errorDescription_namesTheByte() {
        #expect(JSONParseError(offset: 3, reason: "x").description == "byte 3: x")
    }
}
