import Glibc

/// A file opened for reading without ever blocking on open, closed on deinit.
///
/// Opened with `O_NONBLOCK` so a FIFO or device named `*.so` cannot hang the host, and
/// close-on-exec so worker processes never inherit it.
final class ReadOnlyFile {
    let path: String
    let descriptor: FileDescriptor
    /// `fstat` of the opened file, so checks and reads concern the same inode.
    let status: stat

    /// Opens `path`, a path as the user wrote it.
    convenience init(path: String) throws(SystemError) {
        try self.init(path: path, name: Array(path.utf8CString))
    }

    /// Opens the plugin file `path`, escaped as ``PathBytes`` says, by its exact bytes.
    convenience init(pluginPath path: String) throws(SystemError) {
        try self.init(path: path, name: PathBytes.cString(path))
    }

    /// Opens `name` in the open directory `directory` without following a symlink there
    /// (`ELOOP`); `path` names it in errors.
    convenience init(_ name: String, in directory: Int32, path: String) throws(SystemError) {
        try self.init(path: path, name: Array(name.utf8CString), in: directory, flags: O_NOFOLLOW)
    }

    private init(path: String, name: [CChar], in directory: Int32 = AT_FDCWD, flags: Int32 = 0) throws(SystemError) {
        self.path = path
        let file = FileDescriptor(
            taking: try retryingOnInterrupt("open", path) {
                openat(directory, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags)
            })
        var st = stat()
        guard fstat(file.rawValue, &st) == 0 else { throw .current("fstat", path) }
        descriptor = file
        status = st
    }

    var size: Int { Int(status.st_size) }

    /// The file's identity now (nil when `fstat` fails): equal to `FileIdentity(status)` when
    /// nothing changed it since it was opened, the rule a cache entry is made by.
    var currentIdentity: FileIdentity? {
        var now = stat()
        return fstat(descriptor.rawValue, &now) == 0 ? FileIdentity(now) : nil
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: Int, count: Int) throws(SystemError) -> [UInt8] {
        try descriptor.read(at: offset, count: count, path: path)
    }

    /// Reads into all of `buffer` from `offset`; the count read, fewer only at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemError) -> Int {
        try descriptor.read(into: buffer, at: offset, path: path)
    }
}
