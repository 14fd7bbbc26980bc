import Glibc

/// An open directory whose operations all go through its descriptor (`openat`, `renameat`, …)
/// with `O_NOFOLLOW`, so a name can never lead outside it and a symlink planted inside cannot
/// redirect a read or a write.
final class DirectoryHandle: Sendable {
    /// The directory's path, for messages.
    let path: String
    /// The descriptor, open until deinit.
    let descriptor: FileDescriptor

    private init(path: String, descriptor: consuming FileDescriptor) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Opens the directory at `path`, following symlinks (systemd's `DynamicUser=` makes the
    /// state directory one).
    static func open(_ path: String) throws(SystemError) -> DirectoryHandle {
        DirectoryHandle(path: path, descriptor: try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY))
    }

    /// Creates `path` and its missing parents with `mode` (0700 unless said, as the XDG spec
    /// asks for state); each new directory's entry is made durable by an `fsync` of its parent.
    static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws(SystemError) {
        if mkdir(path, mode) == 0 { return try syncParent(of: path) }
        if errno == EEXIST { return }
        guard errno == ENOENT, let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.utf8.startIndex
        else {
            throw .current("mkdir", path)
        }
        try makeDirectories(String(path[..<slash]), mode: mode)
        if mkdir(path, mode) == 0 { return try syncParent(of: path) }
        if errno != EEXIST { throw .current("mkdir", path) }
    }

    private static func syncParent(of path: String) throws(SystemError) {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let parent = trimmed.lastIndex(of: "/").map { $0 == trimmed.startIndex ? "/" : String(trimmed[..<$0]) } ?? "."
        try open(parent).sync()
    }

    /// `path/name`.
    func child(_ name: String) -> String { path.hasSuffix("/") ? path + name : path + "/" + name }

    /// `fstat` of the directory.
    func status() throws(SystemError) -> stat {
        var st = stat()
        guard fstat(descriptor.rawValue, &st) == 0 else { throw .current("fstat", path) }
        return st
    }

    /// The subdirectory `name`, created with mode 0700 when missing (and the creation made
    /// durable). A symlink in its place is refused (`open` fails with `ENOTDIR`).
    func subdirectory(_ name: String) throws(SystemError) -> DirectoryHandle {
        if name.withCString({ mkdirat(descriptor.rawValue, $0, 0o700) }) == 0 {
            try sync()
        } else if errno != EEXIST {
            throw .current("mkdir", child(name))
        }
        let opened = try FileDescriptor.open(
            name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, in: descriptor.rawValue, path: child(name))
        return DirectoryHandle(path: child(name), descriptor: opened)
    }

    /// Takes an exclusive `flock` on the directory without waiting; false when another open
    /// file description holds it. Released when the descriptor closes, or the process dies.
    func tryLock() throws(SystemError) -> Bool {
        do {
            _ = try retryingOnInterrupt("flock", path) { flock(descriptor.rawValue, LOCK_EX | LOCK_NB) }
            return true
        } catch  where error.errno == EWOULDBLOCK {
            return false
        }
    }

    /// `fsync` of the directory: makes created, renamed and removed entries durable.
    func sync() throws(SystemError) {
        guard fsync(descriptor.rawValue) == 0 else { throw .current("fsync", path) }
    }

    /// Whether an entry `name` exists (without following a symlink).
    func contains(_ name: String) throws(SystemError) -> Bool {
        var st = stat()
        // The name's own bytes (`withCString`): the implicit conversion copies it into a new
        // array, and this runs for every service a start asks about (first launch).
        if name.withCString({ fstatat(descriptor.rawValue, $0, &st, AT_SYMLINK_NOFOLLOW) }) == 0 { return true }
        if errno == ENOENT { return false }
        throw .current("stat", child(name))
    }

    /// The names in the directory, without `.` and `..`, in no particular order.
    func names() throws(SystemError) -> [String] { try names(startingWith: []) }

