import Glibc

/// A file opened for reading without ever blocking on open, closed on deinit.
///
/// Opened with `O_NONBLOCK` so a FIFO or device named `*.so` cannot hang the host, and
/// `O_CLOEXEC` so worker processes never inherit it.
final class ReadOnlyFile {
    let path: String
    let descriptor: Int32
    /// `fstat` of the opened file, so checks and reads concern the same inode.
    let status: stat

    init(path: String) throws(SystemError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw .current("open", path) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let error = SystemError.current("fstat", path)
            close(fd)
            throw error
        }
        descriptor = fd
        status = st
    }

    deinit { close(descriptor) }

    var size: Int { Int(status.st_size) }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: Int, count: Int) throws(SystemError) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .current("read", path)
            }
            if n == 0 { break }
            done += n
        }
        return done == count ? bytes : Array(bytes[..<done])
    }
}
