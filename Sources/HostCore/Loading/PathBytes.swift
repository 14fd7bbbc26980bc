import ServiceJSON

/// File names are bytes, not text: a plugin file may be named with bytes that are not UTF-8.
/// The host carries every plugin path as a string that holds those bytes escaped, and turns it
/// back into the exact bytes at each system call (`stat`, `open`, `realpath`).
///
/// The escaping is reversible: a byte that does not belong to valid UTF-8 is `\xHH` (two
/// lowercase hex digits), so are the bytes of a control character (C0, DEL, C1: a newline in a
/// file name must not start a line of its own in `host inspect` or a log), and a backslash is
/// `\\`; everything else is the text itself. So a name that is valid UTF-8 and holds no
/// backslash or control character reads exactly as it is, and two different names never print
/// the same.
enum PathBytes {
    /// `bytes` escaped (see ``PathBytes``).
    static func escape(_ bytes: [UInt8]) -> String {
        // Nearly every path: printable ASCII without a backslash is itself (no per-scalar appends).
        if isPlain(bytes) { return String(decoding: bytes, as: UTF8.self) }
        var text = ""
        text.reserveCapacity(bytes.count)
        var position = 0
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if scalar == "\\" {
                    text += "\\\\"
                } else if scalar.properties.generalCategory == .control {
                    for byte in encoded { text += "\\x" + Hex.string(CollectionOfOne(byte)) }
                } else {
                    text.unicodeScalars.append(scalar)
                }
                position += encoded.count
            case .error(let length):
                for byte in bytes[position..<position + length] { text += "\\x" + Hex.string(CollectionOfOne(byte)) }
                position += length
            case .emptyInput:
                return text
            }
        }
    }

    /// `prefix` (escaped already) then `bytes` escaped: a scanned file's path, made in one
    /// string when the name is ASCII without a backslash (nearly every one; the name's own
    /// string and the concatenation were two allocations per plugin file at every start).
    static func escape(_ bytes: [UInt8], after prefix: String) -> String {
        guard isPlain(bytes) else { return prefix + escape(bytes) }
        var prefix = prefix
        return prefix.withUTF8 { head in
            String(unsafeUninitializedCapacity: head.count + bytes.count) { buffer in
                let count = buffer.initialize(fromContentsOf: head)
                return UnsafeMutableBufferPointer(rebasing: buffer[count...]).initialize(fromContentsOf: bytes) + count
            }
        }
    }

    /// Whether `bytes` escape to themselves: printable ASCII without a backslash.
    private static func isPlain(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }
    }

    /// `text` as a path the user typed (`--plugins DIR`, `host inspect FILE`): its UTF-8, escaped.
    static func escape(_ text: String) -> String { escape(Array(text.utf8)) }

    /// The bytes `path` (escaped by ``escape(_:)``) stands for.
    static func unescape(_ path: String) -> [UInt8] {
        let utf8 = Array(path.utf8)
        guard utf8.contains(UInt8(ascii: "\\")) else { return utf8 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 1 < utf8.count {
                if utf8[index + 1] == UInt8(ascii: "\\") {
                    bytes.append(UInt8(ascii: "\\"))
                    index += 2
                    continue
                }
                if utf8[index + 1] == UInt8(ascii: "x"), index + 3 < utf8.count,
                    let high = digit(utf8[index + 2]), let low = digit(utf8[index + 3])
                {
                    bytes.append(high << 4 | low)
                    index += 4
                    continue
                }
            }
            bytes.append(utf8[index])
            index += 1
        }
        return bytes
    }

    /// The NUL-terminated bytes of `path` for a system call.
    static func cString(_ path: String) -> [CChar] { unescape(path).map { CChar(bitPattern: $0) } + [0] }

    private static func digit(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