    /// The names in the directory that start with `prefix` (bytes, no NUL; empty: all), but
    /// `.` and `..`. The others cost no string: the marks folder holds one file per service
    /// ever started, and its leftover temporaries were looked for by building all of their
    /// names (1100 marks: 1.7 M instructions at every start, callgrind).
    func names(startingWith prefix: [UInt8]) throws(SystemError) -> [String] {
        // fdopendir takes ownership of its descriptor, so give it a fresh one.
        let fresh = try FileDescriptor.open(".", O_RDONLY | O_DIRECTORY, in: descriptor.rawValue, path: path)
        guard let stream = fdopendir(fresh.rawValue) else { throw .current("opendir", path) }
        _ = fresh.release()  // the stream owns it now
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            // readdir returns NULL both at the end and on failure; only errno tells them apart.
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw .current("readdir", path) }
                return names
            }
            if !prefix.isEmpty && !entry.nameStarts(with: prefix) { continue }
            // Read in place, `.` and `..` told by their bytes: an array and two string comparisons
            // per entry were ~0.4 k instructions per plugin at a start that lists the marks.
            let name = withUnsafeMutablePointer(to: &entry.pointee.d_name) { field in
                UnsafeRawPointer(field).withMemoryRebound(to: CChar.self, capacity: 1) { name -> String? in
                    let bytes = UnsafeRawBufferPointer(start: name, count: strlen(name))
                    let dots = bytes.count <= 2 && !bytes.contains { $0 != UInt8(ascii: ".") }
                    return dots && !bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
                }
            }
            if let name { names.append(name) }
        }
    }

    /// The contents of the regular file `name`, or nil when there is none. A file larger than
    /// `limit` fails with `EFBIG`, so a planted file cannot make the host allocate without bound.
    func read(_ name: String, limit: Int) throws(StorageError) -> [UInt8]? {
        guard let file = try openFile(name) else { return nil }
        guard file.size <= limit else {
            throw .system(SystemError(operation: "read", path: child(name), errno: EFBIG))
        }
        // One byte more than fstat said, to notice a file that grew (never ours: we rename).
        let bytes: [UInt8]
        do { bytes = try file.read(at: 0, count: file.size + 1) } catch { throw .system(error) }
        guard bytes.count <= limit else {
            throw .system(SystemError(operation: "read", path: child(name), errno: EFBIG))
        }
        return bytes
    }

    /// The regular file `name` opened for reading (not following a symlink, never blocking),
    /// or nil when there is none.
    func openFile(_ name: String) throws(StorageError) -> ReadOnlyFile? {
        let file: ReadOnlyFile
        do { file = try ReadOnlyFile(name, in: descriptor.rawValue, path: child(name)) } catch {
            if error.errno == ENOENT { return nil }
            if error.errno == ELOOP { throw StorageError(path: child(name), code: .notRegularFile(kind: "symlink")) }
            throw .system(error)
        }
        if let kind = PluginScanner.nonRegularKind(file.status.st_mode) {
            throw StorageError(path: child(name), code: .notRegularFile(kind: kind))
        }
        return file
    }

    /// Replaces (or creates) `name` with `bytes`, atomically and durably: a temporary file in
    /// this directory is written and `fsync`ed, renamed over `name`, then the directory is
    /// `fsync`ed. After a crash at any moment, `name` holds its old or its new contents.
    /// Temporary files start with ``temporaryPrefix``; see ``removeTemporaryFiles()``.
    /// The file gets `mode` (0600 unless said: state files are the user's alone).
    ///
    /// `durable: false` (a cache, which a start computes again when the file is missing, old
    /// or torn): written and renamed over the same way, never `fsync`ed. Two `fsync`s fewer,
    /// each a write to the disk (a kiosk's flash), where losing the file costs only time.
    func replace(_ name: String, with bytes: UnsafeRawBufferPointer, mode: mode_t = 0o600, durable: Bool = true)
        throws(SystemError)
    {
        let temporary = Self.temporaryPrefix + String(UInt64.random(in: .min ... .max), radix: 16)
        let file = try FileDescriptor.open(
            temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: mode,
            in: descriptor.rawValue, path: child(temporary))
        var failure: SystemError?
        do {
            try file.writeAll(bytes, path: child(temporary))
            if durable && fsync(file.rawValue) != 0 { failure = .current("fsync", child(temporary)) }
        } catch {
            failure = error
        }
        // Closed here, so a write-back error is reported: the descriptor is gone either way.
        do { try file.close(child(temporary)) } catch { failure = failure ?? error }
        if let failure {
            unlinkat(descriptor.rawValue, temporary, 0)
            throw failure
        }
        guard renameat(descriptor.rawValue, temporary, descriptor.rawValue, name) == 0 else {
            let error = SystemError.current("rename", child(name))
            unlinkat(descriptor.rawValue, temporary, 0)
            throw error
        }
        if durable { try sync() }
    }

    /// Creates the empty file `name` (kept as it is when it exists), not yet durably: a
    /// ``sync()`` of this directory afterwards makes every entry created before it durable,
    /// so many marks cost one `fsync`. An empty file has no contents to tear, so no temporary
    /// file is needed.
    func createEmpty(_ name: String) throws(SystemError) {
        let file = try FileDescriptor.open(
            name, O_WRONLY | O_CREAT | O_NOFOLLOW, mode: 0o600, in: descriptor.rawValue, path: child(name))
        try file.close(child(name))
    }

    /// Removes the entry `name` durably; false when there was none.
    func remove(_ name: String) throws(SystemError) -> Bool {
        guard unlinkat(descriptor.rawValue, name, 0) == 0 else {
            if errno == ENOENT { return false }
            throw .current("unlink", child(name))
        }
        try sync()
        return true
    }

    /// The name prefix of the temporary files ``replace(_:with:)`` writes. It starts with a dot,
    /// which no stored name does.
    static let temporaryPrefix = ".tmp-"

    /// Removes the temporary files a crash left behind; returns how many. Only safe while no
    /// other process writes here: the state directory's lock ensures it.
    @discardableResult
    func removeTemporaryFiles() throws(SystemError) -> Int {
        var removed = 0
        for name in try names(startingWith: Array(Self.temporaryPrefix.utf8)) {
            if unlinkat(descriptor.rawValue, name, 0) == 0 {
                removed += 1
            } else if errno != ENOENT {
                throw .current("unlink", child(name))
            }
        }
        if removed > 0 { try sync() }
        return removed
    }
}
