import ServiceJSON
import Testing

/// The parser's fast path for numbers (mantissa and exponent, one rounding) must give the
/// very `Double` the standard library's correctly rounded `Double(String)` gives.
@Suite struct JSONNumberTests {
    private func parsed(_ text: String) throws -> Double {
        guard case .number(let value) = try JSONValue(parsing: text) else {
            Issue.record("\(text) is not a number")
            return .nan
        }
        return value
    }

    private func expectSameBits(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = Double(text)!
        let value = try parsed(text)
        #expect(
            value.bitPattern == expected.bitPattern, "\(text): \(value) vs \(expected)", sourceLocation: sourceLocation)
    }

    @Test(arguments: [
        "0", "-0", "0.0", "-0.0", "0e5", "-0e-5", "1", "-1", "9", "10", "0.1", "0.2", "0.3", "1.1", "2.675", "1e22",
        "1e23",
        "1e-22", "1e-23", "9007199254740992", "9007199254740993", "9007199254740991", "18014398509481985",
        "123456789012345678", "1234567890123456789", "12345678901234567890", "0.000001", "1.5e300",
        "1.7976931348623157e308",
        "2.2250738585072014e-308", "2.2250738585072011e-308", "4.9e-324", "5e-324", "1e-400", "3.14159265358979323846",
        "0.1000000000000000055511151231257827", "100000000000000000000000", "123.456e-7", "7.038531e-26",
        "9007199254740992e22", "9007199254740993e-22", "4503599627370497.5", "0.30000000000000004", "1E+2", "25e-1",
        "0.00000000000000000000000000000000000001", "1e00000000000000000000000000000000001", "1e-0000000000001",
    ])
    func edgeCases_matchDoubleFromString(text: String) throws {
        try expectSameBits(text)
    }

    @Test func randomDecimals_matchDoubleFromString() throws {
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<20_000 {
            let integerDigits = Int(generator.next() % 20)
            let fractionDigits = Int(generator.next() % 20)
            var text = generator.next() % 2 == 0 ? "" : "-"
            if integerDigits == 0 {
                text += "0"
            } else {
                text += String(1 + generator.next() % 9)
                for _ in 1..<integerDigits { text += String(generator.next() % 10) }
            }
            if fractionDigits > 0 {
                text += "."
                for _ in 0..<fractionDigits { text += String(generator.next() % 10) }
            }
            if generator.next() % 3 == 0 { text += "e" + String(Int(generator.next() % 80) - 40) }
            try expectSameBits(text)
        }
    }

    @Test func randomDoubles_roundTripThroughTheirDescription() throws {
        var generator = SplitMix64(seed: 42)
        var checked = 0
        while checked < 20_000 {
            let value = Double(bitPattern: generator.next())
            guard value.isFinite else { continue }
            checked += 1
            try expectSameBits(value.description)
            #expect(try parsed(value.description).bitPattern == value.bitPattern)
        }
    }

    @Test func shortIntegers_areExact() throws {
        for value in [0, 1, -1, 42, 65535, 1 << 31, -(1 << 40), 9_007_199_254_740_992, Int(Int32.min)] {
            #expect(try parsed(String(value)) == Double(value))
        }
    }

    @Test(arguments: ["1e400", "-1e309", "1" + String(repeating: "0", count: 400)])
    func outOfRange_isRefused(text: String) {
        #expect(throws: JSONParseError(offset: 0, reason: "number out of range")) { try JSONValue(parsing: text) }
    }
}

/// A small deterministic generator, so a failure reproduces.
struct SplitMix64: RandomNumberGenerator {
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
