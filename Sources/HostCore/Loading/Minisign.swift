/// minisign's public keys and signature files (<https://jedisct1.github.io/minisign/>), read from
/// untrusted bytes: every length is checked before it is used, and bad input is a
/// ``Minisign/FormatError`` with its reason, never a trap (the `minisign` fuzz target).
///
/// A public key is `untrusted comment: …` then the base64 of `Ed`, an 8-byte key id and the
/// 32-byte Ed25519 key (the line alone is the form `minisign -P` takes). A signature file is
/// four lines: `untrusted comment: …`; the base64 of the algorithm (`Ed` signs the file
/// itself, the legacy form `minisign -S -l` writes; `ED` signs its BLAKE2b-512, the default),
/// the key id and the 64-byte signature; `trusted comment: …`; the base64 of the global
/// signature, over the signature and the trusted comment.
enum Minisign {
    /// Why bytes are not a minisign key or signature.
    struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// The largest signature or key file read: minisign's comments are at most 1 KiB and 8 KiB.
    static let maxFileSize = 16 << 10

    /// A minisign public key.
    struct PublicKey: Sendable, Equatable {
        /// The 8-byte key id, as stored.
        let keyID: [UInt8]
        /// The 32-byte Ed25519 key.
        let key: [UInt8]

        /// The key id as minisign prints it: 16 uppercase hex digits of the little-endian number.
        var keyIDText: String { Minisign.keyIDText(keyID) }

        /// A key from the base64 line alone (`RWQ…`).
        init(base64 text: String) throws(FormatError) {
            let bytes = try Minisign.base64(Array(text.utf8), what: "the public key")
            guard bytes.count == 42 else {
                throw FormatError(reason: "the public key is \(bytes.count) bytes, not 42 (Ed, key id, key)")
            }
            guard bytes[0] == UInt8(ascii: "E"), bytes[1] == UInt8(ascii: "d") else {
                throw FormatError(reason: "the public key's algorithm is not Ed (Ed25519)")
            }
            keyID = Array(bytes[2..<10])
            key = Array(bytes[10..<42])
        }

        /// A key from a public key file (`minisign.pub`): an optional `untrusted comment:` line,
        /// then the base64 line.
        init(file bytes: [UInt8]) throws(FormatError) {
            guard bytes.count <= Minisign.maxFileSize else {
                throw FormatError(reason: "the key file is \(bytes.count) bytes; the limit is \(Minisign.maxFileSize)")
            }
            var lines = Minisign.lines(bytes)
            if let first = lines.first, first.starts(with: Minisign.untrustedPrefix) { lines.removeFirst() }
            guard let line = lines.first(where: { !$0.isEmpty }) else {
                throw FormatError(reason: "the key file has no key line")
            }
            try self.init(base64: String(decoding: line, as: UTF8.self))
        }
    }

    /// A parsed signature file.
    struct Signature: Sendable, Equatable {
        /// Whether the signature is over the file's BLAKE2b-512 (`ED`) rather than the file (`Ed`).
        let prehashed: Bool
        /// The 8-byte id of the key that made it.
        let keyID: [UInt8]
        /// The 64-byte Ed25519 signature.
        let signature: [UInt8]
        /// The trusted comment's text (what follows `trusted comment: `), as bytes.
        let trustedComment: [UInt8]
        /// The 64-byte signature of `signature` followed by `trustedComment`.
        let globalSignature: [UInt8]

        var keyIDText: String { Minisign.keyIDText(keyID) }
        var trustedCommentText: String { String(decoding: trustedComment, as: UTF8.self) }

        init(file bytes: [UInt8]) throws(FormatError) {
            guard bytes.count <= Minisign.maxFileSize else {
                throw FormatError(
                    reason: "the signature file is \(bytes.count) bytes; the limit is \(Minisign.maxFileSize)")
            }
            let lines = Minisign.lines(bytes)
            guard lines.count >= 4 else {
                throw FormatError(reason: "the signature file has \(lines.count) lines, not 4 (truncated?)")
            }
            guard lines[0].starts(with: Minisign.untrustedPrefix) else {
                throw FormatError(reason: "line 1 does not start with \"untrusted comment: \"")
            }
            let signatureBytes = try Minisign.base64(lines[1], what: "the signature (line 2)")
            guard signatureBytes.count == 74 else {
                throw FormatError(
                    reason: "the signature is \(signatureBytes.count) bytes, not 74 (algorithm, key id, signature)")
            }
            switch (signatureBytes[0], signatureBytes[1]) {
            case (UInt8(ascii: "E"), UInt8(ascii: "d")): prehashed = false
            case (UInt8(ascii: "E"), UInt8(ascii: "D")): prehashed = true
            default: throw FormatError(reason: "the signature's algorithm is neither Ed nor ED")
            }
            keyID = Array(signatureBytes[2..<10])
            signature = Array(signatureBytes[10..<74])
            guard lines[2].starts(with: Minisign.trustedPrefix) else {
                throw FormatError(reason: "line 3 does not start with \"trusted comment: \"")
            }
            trustedComment = Array(lines[2].dropFirst(Minisign.trustedPrefix.count))
            let global = try Minisign.base64(lines[3], what: "the global signature (line 4)")
            guard global.count == 64 else {
                throw FormatError(reason: "the global signature is \(global.count) bytes, not 64")
            }
            globalSignature = global
            for extra in lines.dropFirst(4) where !extra.isEmpty {
                throw FormatError(reason: "the signature file has text after its 4 lines")
            }
        }
    }

    static let untrustedPrefix = Array("untrusted comment: ".utf8)
    static let trustedPrefix = Array("trusted comment: ".utf8)

    /// The lines of `bytes`, each without its `\n` or `\r\n`.
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
    }

    /// 16 uppercase hex digits: the id's eight bytes read as a little-endian number.
    static func keyIDText(_ id: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in id.reversed() {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Standard base64 with padding (what minisign writes), strictly: no spaces, no other letters.
    static func base64<Bytes: Collection>(_ text: Bytes, what: String) throws(FormatError) -> [UInt8]
    where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for character in text {
            let value: UInt32
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(character - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="):
                padding += 1
                continue
            default:
                throw FormatError(reason: "\(what) is not base64 (byte \(character))")
            }
            guard padding == 0 else { throw FormatError(reason: "\(what) has base64 after its padding") }
            accumulator = (accumulator << 6 | value) & 0xFFFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        guard (text.count % 4) == 0, padding <= 2, bits < 6 else {
            throw FormatError(reason: "\(what) is not whole base64 (\(text.count) characters)")
        }
        return out
    }
}
