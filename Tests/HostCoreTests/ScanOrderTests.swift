import Testing

@testable import HostCore

/// The scanner's name order (by `memcmp` over one buffer) is byte order, `lexicographicallyPrecedes`, for every
/// byte (non-UTF-8 names included) and for names that are prefixes of others.
@Suite struct ScanOrderTests {
    @Test func inByteOrder_isByteOrder() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = [0x00, 0x2E, 0x41, 0x61, 0x7F, 0x80, 0xC3, 0xFF]
        for _ in 0..<200 {
            let names = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            }
            #expect(PluginScanner.inByteOrder(names) == names.sorted { $0.lexicographicallyPrecedes($1) }, "\(names)")
        }
        let fixed = [Array("b.so".utf8), [0xFF] + Array(".so".utf8), Array("ab.so".utf8), Array("a.so".utf8)]
        #expect(
            PluginScanner.inByteOrder(fixed) == [
                Array("a.so".utf8), Array("ab.so".utf8), Array("b.so".utf8), [0xFF] + Array(".so".utf8),
            ])
    }
}
