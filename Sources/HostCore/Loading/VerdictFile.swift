/// The verdicts of ``PluginTrust`` kept across starts (``TrustCache``): one file, `STORE/.verdicts`
/// in the shared store of copies, read once per start, so a cached check costs a plugin no read
/// of its own.
///
/// Bytes another process wrote: parsed as untrusted (the `minisign` fuzz target), every length
/// checked, anything wrong a ``FormatError`` with its reason, never a trap. A file that does not
/// parse whole (or whose checksum does not match) counts as no verdict at all: every file is
/// checked again and the file written anew.
///
/// Format (numbers little-endian): `SHVERDT1`; the FNV-1a 64 of the rest; then records, each a
/// kind byte and the plugin file's identity (five 8-byte numbers: device, inode, size,
/// modification and change time), then for kind 1 (a pinned digest) the 32-byte SHA-256, for
/// kind 2 (a signature that verified) the signature file's identity (five numbers), the key id
/// (8 bytes), the public key it verified with (32), whether it was prehashed (0 or 1), and the
/// trusted comment (a 2-byte length, then its bytes).
enum VerdictFile {
    /// A signature that verified: what it was, and the key that verified it.
    struct Signature: Sendable, Equatable {
        /// The identity of the signature file (`libX.so.minisig`) whose bytes verified.
        let file: FileIdentity
        /// The signature's 8-byte key id.
        let keyID: [UInt8]
        /// The 32-byte Ed25519 key it verified with.
        let key: [UInt8]
        /// Whether it was over the file's BLAKE2b-512 (`ED`).
        let prehashed: Bool
        /// The trusted comment's bytes.
        let trustedComment: [UInt8]
    }

    /// What is known of one plugin file (by its identity).
    struct Entry: Sendable, Equatable {
        /// The file's SHA-256 (32 bytes), when a pin asked for it.
        var sha256: [UInt8]?
        /// Its signature, when one verified.
        var signature: Signature?

        /// `self` with the fields `newer` has.
        func updated(by newer: Entry) -> Entry {
            Entry(sha256: newer.sha256 ?? sha256, signature: newer.signature ?? signature)
        }
    }

    /// Why bytes are not a verdict file.
    struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    static let magic = Array("SHVERDT1".utf8)
    /// The largest file read: a record is at most ~16 KiB (a trusted comment is less than
    /// minisign's 16 KiB file), and a store holds the versions of its user's plugin files.
    static let maxFileSize = 64 << 20

    private static let digestKind: UInt8 = 1
    private static let signatureKind: UInt8 = 2

    /// The file holding `entries`.
    static func encode(_ entries: [FileIdentity: Entry]) -> [UInt8] {
        var body: [UInt8] = []
        for (identity, entry) in entries {
            if let digest = entry.sha256, digest.count == 32 {
                body.append(digestKind)
                append(identity, to: &body)
                body += digest
            }
            if let signature = entry.signature, signature.keyID.count == 8, signature.key.count == 32,
                signature.trustedComment.count <= Minisign.maxFileSize
            {
                body.append(signatureKind)
                append(identity, to: &body)
                append(signature.file, to: &body)
                body += signature.keyID
                body += signature.key
                body.append(signature.prehashed ? 1 : 0)
                let count = UInt16(signature.trustedComment.count)
                body += [UInt8(truncatingIfNeeded: count), UInt8(truncatingIfNeeded: count >> 8)]
                body += signature.trustedComment
            }
        }
        var file = magic
        append(checksum(body[...]), to: &file)
        return file + body
    }

    /// The entries of a whole file.
    static func decode(_ bytes: [UInt8]) throws(FormatError) -> [FileIdentity: Entry] {
        guard bytes.count <= maxFileSize else {
            throw FormatError(reason: "the file is \(bytes.count) bytes; the limit is \(maxFileSize)")
        }
        guard bytes.count >= magic.count + 8, bytes.starts(with: magic) else {
            throw FormatError(reason: "the file does not start with \(String(decoding: magic, as: UTF8.self))")
        }
        var header = Reader(bytes[magic.count..<magic.count + 8])
        let expected = try header.number()
        let body = bytes[(magic.count + 8)...]
        guard checksum(body) == expected else { throw FormatError(reason: "the checksum does not match") }
        return try decode(records: body)
    }

    /// The entries of the records `bytes` (a file's body, its checksum checked).
    static func decode(records bytes: ArraySlice<UInt8>) throws(FormatError) -> [FileIdentity: Entry] {
        var reader = Reader(bytes)
        var entries: [FileIdentity: Entry] = [:]
        while !reader.isAtEnd {
            let kind = try reader.byte()
            let identity = try reader.identity()
            var entry = Entry()
            switch kind {
            case digestKind:
                entry.sha256 = Array(try reader.bytes(32))
            case signatureKind:
                let file = try reader.identity()
                let keyID = Array(try reader.bytes(8))
                let key = Array(try reader.bytes(32))
                let flag = try reader.byte()
                guard flag <= 1 else {
                    throw FormatError(reason: "a signature's prehashed flag is \(flag), not 0 or 1")
                }
                let count = Int(try reader.byte()) | Int(try reader.byte()) << 8
                guard count <= Minisign.maxFileSize else {
                    throw FormatError(
                        reason: "a trusted comment of \(count) bytes; the limit is \(Minisign.maxFileSize)")
                }
                entry.signature = Signature(
                    file: file, keyID: keyID, key: key, prehashed: flag == 1,
                    trustedComment: Array(try reader.bytes(count))
                )
            default:
                throw FormatError(reason: "a record of kind \(kind), neither 1 (digest) nor 2 (signature)")
            }
            entries[identity] = entries[identity].map { $0.updated(by: entry) } ?? entry
        }
        return entries
    }

    /// FNV-1a 64 of `bytes`: catches a file changed by anything but a host (a torn or flipped
    /// byte), not an adversary (whoever can write the store can write the copies in it).
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    private static func append(_ identity: FileIdentity, to bytes: inout [UInt8]) {
        append(identity.device, to: &bytes)
        append(identity.inode, to: &bytes)
        append(UInt64(bitPattern: identity.size), to: &bytes)
        append(UInt64(bitPattern: identity.modified), to: &bytes)
        append(UInt64(bitPattern: identity.changed), to: &bytes)
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// Reads a body front to back; asking past its end is a ``FormatError``.
    private struct Reader {
        private let data: ArraySlice<UInt8>
        /// Where the next read starts.
        private var position: Int

        init(_ bytes: ArraySlice<UInt8>) {
            data = bytes
            position = bytes.startIndex
        }

        var isAtEnd: Bool { position >= data.endIndex }

        /// The next `count` bytes.
        mutating func bytes(_ count: Int) throws(FormatError) -> ArraySlice<UInt8> {
            guard count >= 0, data.endIndex - position >= count else {
                throw FormatError(
                    reason: "a record ends early (\(count) bytes wanted at byte \(position - data.startIndex))")
            }
            defer { position += count }
            return data[position..<position + count]
        }

        mutating func byte() throws(FormatError) -> UInt8 { try bytes(1).first ?? 0 }

        mutating func number() throws(FormatError) -> UInt64 {
            var value: UInt64 = 0
            for (index, byte) in try bytes(8).enumerated() { value |= UInt64(byte) << UInt64(8 * index) }
            return value
        }

        mutating func identity() throws(FormatError) -> FileIdentity {
            FileIdentity(
                device: try number(), inode: try number(), size: Int64(bitPattern: try number()),
                modified: Int64(bitPattern: try number()), changed: Int64(bitPattern: try number()))
        }
    }
}
