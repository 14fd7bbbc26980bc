import Glibc

/// Lists the plugin files of plugin directories: every `*.so` whose name does not start with a
/// dot, in name order, with the files that must be skipped (not regular, insecure) already
/// turned into failures.
///
/// Rationale for the dot rule: editors and installers write a new file as a hidden temporary
/// (`.name.so.XXXX`, `.name.so`) and rename it into place; scanning one mid-write would load a
/// half-written library or the same service twice.
public enum PluginScanner {
    /// One directory entry named `*.so`: a file to inspect, or why it is skipped.
    public typealias Entry = Result<String, LoadFailure>

    /// An unusable plugin directory: missing, not a directory, unreadable.
    public struct DirectoryError: Error, CustomStringConvertible {
        /// The directory as given.
        public let path: String
        /// Why it cannot be used.
        public let reason: String
        public var description: String { "plugin directory \(path): \(reason)" }
    }

    /// Whether a directory entry named `name` is a plugin file: `*.so`, not hidden.
    public static func isPluginName(_ name: String) -> Bool { isPluginName(Array(name.utf8)) }

    static func isPluginName(_ name: [UInt8]) -> Bool {
        // Byte by byte: `elementsEqual` over a suffix was a generic walk per directory entry.
        let count = name.count
        return count >= 3 && name[count - 3] == UInt8(ascii: ".") && name[count - 2] == UInt8(ascii: "s")
            && name[count - 1] == UInt8(ascii: "o") && name[0] != UInt8(ascii: ".")
    }

    /// The plugin entries of `directory` (``isPluginName(_:)``) in byte order of their names.
    /// Each path is the directory as given and the name as `readdir` read it, escaped (see
    /// ``PathBytes``: a name that is not UTF-8 keeps its bytes).
    ///
    /// An insecure directory turns every entry into a failure (its files could be swapped);
    /// `allowInsecure` lifts both the directory and the file checks.
    public static func scan(directory: String, allowInsecure: Bool) throws(DirectoryError) -> [Entry] {
        try scanFiles(directory: directory, allowInsecure: allowInsecure).map { $0.map(\.path) }
    }

