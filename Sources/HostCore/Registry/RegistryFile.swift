/// The bytes of `registry.bin`: a versioned header with a directory of the groups, then one
/// group per plugin directory, each with its own length and checksum, so a reader reads (with
/// `pread`, ``RegistryReader``), checks and decodes only the header and its own directories' groups.
///
/// ```text
/// "SHRC" u16 format-version  u32 header-length  blob host-version  u32 group-count
///   per group, in directory order: blob directory  u64 offset  u32 length
/// u64 checksum of the header before it
/// per group, at its offset, one after the other to the end of the file:
///   u32 length  u64 checksum of the next `length` bytes
///   blob directory (ending in "/", or empty)  u32 entry-count
///     per entry: blob name  u64 device  u64 inode  i64 size  i64 mtime-ns  i64 ctime-ns
///                bool defines-entry  bool present  [blob section  u64 section-address]
/// ```
///
/// Integers are little-endian, a blob is a u32 length then its bytes, a checksum is
/// ``checksum(_:)``; a group's offset counts from the file's start, its length covers its own
/// length and checksum fields. The file is untrusted (anything that can write the state
/// directory wrote it): every read is bounds-checked (``WireReader``), counts are checked
/// against the bytes left before anything is reserved, the groups must follow one another from
/// the header's end with nothing after the last, and what fails a check is reported as a
/// ``Problem``, never trusted in part. A bad header makes the whole file unusable; a group that
/// fails its checks, or that a truncation cut short, makes only that group unusable.
enum RegistryFile {
    /// The file's name in the state directory.
    static let name = "registry.bin"
    /// The first four bytes.
    static let magic: [UInt8] = Array("SHRC".utf8)
    /// The layout's version; a file of another is rebuilt. 2: grouped by directory; 3: with a
    /// directory of the groups in the header, read by `pread`; 4: with the section's address.
    static let formatVersion: UInt16 = 4
    /// The largest file read (a 1000-plugin registry is about 0.5 MiB).
    static let sizeLimit = 64 << 20
    /// The fewest bytes one entry takes: an empty name's length, five integers, two booleans.
    static let smallestEntry = 4 + 5 * 8 + 2
    /// The fewest bytes one group takes: its length, checksum, directory length and entry count.
    static let smallestGroup = 4 + 8 + 4 + 4
    /// The fewest bytes one group's line in the header takes: directory length, offset, length.
    static let smallestSlot = 4 + 8 + 4
    /// The bytes before the header's length field: magic and format version.
    static let headerLengthOffset = 4 + 2

    /// Why a registry file, or one of its groups, is not used.
    enum Problem: Error, Equatable, CustomStringConvertible {
        /// It does not start with the magic or is cut short before its header ends.
        case notARegistry
        /// Written in another layout or by another host version.
        case otherVersion(format: UInt16, host: String)
        /// It fails the checksum or a bounds check: corrupt or truncated.
        case corrupt(String)
        /// Reading it failed (the system's error, with the file's path).
        case unreadable(String)

        var description: String {
            switch self {
            case .notARegistry: "not a registry file (no SHRC header)"
            case .otherVersion(let format, let host):
                "written by \(host) in format \(format), this is \(HostVersion.string) format \(RegistryFile.formatVersion)"
            case .corrupt(let detail): "corrupt or truncated: \(detail)"
            case .unreadable(let error): "unreadable: \(error)"
            }
        }
    }

    /// Where one directory's group is, as the header says.
    struct Slot: Equatable {
        /// The directory (escaped as ``PathBytes`` says, ending in `/`).
        var directory: String
        /// The group's first byte, from the file's start.
        var offset: Int
        /// Its length, with its own length and checksum fields.
        var length: Int
    }

    /// One directory's group as read, neither checked nor decoded yet.
    struct Group {
        /// The directory, as the header names it.
        var directory: String
        /// The whole group as written (length, checksum, bytes): what a save copies unchanged.
        var record: ArraySlice<UInt8>

        /// The bytes the checksum covers.
        var body: ArraySlice<UInt8> { record.dropFirst(12) }

        /// Whether its length field matches the header's and `body` its stored checksum.
        var isIntact: Bool {
            guard record.count >= 12 else { return false }
            let start = record.startIndex
            return RegistryFile.integer(record[start..<(start + 4)]) == UInt64(record.count - 12)
                && RegistryFile.checksum(body) == RegistryFile.integer(record[(start + 4)..<(start + 12)])
        }
    }

    /// The bytes of a registry holding `entries`, for `hostVersion`, grouped by directory.
    static func encode(_ entries: [RegistryKey: RegistryEntry], hostVersion: String = HostVersion.string) -> [UInt8] {
        encode(entries, keeping: [], hostVersion: hostVersion)
    }

