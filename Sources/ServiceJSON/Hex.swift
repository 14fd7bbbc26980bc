/// Hexadecimal digits both ways: the one rule the parsers and printers of hex in the package
/// share (JSON's `\u` escapes, digests, key ids, store keys, URL escapes, device tokens).
public enum Hex {
    /// The value of one hex digit, either case; nil for any other byte.
    @inlinable @inline(__always) public static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }

    /// The digit (ASCII) of the lowest four bits of `value`, lower case unless `uppercase`.
    @inlinable @inline(__always) public static func digit<T: BinaryInteger>(_ value: T, uppercase: Bool = false)
        -> UInt8
    {
        let nibble = UInt8(truncatingIfNeeded: value & 15)
        return nibble < 10
            ? UInt8(ascii: "0") &+ nibble : (uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")) &+ nibble &- 10
    }

    /// `bytes` as two hex digits each, lower case unless `uppercase` (`sha256sum`'s form).
    public static func string<Bytes: Sequence>(_ bytes: Bytes, uppercase: Bool = false) -> String
    where Bytes.Element == UInt8 {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digit(byte >> 4, uppercase: uppercase))
            text.append(digit(byte, uppercase: uppercase))
        }
        return String(decoding: text, as: UTF8.self)
    }
}