    /// ``scan(directory:allowInsecure:)`` with the `stat` each file was checked with, so the
    /// inspector keys the registry cache by it instead of a second `stat`.
    static func scanFiles(directory: String, allowInsecure: Bool) throws(DirectoryError) -> [Result<
        Checked, LoadFailure
    >] {
        var dirStatus = stat()
        guard stat(directory, &dirStatus) == 0 else {
            throw DirectoryError(path: directory, reason: SystemError.current("stat", directory).reason)
        }
        guard dirStatus.st_mode & S_IFMT == S_IFDIR else {
            throw DirectoryError(path: directory, reason: "not a directory")
        }
        let names: [[UInt8]]
        do { names = try entryNames(directory) } catch {
            throw DirectoryError(path: directory, reason: error.reason)
        }
        let directoryProblem =
            allowInsecure ? nil : FileSecurity.problem(path: directory, status: dirStatus, what: "directory")
        let base = PathBytes.escape(directory.hasSuffix("/") ? directory : directory + "/")
        var checked: FileSecurity.CheckedDirectories = []
        // The directories above the files, walked once for the scan rather than once per file
        // (a realpath and a stat per directory level each): a file that is not a symbolic link
        // has exactly them on its resolved path.
        let resolved =
            allowInsecure || directoryProblem != nil
            ? nil : FileSecurity.resolvedDirectory(directory, checked: &checked)
        // Each file's stat relative to the directory, so the kernel walks one name rather than
        // the whole path per file (a third of a cached `host inspect` was those walks).
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if descriptor >= 0 { close(descriptor) } }
        return inByteOrder(names.filter(isPluginName)).map { name in
            let path = PathBytes.escape(name, after: base)
            if let directoryProblem { return .failure(LoadFailure(path: path, reason: .insecure(directoryProblem))) }
            return checkFile(
                path: path, allowInsecure: allowInsecure, checked: &checked,
                inDirectory: resolved.map { ($0.path, $0.problem, name) },
                at: descriptor >= 0 ? (descriptor, name) : nil)
        }
    }

    /// Checks one named file (escaped, see ``PathBytes``): it must be a regular file (after
    /// symlinks) with safe permissions, in safe directories all along its resolved path (ssh's
    /// rule: a symlink into a directory others can write to is refused, naming that directory).
    /// Nothing is opened, so a FIFO cannot block.
    public static func check(path: String, allowInsecure: Bool) -> Entry {
        var checked: FileSecurity.CheckedDirectories = []
        return checkFile(path: path, allowInsecure: allowInsecure, checked: &checked, inDirectory: nil).map(\.path)
    }

    /// A file that passed the checks, with the `stat` (after symlinks) it passed them with.
    struct Checked {
        var path: String
        var status: stat
    }

    /// ``check(path:allowInsecure:)``, remembering the directories found safe in `checked`.
    /// `inDirectory`: the scanned directory resolved, its verdict and the file's name there; a
    /// file that is not a symbolic link then costs one `lstat`. `entry`: the open directory
    /// the file is in and its name there, which the `stat`s then go by instead of `path`.
    static func checkFile(
        path: String, allowInsecure: Bool, checked: inout FileSecurity.CheckedDirectories,
        inDirectory: (resolved: [CChar], problem: String?, name: [UInt8])?,
        at entry: (directory: Int32, name: [UInt8])? = nil
    ) -> Result<Checked, LoadFailure> {
        var status = stat()
        // Not a link: lstat said what stat would, and its directories are those of the scan.
        // (A flag, not a copy of `inDirectory`: that was three retains and releases per file.)
        var viaScan = false
        let found = withCName(entry, path: path) { base, name in
            if inDirectory != nil, fstatat(base, name, &status, AT_SYMLINK_NOFOLLOW) == 0,
                status.st_mode & S_IFMT != S_IFLNK
            {
                viaScan = true
                return true
            }
            return fstatat(base, name, &status, 0) == 0
        }
        guard found else { return .failure(LoadFailure(path: path, reason: .system(.current("stat", path)))) }
        if let kind = nonRegularKind(status.st_mode) {
            return .failure(LoadFailure(path: path, reason: .notRegularFile(kind: kind)))
        }
        if !allowInsecure {
            let directories =
                if viaScan, let scanned = inDirectory {
                    scanned.problem.map {
                        FileSecurity.problem($0, inResolvedDirectory: scanned.resolved, file: scanned.name)
                    }
                } else {
                    FileSecurity.directoriesProblem(ofPlugin: path, checked: &checked)
                }
            if let problem = FileSecurity.problem(path: path, status: status, what: "file") ?? directories {
                return .failure(LoadFailure(path: path, reason: .insecure(problem)))
            }
        }
        return .success(Checked(path: path, status: status))
    }

    /// Calls `body` with the directory and NUL-terminated name the `stat`s of a file go by: its
    /// open directory and its name there (copied to the stack: two arrays per file were a cost
    /// of every start), or the working directory and its whole path.
    private static func withCName<R>(
        _ entry: (directory: Int32, name: [UInt8])?, path: String, _ body: (Int32, UnsafePointer<CChar>) -> R
    ) -> R {
        guard let entry else {
            return PathBytes.cString(path).withUnsafeBufferPointer { body(AT_FDCWD, $0.baseAddress!) }
        }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: entry.name.count + 1) { buffer in
            for (index, byte) in entry.name.enumerated() { buffer[index] = CChar(bitPattern: byte) }
            buffer[entry.name.count] = 0
            return body(entry.directory, buffer.baseAddress!)
        }
    }

    static func nonRegularKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "directory"
        case S_IFIFO: "FIFO"
        case S_IFSOCK: "socket"
        case S_IFCHR: "character device"
        case S_IFBLK: "block device"
        default: "special file"
        }
    }

    /// `names` in byte order (`lexicographicallyPrecedes`). Sorted as spans of one buffer, compared
    /// by `memcmp`: sorting the arrays themselves retained and released two per comparison (and
    /// the generic walk was 3% of a cached `host inspect` of 1000 files).
    static func inByteOrder(_ names: [[UInt8]]) -> [[UInt8]] {
        guard names.count > 1 else { return names }
        var bytes: [UInt8] = []
        var spans: [(start: Int, count: Int, index: Int)] = []
        spans.reserveCapacity(names.count)
        for (index, name) in names.enumerated() {
            spans.append((bytes.count, name.count, index))
            bytes += name
        }
        // One byte more: an empty buffer has no base address.
        bytes.append(0)
        bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            spans.sort { a, b in
                let common = min(a.count, b.count)
                let order = common == 0 ? 0 : memcmp(base + a.start, base + b.start, common)
                return order != 0 ? order < 0 : a.count < b.count
            }
        }
        return spans.map { names[$0.index] }
    }

    /// The entry names of `directory`, as the bytes `readdir` gives (never repaired to UTF-8).
    private static func entryNames(_ directory: String) throws(SystemError) -> [[UInt8]] {
        guard let stream = opendir(directory) else { throw .current("opendir", directory) }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = entry.nameBytes
            if name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")] { names.append(name) }
        }
        return names
    }
}
