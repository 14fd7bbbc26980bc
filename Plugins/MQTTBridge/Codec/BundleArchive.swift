/// A fleet bundle's archive (issue 41): a POSIX ustar tar of plugin files, their `.minisig`
/// files and an optional `services.json`, read from untrusted bytes (the broker's).
///
/// Only what a plugin folder holds is accepted: regular files with plain names (no folder,
/// no `/`, no `..`, not hidden; a leading `./` is dropped and a `./` folder entry skipped), at
/// most ``maxFiles`` of them and ``maxBytes`` in all. A link, a device, a path that climbs out
/// or any other entry type refuses the whole archive, naming the entry. Every header's checksum
/// is checked and every number read with checked arithmetic: corrupt input is a
/// ``BundleArchiveError`` with its reason, never a trap (the `bundle` fuzz target).
public struct BundleArchive: Sendable, Equatable {
    /// One file: its name and where its bytes are in the archive.
    public struct Entry: Sendable, Equatable {
        public let name: String
        public let bytes: Range<Int>
    }

    /// The files, in the archive's order.
    public let entries: [Entry]

    /// At most this many files.
    public static let maxFiles = 256
    /// At most this many bytes of files in all.
    public static let maxBytes = 64 << 20

    static let block = 512

    /// Reads the archive's table of files from `archive` (its bytes are not copied).
    public init(_ archive: [UInt8]) throws(BundleArchiveError) {
        self = try archive.withUnsafeBytes { bytes in
            Result { () throws(BundleArchiveError) in try BundleArchive(bytes: bytes) }
        }.get()
    }

    /// Reads the archive's table of files from `archive`, memory the caller holds for the call
    /// (a fleet bundle mapped from the file it was written to as it came): only the headers
    /// are copied, one block at a time.
    public init(bytes archive: UnsafeRawBufferPointer) throws(BundleArchiveError) {
        var entries: [Entry] = []
        var names = Set<String>()
        var total = 0
        var offset = 0
        while true {
            guard archive.count - offset >= Self.block else {
                throw BundleArchiveError(.malformed, "the archive ends without its end blocks (at byte \(offset))")
            }
            let header = Array(archive[offset..<offset + Self.block])[...]
            if header.allSatisfy({ $0 == 0 }) { break }  // the end: a zero block (a second may follow)
            let name = try Self.name(header)
            try Self.checkChecksum(header, name)
            let size = try Self.octal(header, at: 124, count: 12, what: "size", entry: name)
            let type = header[header.startIndex + 156]
            let dataStart = offset + Self.block
            // The data, padded to whole blocks; its end is checked against the archive's.
            let (padded, overflow) = size.addingReportingOverflow((Self.block - size % Self.block) % Self.block)
            guard !overflow, padded <= archive.count - dataStart else {
                throw BundleArchiveError(
                    .malformed, "\(name): \(size) bytes announced, the archive ends before them", entry: name)
            }
            switch type {
            case UInt8(ascii: "0"), 0:
                let plain = try Self.plainName(name)
                guard !names.contains(plain) else {
                    throw BundleArchiveError(.duplicate, "\(plain) is in the archive twice", entry: plain)
                }
                guard entries.count < Self.maxFiles else {
                    throw BundleArchiveError(.tooManyFiles, "more than \(Self.maxFiles) files", entry: plain)
                }
                let (sum, over) = total.addingReportingOverflow(size)
                guard !over, sum <= Self.maxBytes else {
                    throw BundleArchiveError(
                        .tooLarge, "the files come to more than \(Self.maxBytes) bytes (at \(plain))", entry: plain)
                }
                total = sum
                names.insert(plain)
                entries.append(Entry(name: plain, bytes: dataStart..<dataStart + size))
            case UInt8(ascii: "5") where name == "./" || name == ".":
                break  // the folder itself, as `tar -C DIR .` writes it
            case UInt8(ascii: "1"), UInt8(ascii: "2"):
                throw BundleArchiveError(
                    .link, "\(name) is a \(type == UInt8(ascii: "1") ? "hard" : "symbolic") link", entry: name)
            default:
                throw BundleArchiveError(
                    .notRegular,
                    "\(name) is not a regular file (type \(Self.typeName(type))): a bundle holds plugin files only",
                    entry: name)
            }
            offset = dataStart + padded
        }
        self.entries = entries
    }

