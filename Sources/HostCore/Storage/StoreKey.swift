import ServiceJSON

/// How a store key (any bytes but NUL) becomes a file name, and back.
///
/// ASCII letters, digits, `_`, `-` and `.` stay as they are; every other byte, and a `.` at
/// the start, becomes `%XX` (upper-case hex). So a name never contains `/` or NUL, is never
/// `.` or `..`, never starts with a dot (the store's temporary files do), and reads as the key
/// for ordinary keys (`queue.items` is stored as `queue.items`). The mapping is one-to-one:
/// ``decode(_:)`` accepts only names ``encode(_:)`` produces.
enum StoreKey {
    /// Why `key` cannot be stored (empty, holds NUL), or nil when it can.
    static func problem(with key: some Collection<UInt8>) -> String? {
        if key.isEmpty { return "it is empty" }
        if key.contains(0) { return "it holds a NUL byte" }
        return nil
    }

    /// The file name for `key`, which must have no ``problem(with:)``.
    static func encode(_ key: some Collection<UInt8>) -> String {
        var name: [UInt8] = []
        name.reserveCapacity(key.count)
        for (index, byte) in key.enumerated() {
            if isKept(byte) && !(index == 0 && byte == UInt8(ascii: ".")) {
                name.append(byte)
            } else {
                name.append(UInt8(ascii: "%"))
                name.append(Hex.digit(byte >> 4, uppercase: true))
                name.append(Hex.digit(byte, uppercase: true))
            }
        }
        return String(decoding: name, as: UTF8.self)
    }

    /// The key stored under the file name `name`, or nil when `name` is not one ``encode(_:)``
    /// makes (a temporary file, or something else that does not belong here).
    static func decode(_ name: String) -> [UInt8]? {
        let bytes = Array(name.utf8)
        var key: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = Hex.value(bytes[index + 1]),
                    let low = Hex.value(bytes[index + 2])
                else { return nil }
                key.append(high << 4 | low)
                index += 3
            } else {
                guard isKept(byte) else { return nil }
                key.append(byte)
                index += 1
            }
        }
        // Only the canonical spelling: "%41" and "A" must not both name key "A".
        guard problem(with: key) == nil, encode(key) == name else { return nil }
        return key
    }

    private static func isKept(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default:
            false
        }
    }
}