    /// The bytes of a registry holding `entries` and the groups `kept` as they were (whose
    /// directories `entries` must not hold).
    static func encode(
        _ entries: [RegistryKey: RegistryEntry], keeping kept: [Group], hostVersion: String = HostVersion.string
    ) -> [UInt8] {
        var byDirectory: [String: [(name: Substring, key: RegistryKey, entry: RegistryEntry)]] = [:]
        for (key, entry) in entries {
            let (directory, name) = split(key.path)
            byDirectory[directory, default: []].append((name, key, entry))
        }
        // Directory order, and name order inside a group: the same registry is the same bytes.
        var records: [(directory: String, record: ArraySlice<UInt8>)] = kept.map { ($0.directory, $0.record) }
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
                if let section = file.entry.section {
                    body.blob(section)
                    body.u64(file.entry.sectionAddress)
                }
            }
            let bytes = body.bytes.dropFirst(Wire.headerSize)
            var record: [UInt8] = []
            record.reserveCapacity(12 + bytes.count)
            append(UInt64(bytes.count), size: 4, to: &record)
            append(checksum(bytes), size: 8, to: &record)
            record += bytes
            records.append((directory, record[...]))
        }
        records.sort { $0.directory < $1.directory }
        // The header's length is known before its offsets: every field but the offsets' values.
        let headerLength =
            headerLengthOffset + 4 + 4 + hostVersion.utf8.count + 4
            + records.reduce(0) { $0 + smallestSlot + $1.directory.utf8.count } + 8
        var header = WireWriter(capacity: headerLength)
        for byte in magic { header.u8(byte) }
        header.u16(formatVersion)
        header.u32(UInt32(headerLength))
        header.string(hostVersion)
        header.u32(UInt32(records.count))
        var offset = headerLength
        for (directory, record) in records {
            header.string(directory)
            header.u64(UInt64(offset))
            header.u32(UInt32(record.count))
            offset += record.count
        }
        var bytes = Array(header.bytes.dropFirst(Wire.headerSize))
        append(checksum(bytes[...]), size: 8, to: &bytes)
        bytes.reserveCapacity(offset)
        for (_, record) in records { bytes += record }
        return bytes
    }

    /// The header's length, from the first bytes of a file (at least ``headerLengthOffset`` + 4
    /// of them, or all there are), or why the file cannot be used.
    static func headerLength(_ first: [UInt8], fileSize: Int) throws(Problem) -> Int {
        guard first.count >= magic.count + 2, first.starts(with: magic) else { throw .notARegistry }
        let format = UInt16(integer(first[magic.count..<(magic.count + 2)]))
        // Another layout may differ from here on: its version is all that is read.
        guard format == formatVersion else { throw .otherVersion(format: format, host: "another host version") }
        guard first.count >= headerLengthOffset + 4 else { throw .corrupt("cut short in the header's length") }
        let length = Int(integer(first[headerLengthOffset..<(headerLengthOffset + 4)]))
        guard length >= headerLengthOffset + 4 + 4 + 4 + 8, length <= fileSize else {
            throw .corrupt("a header of \(length) bytes in a file of \(fileSize)")
        }
        return length
    }

    /// The groups' places from the whole header (``headerLength(_:fileSize:)`` bytes), checked:
    /// its checksum, the host version, and groups in directory order that follow one another from
    /// the header's end, up to or past `fileSize` (a group past it is cut short when read).
    static func slots(header bytes: [UInt8], fileSize: Int, hostVersion: String = HostVersion.string) throws(Problem)
        -> [Slot]
    {
        var reader = WireReader(bytes)
        var writer = ""
        do throws(WireError) {
            _ = try reader.bytes(headerLengthOffset + 4, "the header")
            writer = try reader.string("host version")
        } catch {
            throw .corrupt(detail(error))
        }
        // Checked before the checksum, so another version is said to be one whatever its header.
        guard writer == hostVersion else { throw .otherVersion(format: formatVersion, host: writer) }
        do throws(WireError) {
            let count = Int(try reader.u32("group count"))
            // Checked before reserving: a count the bytes cannot hold is corruption, not a reason to allocate.
            guard count <= reader.remaining / smallestSlot else {
                throw WireError.malformed("\(count) groups in a header of \(bytes.count) bytes")
            }
            var slots: [Slot] = []
            slots.reserveCapacity(count)
            var next = bytes.count
            for _ in 0..<count {
                let directory = try reader.string("a group's directory")
                let offset = try reader.u64("a group's offset")
                let length = Int(try reader.u32("a group's length"))
                guard offset == UInt64(next) else {
                    throw WireError.malformed(
                        "the group of \(directory) is at byte \(offset), not where the one before it ends (\(next))")
                }
                guard length >= smallestGroup else {
                    throw WireError.malformed("the group of \(directory) is \(length) bytes")
                }
                if let last = slots.last, !(last.directory < directory) {
                    throw WireError.malformed("\(directory) has two groups, or the groups are out of order")
                }
                slots.append(Slot(directory: directory, offset: next, length: length))
                next += length
            }
            let headerEnd = bytes.count - reader.remaining
            guard try reader.u64("header checksum") == checksum(bytes[..<headerEnd]) else {
                throw WireError.malformed("header checksum mismatch")
            }
            try reader.finish("the header")
            // Groups past the end (a truncated file) fail when read, each costing its directory only.
            guard next >= fileSize else { throw WireError.malformed("\(fileSize - next) bytes after the last group") }
            return slots
        } catch {
            throw .corrupt(detail(error))
        }
    }

    /// The entries of one group, or why it cannot be used (checksum, bounds, a repeated name,
    /// another directory than the header says).
    static func entries(of group: Group) throws(Problem) -> [RegistryKey: RegistryEntry] {
        guard group.isIntact else { throw .corrupt("checksum mismatch in the group of \(group.directory)") }
        // The whole record, so the array is taken over rather than copied (a group read by
        // ``RegistryReader`` is all of its array), its length and checksum skipped.
        var reader = WireReader(Array(group.record))
        do throws(WireError) {
            _ = try reader.bytes(12, "a group's length and checksum")
            let directory = try reader.string("a group's directory")
            let prefix = Array(directory.utf8)
            guard directory == group.directory else {
                throw WireError.malformed("the group of \(group.directory) names \(directory)")
            }
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
                let address = section == nil ? 0 : try reader.u64("section address")
                let path = Self.path(prefix, name)
                let key = RegistryKey(path: path, identity: identity)
                let entry = RegistryEntry(
                    definesEntry: definesEntry, section: section.map(Array.init), sectionAddress: address)
                guard entries.updateValue(entry, forKey: key) == nil else {
                    throw WireError.malformed("entry \(index) repeats \(path)")
                }
            }
            try reader.finish("the entries of \(directory)")
            return entries
        } catch {
            throw .corrupt(detail(error))
        }
    }

    /// The groups of the registry file `bytes` (read the way a host reads its file, through
    /// ``RegistryReader``), or why the file cannot be used: the header is checked, but no
    /// group's checksum is computed nor its entries read.
    static func groups(_ bytes: [UInt8], hostVersion: String = HostVersion.string) throws(Problem) -> [Group] {
        let reader = try RegistryReader(RegistryBytesInMemory(bytes), hostVersion: hostVersion)
        var groups: [Group] = []
        for slot in reader.slots { groups.append(try reader.group(slot)) }
        return groups
    }

    /// The entries of a registry file, or why it cannot be used. With `directory` (a path as
    /// ``PathBytes`` escapes it, ending in `/`), only its group is checked and decoded; without,
    /// every group, and any that fails makes the whole file fail.
    static func decode(
        _ bytes: [UInt8], hostVersion: String = HostVersion.string, onlyIn directory: String? = nil
    ) throws(Problem) -> [RegistryKey: RegistryEntry] {
        let reader = try RegistryReader(RegistryBytesInMemory(bytes), hostVersion: hostVersion)
        var entries: [RegistryKey: RegistryEntry] = [:]
        for slot in reader.slots where directory == nil || slot.directory == directory {
            let found = try Self.entries(of: try reader.group(slot))
            if entries.isEmpty { entries = found } else { entries.merge(found) { mine, _ in mine } }
        }
        return entries
    }

    /// `directory` then `name` as one string, built in place (one allocation: 1000 entries each
    /// built by appending were a visible part of a cached `host inspect`); invalid UTF-8 in
    /// `name` is repaired, as `String(decoding:as:)` does.
    private static func path(_ directory: [UInt8], _ name: ArraySlice<UInt8>) -> String {
        // SE-0263: the initializer validates the bytes and repairs them.
        String(unsafeUninitializedCapacity: directory.count + name.count) { buffer in
            _ = buffer.initialize(fromContentsOf: directory)
            _ = buffer[directory.count...].initialize(fromContentsOf: name)
            return directory.count + name.count
        }
    }

    /// A path's directory (with its final `/`; empty for a bare name) and its name.
    static func split(_ path: String) -> (directory: String, name: Substring) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("", path[...]) }
        let after = path.utf8.index(after: slash)
        return (String(path[..<after]), path[after...])
    }

    /// The little-endian integer of up to 8 bytes.
    static func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var value: UInt64 = 0
        for (index, byte) in bytes.enumerated() { value |= UInt64(byte) << UInt64(8 * index) }
        return value
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
                hash =
                    (hash ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)))
                    &* prime
            }
            for index in (words * 8)..<raw.count { hash = (hash ^ UInt64(raw[index])) &* prime }
        }
        return hash
    }
}