    /// The entry's path: ustar's prefix, `/`, name, each up to its first NUL.
    static func name(_ header: ArraySlice<UInt8>) throws(BundleArchiveError) -> String {
        let base = header.startIndex
        let magic = header[(base + 257)..<(base + 262)]
        guard magic.elementsEqual("ustar".utf8) else {
            throw BundleArchiveError(
                .malformed, "a header without the ustar magic: not a POSIX tar (tar --format=ustar)")
        }
        func field(_ start: Int, _ count: Int) -> ArraySlice<UInt8> {
            let slice = header[(base + start)..<(base + start + count)]
            return slice.prefix { $0 != 0 }
        }
        let name = field(0, 100)
        let prefix = field(345, 155)
        let bytes = prefix.isEmpty ? Array(name) : Array(prefix) + [UInt8(ascii: "/")] + Array(name)
        guard !bytes.isEmpty else { throw BundleArchiveError(.malformed, "an entry without a name") }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw BundleArchiveError(.malformed, "an entry's name is not UTF-8")
        }
        return text
    }

    /// `name` as a file of a plugin folder, or why it cannot be one.
    static func plainName(_ name: String) throws(BundleArchiveError) -> String {
        var plain = Substring(name)
        if plain.hasPrefix("./") { plain = plain.dropFirst(2) }
        if plain.hasPrefix("/") || plain == ".." || plain.hasPrefix("../") || plain.contains("/../")
            || plain.hasSuffix("/..")
        {
            throw BundleArchiveError(.pathEscape, "\(name) points outside the bundle", entry: name)
        }
        guard !plain.contains("/") else {
            throw BundleArchiveError(
                .pathEscape, "\(name) is in a folder: a bundle's files are side by side", entry: name)
        }
        guard !plain.isEmpty, !plain.hasPrefix("."), !plain.contains("\\") else {
            throw BundleArchiveError(.pathEscape, "\(name) is not a plain file name", entry: name)
        }
        return String(plain)
    }

    /// The header's checksum: the sum of its bytes with the checksum field read as spaces.
    static func checkChecksum(_ header: ArraySlice<UInt8>, _ name: String) throws(BundleArchiveError) {
        let stored = try octal(header, at: 148, count: 8, what: "checksum", entry: name)
        var sum = 0
        for (index, byte) in header.enumerated() {
            sum += (148..<156).contains(index) ? 32 : Int(byte)
        }
        guard sum == stored else {
            throw BundleArchiveError(
                .checksum, "\(name): the header's checksum is \(stored), its bytes sum to \(sum)", entry: name)
        }
    }

    /// An octal field: digits, then NUL or spaces. Base-256 numbers (GNU's large sizes) are refused.
    static func octal(_ header: ArraySlice<UInt8>, at start: Int, count: Int, what: String, entry: String)
        throws(BundleArchiveError) -> Int
    {
        let field = header[(header.startIndex + start)..<(header.startIndex + start + count)]
        var value = 0
        var seenDigit = false
        var ended = false
        for byte in field {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "7") where !ended:
                let (shifted, overflow) = value.multipliedReportingOverflow(by: 8)
                guard !overflow else {
                    throw BundleArchiveError(.malformed, "\(entry): the \(what) field overflows", entry: entry)
                }
                value = shifted + Int(byte - UInt8(ascii: "0"))
                seenDigit = true
            case UInt8(ascii: " ") where !seenDigit:
                continue  // leading spaces, as some writers pad
            case 0, UInt8(ascii: " "):
                ended = true
            default:
                throw BundleArchiveError(.malformed, "\(entry): the \(what) field is not an octal number", entry: entry)
            }
        }
        guard seenDigit else {
            throw BundleArchiveError(.malformed, "\(entry): the \(what) field is empty", entry: entry)
        }
        return value
    }

    static func typeName(_ type: UInt8) -> String {
        switch type {
        case UInt8(ascii: "3"): "character device"
        case UInt8(ascii: "4"): "block device"
        case UInt8(ascii: "5"): "folder"
        case UInt8(ascii: "6"): "FIFO"
        case UInt8(ascii: "x"), UInt8(ascii: "g"): "pax header"
        case UInt8(ascii: "L"), UInt8(ascii: "K"): "GNU long name"
        case 32...126: "'\(Character(Unicode.Scalar(type)))'"
        default: "byte \(type)"
        }
    }
}

/// Why an archive is refused: the reason (a stable word for the reported state), the sentence,
/// and the entry concerned when there is one.
public struct BundleArchiveError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case malformed, checksum, pathEscape, link, notRegular, duplicate, tooManyFiles, tooLarge
    }

    public let reason: Reason
    public let detail: String
    public let entry: String?

    public init(_ reason: Reason, _ detail: String, entry: String? = nil) {
        self.reason = reason
        self.detail = detail
        self.entry = entry
    }

    public var description: String { detail }
}
