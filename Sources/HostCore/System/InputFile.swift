import Glibc

/// Files a user hands the host or `host ctl` (a push payload, `-` for standard input), read
/// whole but never past a limit: a file over it is refused before it is all in memory.
public enum InputFile {
    /// The bytes of `path` (or of standard input for "-"), at most `limit` of them.
    public static func read(_ path: String, limit: Int) throws(InputError) -> [UInt8] {
        let name = path == "-" ? "standard input" : path
        let bytes: [UInt8]?
        do throws(SystemError) {
            if path == "-" {
                bytes = try readAll(STDIN_FILENO, name, limit: limit)
            } else {
                let file = try FileDescriptor.open(path, O_RDONLY)
                bytes = try readAll(file.rawValue, name, limit: limit)
            }
        } catch {
            throw InputError("cannot read \(name): \(error)")
        }
        guard let bytes else { throw InputError("\(name) is over the limit of \(limit) bytes (--max-payload)") }
        return bytes
    }

    /// Everything `descriptor` holds, or nil once it passes `limit` bytes.
    private static func readAll(_ descriptor: Int32, _ name: String, limit: Int) throws(SystemError) -> [UInt8]? {
        var bytes: [UInt8] = []
        // Not zero-filled: a zeroed 64 KiB chunk faulted in and wrote 16 pages for every file
        // however small (the memory source's PSI file at every start is ~100 bytes); only the
        // pages a read fills are touched.
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let count = try retryingOnInterrupt("read", name) { Glibc.read(descriptor, chunk.baseAddress, chunk.count) }
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else { return nil }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[..<count]))
        }
    }
}
