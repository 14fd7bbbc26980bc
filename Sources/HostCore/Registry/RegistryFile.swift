/// The bytes of `registry.bin`: a versioned header, then one group per plugin directory, each
/// with its own length and checksum, so a reader checks and decodes only its own directories.
///
/// ```text
/// "SHRC" u16 format-version  blob host-version  u32 group-count  u64 checksum of the header
///   per group, in directory order:
///     u32 length  u64 checksum of the next `length` bytes
///     blob directory (ending in "/", or empty)  u32 entry-count
///       per entry: blob name  u64 device  u64 inode  i64 size  i64 mtime-ns  i64 ctime-ns
///                  bool defines-entry  [bool present, blob section]
/// ```
///
/// Integers are little-endian, a blob is a u32 length then its bytes, a checksum is
/// ``checksum(_:)``. The file is untrusted (anything that can write the state directory wrote
/// it): every read is bounds-checked (``WireReader``), counts are checked against the bytes left
/// before anything is reserved, and what fails a check is reported as a ``Problem``, never
/// trusted in part. A bad header or group walk makes the whole file unusable; a group that fails
/// its checksum or decode makes only that group unusable (``group(_:in:)`` throws for it).
enum RegistryFile {
    /// The file's name in the state directory.
    static let name = "registry.bin"
    /// The first four bytes.
    static let magic: [UInt8] = Array("SHRC".utf8)
    /// The layout's version; a file of another is rebuilt. 2: grouped by directory.
    static let formatVersion: UInt16 = 2
    /// The largest file read (a 1000-plugin registry is about 0.5 MiB).
    static let sizeLimit = 64 << 20
    /// The fewest bytes one entry takes: an empty name's length, five integers, two booleans.
    static let smallestEntry = 4 + 5 * 8 + 2
    /// The fewest bytes one group takes: its length, checksum, directory length and entry count.
    static let smallestGroup = 4 + 8 + 4 + 4

    /// Why a registry file, or one of its groups, is not used.
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

    /// One directory's group, found by walking the file but neither checked nor decoded yet.
    struct Group {
        /// The directory (escaped as ``PathBytes`` says, ending in `/`), as the group names it.
        var directory: String
        /// The whole group as written (length, checksum, bytes): what a save copies unchanged.
        var record: ArraySlice<UInt8>
        /// The bytes the checksum covers.
        var body: ArraySlice<UInt8>
        /// The checksum the file stores for `body`.
        var stored: UInt64

        /// Whether `body` matches its stored checksum.
        var isIntact: Bool { RegistryFile.checksum(body) == stored }
    }

    /// The bytes of a registry holding `entries`, for `hostVersion`, grouped by directory.
    static func encode(_ entries: [RegistryKey: RegistryEntry], hostVersion: String = HostVersion.string) -> [UInt8] {
        encode(entries, keeping: [], hostVersion: hostVersion)
    }

    /// The bytes of a registry holding `entries` and the groups `kept` as they were (whose
    /// directories `entries` must not hold).
    static func encode(_ entries: [RegistryKey: RegistryEntry], keeping kept: [Group], hostVersion: String = HostVersion.string) -> [UInt8] {
        var byDirectory: [String: [(name: Substring, key: RegistryKey, entry: RegistryEntry)]] = [:]
        for (key, entry) in entries {
            let (directory, name) = split(key.path)
            byDirectory[directory, default: []].append((name, key, entry))
        }
        // Directory order, and name order inside a group: the same registry is the same bytes.
        var records: [(directory: String, record: [UInt8])] = kept.map { ($0.directory, Array($0.record)) }
        for (directory, files) in byDirectory {
            var body = WireWriter(capacity: 64 + files.count * 1024)
            body.string(directory)
            body.u32(UInt32(files.count))
            for file in files.sorted(by: { $0.name < $1.name }) {
                body.string(String(file.name))
                body.u64(file.key.identity.device)
                body.u64(file.key.identity.inode)
                body.i64(file.key.identity.size)
                body.i64(file.key.identity.modified)
                body.i64(file.key.identity.changed)
                body.bool(file.entry.definesEntry)
                body.bool(file.entry.section != nil)
                if let section = file.entry.section { body.blob(section) }
            }
            let bytes = body.bytes.dropFirst(Wire.headerSize)
            var record: [UInt8] = []
            record.reserveCapacity(12 + bytes.count)
            append(UInt64(bytes.count), size: 4, to: &record)
            append(checksum(bytes), size: 8, to: &record)
            record += bytes
            records.append((directory, record))
        }
        var header = WireWriter(capacity: 64)
        for byte in magic { header.u8(byte) }
        header.u16(formatVersion)
        header.string(hostVersion)
        header.u32(UInt32(records.count))
        var bytes = Array(header.bytes.dropFirst(Wire.headerSize))
        append(checksum(bytes[...]), size: 8, to: &bytes)
        for (_, record) in records.sorted(by: { $0.directory < $1.directory }) { bytes += record }
        return bytes
    }

