/// The bytes of `registry.bin`: a versioned header, the entries, a checksum.
///
/// ```text
/// "SHRC" u16 format-version  blob host-version  u32 entry-count
///   per entry: blob path  u64 device  u64 inode  i64 size  i64 mtime-ns  i64 ctime-ns
///              bool defines-entry  [bool present, blob section]
/// u64 FNV-1a of every byte before it
/// ```
///
/// Integers are little-endian, a blob is a u32 length then its bytes. The file is untrusted
/// (anything that can write the state directory wrote it): every read is bounds-checked
/// (``WireReader``), counts are checked against the bytes left before anything is reserved,
/// and a file that fails any check is reported as a ``Problem``, never trusted in part.
enum RegistryFile {
    /// The file's name in the state directory.
    static let name = "registry.bin"
    /// The first four bytes.
    static let magic: [UInt8] = Array("SHRC".utf8)
    /// The layout's version; a file of another is rebuilt.
    static let formatVersion: UInt16 = 1
    /// The largest file read (a 1000-plugin registry is about 1 MiB).
    static let sizeLimit = 64 << 20
    /// The fewest bytes one entry takes: an empty path's length, five integers, two booleans.
    static let smallestEntry = 4 + 5 * 8 + 2

    /// Why a registry file is not used.
    enum Problem: Error, Equatable, CustomStringConvertible {
        /// It does not start with the magic or is cut short before its header ends.
        case notARegistry
        /// Written in another layout or by another host version.
        case otherVersion(format: UInt16, host: String)
        /// It fails the checksum or a bounds check: corrupt or truncated.
        case corrupt(String)

        var description: String {
            switch self {
            case .notARegistry: "not a registry file (no SHRC header)"
            case .otherVersion(let format, let host): "written by \(host) in format \(format), this is \(HostVersion.string) format \(RegistryFile.formatVersion)"
            case .corrupt(let detail): "corrupt or truncated: \(detail)"
            }
        }
    }

    /// The bytes of a registry holding `entries`, for `hostVersion`.
    static func encode(_ entries: [RegistryKey: RegistryEntry], hostVersion: String = HostVersion.string) -> [UInt8] {
        var writer = WireWriter(capacity: 64 + entries.count * 2048)
        for byte in magic { writer.u8(byte) }
        writer.u16(formatVersion)
        writer.string(hostVersion)
        writer.u32(UInt32(entries.count))
        // In path order, so the same registry is the same bytes.
        for (key, entry) in entries.sorted(by: { $0.key.path < $1.key.path }) {
            writer.string(key.path)
            writer.u64(key.identity.device)
            writer.u64(key.identity.inode)
            writer.i64(key.identity.size)
            writer.i64(key.identity.modified)
            writer.i64(key.identity.changed)
            writer.bool(entry.definesEntry)
            writer.bool(entry.section != nil)
            if let section = entry.section { writer.blob(section) }
        }
        var bytes = Array(writer.bytes.dropFirst(Wire.headerSize))
        let sum = checksum(bytes[...])
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: sum >> UInt64(shift))) }
        return bytes
    }

    /// The entries of a registry file, or why it cannot be used. With `directory` (a path as
    /// ``PathBytes`` escapes it, ending in `/`), only the entries of files directly in it are
    /// built; every entry is still read and checked, so a file is used whole or not at all.
    static func decode(
        _ bytes: [UInt8], hostVersion: String = HostVersion.string, onlyIn directory: String? = nil
    ) throws(Problem) -> [RegistryKey: RegistryEntry] {
        guard bytes.count >= magic.count + 2, bytes.starts(with: magic) else { throw .notARegistry }
        var reader = WireReader(bytes)
        var format: UInt16 = 0
        var writer = ""
        do throws(WireError) {
            for _ in magic { _ = try reader.u8("magic") }
            format = try reader.u16("format version")
            // Another layout may differ from here on: its version is all that is read.
            if format == formatVersion { writer = try reader.string("host version") }
        } catch {
            throw .corrupt(detail(error))
        }
        guard format == formatVersion else { throw .otherVersion(format: format, host: "another host version") }
        guard writer == hostVersion else { throw .otherVersion(format: formatVersion, host: writer) }
        guard bytes.count >= 8 + magic.count + 2 else { throw .corrupt("no checksum") }
        let body = bytes[..<(bytes.count - 8)]
        var stored: UInt64 = 0
        for (index, byte) in bytes.suffix(8).enumerated() { stored |= UInt64(byte) << UInt64(8 * index) }
        guard checksum(body) == stored else { throw .corrupt("checksum mismatch") }
        reader = WireReader(Array(body))
        do throws(WireError) {
            for _ in magic { _ = try reader.u8("magic") }
            _ = try reader.u16("format version")
            _ = try reader.blob("host version")
            let count = Int(try reader.u32("entry count"))
            // Checked before reserving: a count the bytes cannot hold is corruption, not a reason to allocate.
            guard count <= reader.remaining / smallestEntry else {
                throw WireError.malformed("\(count) entries in \(reader.remaining) bytes")
            }
            var entries: [RegistryKey: RegistryEntry] = [:]
            entries.reserveCapacity(count)
            let prefix = directory.map { Array($0.utf8) }
            for index in 0..<count {
                let pathBytes = try reader.blobSlice("an entry's path")
                let identity = FileIdentity(
                    device: try reader.u64("device"), inode: try reader.u64("inode"), size: try reader.i64("size"),
                    modified: try reader.i64("mtime"), changed: try reader.i64("ctime"))
                let definesEntry = try reader.bool("entry symbol")
                let section = try reader.bool("section presence") ? try reader.blobSlice("section") : nil
                // Read and checked like the others, but built only when it is in `directory`.
                if let prefix, !(pathBytes.starts(with: prefix) && !pathBytes.dropFirst(prefix.count).contains(UInt8(ascii: "/"))) {
                    continue
                }
                let path = String(decoding: pathBytes, as: UTF8.self)
                let key = RegistryKey(path: path, identity: identity)
                let entry = RegistryEntry(definesEntry: definesEntry, section: section.map(Array.init))
                guard entries.updateValue(entry, forKey: key) == nil else { throw WireError.malformed("entry \(index) repeats \(path)") }
            }
            try reader.finish("the entries")
            return entries
        } catch {
            throw .corrupt(detail(error))
        }
    }

    /// A reader's error in the registry's words (WireError's own speak of frames).
    private static func detail(_ error: WireError) -> String {
        switch error.code {
        case .truncated(let what): "cut short in \(what)"
        case .malformed(let what): what
        default: "\(error)"
        }
    }

    /// 64-bit FNV-1a: catches a flipped or cut byte (not an attacker, who can write a valid file
    /// only where they could already replace the plugins' metadata by writing the state directory).
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}
