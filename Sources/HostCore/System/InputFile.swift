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
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = try chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in
                    try retryingOnInterrupt("read", name) { Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
                }
            }.get()
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else { return nil }
            bytes += chunk[..<count]
        }
    }
}
