/// Bytes a registry file is read from: the file itself (``ReadOnlyFile``, by `pread`) or,
/// for tests and the fuzz target, memory.
protocol RegistryBytes {
    /// The file's size when it was opened.
    var size: Int { get }
    /// Up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: Int, count: Int) throws(SystemError) -> [UInt8]
}

extension ReadOnlyFile: RegistryBytes {}

/// A registry file's bytes held in memory.
struct RegistryBytesInMemory: RegistryBytes {
    let bytes: [UInt8]
    /// The size claimed, which may exceed what `bytes` hold (a file that shrank after its `fstat`).
    let size: Int

    init(_ bytes: [UInt8], claimedSize: Int? = nil) {
        self.bytes = bytes
        size = claimedSize ?? bytes.count
    }

    func read(at offset: Int, count: Int) throws(SystemError) -> [UInt8] {
        guard offset >= 0, count >= 0, offset < bytes.count else { return [] }
        return Array(bytes[offset..<(offset + min(count, bytes.count - offset))])
    }
}

/// Reads a registry file (``RegistryFile``) piece by piece: its header once, then each
/// directory's group when it is asked for, each with one `pread` whose length is checked.
///
/// Why not the whole file: hosts and `host inspect` runs with other plugin directories share
/// one registry, so a reader of one directory read every directory's entries (1.2 MB for the
/// benchmark's sets, 13% of a cached `host inspect`). Why not `mmap`: a file truncated while
/// mapped kills the reader with `SIGBUS`; a short `pread` is an error with a reason.
struct RegistryReader<Source: RegistryBytes> {
    /// Where the bytes come from.
    let source: Source
    /// Each group's place, in directory order, as the header says.
    let slots: [RegistryFile.Slot]

    /// The header's first read: enough for the header of a registry of a few dozen directories.
    static var firstRead: Int { 4096 }

    /// Reads and checks the header of `source` (one read, two when the header is longer than
    /// ``firstRead``); throws why the file cannot be used.
    init(_ source: Source, hostVersion: String = HostVersion.string) throws(RegistryFile.Problem) {
        self.source = source
        guard source.size >= 0, source.size <= RegistryFile.sizeLimit else {
            throw .corrupt("\(source.size) bytes, more than the \(RegistryFile.sizeLimit) a registry may have")
        }
        var header = try Self.read(source, at: 0, count: min(source.size, Self.firstRead), "the header")
        let length = try RegistryFile.headerLength(header, fileSize: source.size)
        if length > header.count {
            header += try Self.read(source, at: header.count, count: length - header.count, "the header")
        } else {
            header.removeLast(header.count - length)
        }
        slots = try RegistryFile.slots(header: header, fileSize: source.size, hostVersion: hostVersion)
    }

    /// Where the group of `directory` is, or nil when the file has none.
    func slot(of directory: String) -> RegistryFile.Slot? {
        slots.first { $0.directory == directory }
    }

    /// The group at `slot`, read whole (and not yet checked: see ``RegistryFile/entries(of:)``).
    func group(_ slot: RegistryFile.Slot) throws(RegistryFile.Problem) -> RegistryFile.Group {
        RegistryFile.Group(
            directory: slot.directory,
            record: try Self.read(source, at: slot.offset, count: slot.length, "the group of \(slot.directory)")[...])
    }

    /// Exactly `count` bytes at `offset`; fewer means the file is shorter than its header says
    /// or shrank since its size was taken. Only what the file held when opened is asked for: a
    /// group's length is the file's own word (a damaged header said 4 GiB, and the reader
    /// reserved it before the short read showed).
    private static func read(_ source: Source, at offset: Int, count: Int, _ what: String) throws(RegistryFile.Problem)
        -> [UInt8]
    {
        let held = max(0, min(count, source.size - offset))
        var bytes: [UInt8] = []
        if held > 0 {
            do { bytes = try source.read(at: offset, count: held) } catch { throw .unreadable("\(error)") }
        }
        guard bytes.count == count else {
            throw .corrupt("cut short in \(what): \(bytes.count) of \(count) bytes at byte \(offset)")
        }
        return bytes
    }
}
