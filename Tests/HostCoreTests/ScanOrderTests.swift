import Testing

@testable import HostCore

/// The scanner's name order (by `memcmp`) is byte order, `lexicographicallyPrecedes`, for every
/// byte (non-UTF-8 names included) and for names that are prefixes of others.
@Suite struct ScanOrderTests {
    @Test func precedes_isByteOrder() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = [0x00, 0x2E, 0x41, 0x61, 0x7F, 0x80, 0xC3, 0xFF]
        for _ in 0..<2000 {
            let a = (0..<Int.random(in: 0...4, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            let b = (0..<Int.random(in: 0...4, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            #expect(PluginScanner.precedes(a, b) == a.lexicographicallyPrecedes(b), "\(a) \(b)")
        }
        #expect(PluginScanner.precedes(Array("a.so".utf8), Array("ab.so".utf8)))
        #expect(PluginScanner.precedes(Array("b.so".utf8), [0xFF] + Array(".so".utf8)))
        #expect(!PluginScanner.precedes(Array("a.so".utf8), Array("a.so".utf8)))
    }
}