    /// The groups of a registry file, or why the file cannot be used: the header is checked and
    /// every group's length walked, but no group's checksum is computed nor its entries read.
    static func groups(_ bytes: [UInt8], hostVersion: String = HostVersion.string) throws(Problem) -> [Group] {
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
        do throws(WireError) {
            let count = Int(try reader.u32("group count"))
            let headerEnd = bytes.count - reader.remaining
            guard try reader.u64("header checksum") == checksum(bytes[..<headerEnd]) else {
                throw WireError.malformed("header checksum mismatch")
            }
            // Checked before reserving: a count the bytes cannot hold is corruption, not a reason to allocate.
            guard count <= reader.remaining / smallestGroup else {
                throw WireError.malformed("\(count) groups in \(reader.remaining) bytes")
            }
            var groups: [Group] = []
            groups.reserveCapacity(count)
            for _ in 0..<count {
                let start = bytes.count - reader.remaining
                let length = Int(try reader.u32("a group's length"))
                let stored = try reader.u64("a group's checksum")
                let body = try reader.bytes(length, "a group")
                // The directory is read unchecked, to find the group; it is checked with the rest.
                let directory = try directoryName(body)
                groups.append(Group(directory: directory, record: bytes[start..<(start + 12 + length)], body: body, stored: stored))
            }
            try reader.finish("the groups")
            return groups
        } catch {
            throw .corrupt(detail(error))
        }
    }

    /// The directory a group's body starts with (bounds-checked, not yet checksummed).
    private static func directoryName(_ body: ArraySlice<UInt8>) throws(WireError) -> String {
        guard body.count >= 4 else { throw .truncated("a group's directory") }
        var length = 0
        for (index, byte) in body.prefix(4).enumerated() { length |= Int(byte) << (8 * index) }
        guard length <= body.count - 4 else { throw .truncated("a group's directory") }
        let start = body.startIndex + 4
        return String(decoding: body[start..<(start + length)], as: UTF8.self)
    }

    /// The entries of one group, or why it cannot be used (checksum, bounds, a repeated name).
    static func entries(of group: Group) throws(Problem) -> [RegistryKey: RegistryEntry] {
        guard group.isIntact else { throw .corrupt("checksum mismatch in the group of \(group.directory)") }
        var reader = WireReader(Array(group.body))
        do throws(WireError) {
            let directory = try reader.string("a group's directory")
            let count = Int(try reader.u32("entry count"))
            guard count <= reader.remaining / smallestEntry else {
                throw WireError.malformed("\(count) entries in \(reader.remaining) bytes")
            }
            var entries: [RegistryKey: RegistryEntry] = [:]
            entries.reserveCapacity(count)
            for index in 0..<count {
                let name = try reader.blobSlice("an entry's name")
                guard !name.isEmpty, !name.contains(UInt8(ascii: "/")) else {
                    throw WireError.malformed("entry \(index) of \(directory) is not a file name")
                }
                let identity = FileIdentity(
                    device: try reader.u64("device"), inode: try reader.u64("inode"), size: try reader.i64("size"),
                    modified: try reader.i64("mtime"), changed: try reader.i64("ctime"))
                let definesEntry = try reader.bool("entry symbol")
                let section = try reader.bool("section presence") ? try reader.blobSlice("section") : nil
                let path = directory + String(decoding: name, as: UTF8.self)
                let key = RegistryKey(path: path, identity: identity)
                let entry = RegistryEntry(definesEntry: definesEntry, section: section.map(Array.init))
                guard entries.updateValue(entry, forKey: key) == nil else { throw WireError.malformed("entry \(index) repeats \(path)") }
            }
            try reader.finish("the entries of \(directory)")
            return entries
        } catch {
            throw .corrupt(detail(error))
        }
    }

    /// The entries of a registry file, or why it cannot be used. With `directory` (a path as
    /// ``PathBytes`` escapes it, ending in `/`), only its group is checked and decoded; without,
    /// every group, and any that fails makes the whole file fail.
    static func decode(
        _ bytes: [UInt8], hostVersion: String = HostVersion.string, onlyIn directory: String? = nil
    ) throws(Problem) -> [RegistryKey: RegistryEntry] {
        var entries: [RegistryKey: RegistryEntry] = [:]
        var seen = Set<String>()
        for group in try groups(bytes, hostVersion: hostVersion) where directory == nil || group.directory == directory {
            guard seen.insert(group.directory).inserted else { throw .corrupt("\(group.directory) has two groups") }
            let found = try Self.entries(of: group)
            if entries.isEmpty { entries = found } else { entries.merge(found) { mine, _ in mine } }
        }
        return entries
    }

    /// A path's directory (with its final `/`; empty for a bare name) and its name.
    static func split(_ path: String) -> (directory: String, name: Substring) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("", path[...]) }
        let after = path.utf8.index(after: slash)
        return (String(path[..<after]), path[after...])
    }

    private static func append(_ value: UInt64, size: Int, to bytes: inout [UInt8]) {
        for index in 0..<size { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * index))) }
    }

    /// A reader's error in the registry's words (WireError's own speak of frames).
    private static func detail(_ error: WireError) -> String {
        switch error.code {
        case .truncated(let what): "cut short in \(what)"
        case .malformed(let what): what
        default: "\(error)"
        }
    }

    /// 64-bit FNV-1a over 8-byte little-endian words, then the last bytes one by one: catches a
    /// flipped or cut byte (every step is a bijection of the state, so one changed word always
    /// changes the result) at an eighth of the byte-wise loop's multiplications. Not against an
    /// attacker, who can write a valid file only where they could already replace the plugins'
    /// metadata by writing the state directory.
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let prime: UInt64 = 0x100_0000_01b3
        bytes.withUnsafeBytes { raw in
            let words = raw.count / 8
            for index in 0..<words {
                hash = (hash ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))) &* prime
            }
            for index in (words * 8)..<raw.count { hash = (hash ^ UInt64(raw[index])) &* prime }
        }
        return hash
    }
}
