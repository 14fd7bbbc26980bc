import CSystem
import Dispatch
import Glibc

/// A private copy of a plugin file, which is what the host `dlopen`s: every plugin is loaded
/// from one, made when it is loaded, never from the plugin directory.
///
/// Why: a library `dlopen`ed from its own file is mapped from that file, so `cp new.so lib/x.so`
/// (which rewrites the same inode, as package managers do too) changes code that is running,
/// and the next call jumps into the middle of the new bytes. The copy does not change,
/// whatever happens to the file. And since each copy has a path of its own, `dlopen` never
/// hands back a library already loaded under the same path name (which it does), so a file
/// replaced, or removed and put back, always runs its new code.
///
/// Where: `$TMPDIR/servicehost-loaded-PID-XXXXXX/N/NAME` (`/tmp` without `TMPDIR`): a new
/// 0700 directory per process, one numbered subdirectory per copy (so the copy keeps the
/// file's name, which crash reports show), each copy read-only (0500). Only root and the
/// host's user can change it. Copies stay while the process runs (a crash report reads the
/// library's symbols from it); a normal exit removes them, and the next host to make copies
/// removes those of processes that are gone (a killed worker's).
struct ImmutableCopy {
    /// The plugin file as the host names it (escaped, see ``PathBytes``).
    let path: String
    /// The copy, to give `dlopen`.
    let loadPath: String

    /// Copies the file at `path`, which must still be the file inspected as `identity`: a file
    /// changed since it was inspected (or while it is copied) is refused with
    /// ``LoadFailure/Reason/changed``, so the code loaded is always the code inspected.
    @MainActor
    init(of path: String, identity: FileIdentity) throws(LoadFailure.Reason) {
        self.path = path
        let source: ReadOnlyFile
        do { source = try ReadOnlyFile(pluginPath: path) } catch { throw .system(error) }
        guard FileIdentity(source.status) == identity else { throw .changed }
        let bytes = PathBytes.unescape(path)
        let name = bytes.split(separator: UInt8(ascii: "/")).last.map { PathBytes.escape(Array($0)) } ?? "plugin.so"
        let directory: String
        do { directory = try Self.nextDirectory() } catch { throw .system(error) }
        loadPath = directory + "/" + name
        let complete: Bool
        do throws(SystemError) {
            let output = try FileDescriptor.open(loadPath, O_WRONLY | O_CREAT | O_EXCL, mode: 0o500)
            complete = try Self.copy(source, into: output.rawValue, path: path)
            try output.close(loadPath)
        } catch {
            Self.remove(loadPath, directory)
            throw .system(error)
        }
        // A file that ends early shrank under the copy; a write during it changes its time.
        var after = stat()
        guard complete, fstat(source.descriptor.rawValue, &after) == 0, FileIdentity(after) == identity else {
            Self.remove(loadPath, directory)
            throw .changed
        }
    }

    /// Removes the copy (`dlopen` refused it).
    func discard() {
        Self.remove(loadPath, String(loadPath[..<(loadPath.lastIndex(of: "/") ?? loadPath.endIndex)]))
    }

    /// Copies all of `source` into `output`; false when the file ends early (it shrank).
    private static func copy(_ source: ReadOnlyFile, into output: Int32, path: String) throws(SystemError) -> Bool {
        var offset = 0
        let input = source.descriptor.rawValue
        while offset < source.size {
            let sent = try retryingOnInterrupt("sendfile", path) {
                csystem_sendfile(output, input, &offset, UInt(source.size - offset))
            }
            if sent == 0 { return false }
        }
        return true
    }

    private static func remove(_ file: String, _ directory: String) {
        unlink(file)
        rmdir(directory)
    }

    // MARK: The process's directory of copies

    /// The process's directory of copies, made at the first copy.
    @MainActor private static var root: String?
    /// How many copies this process made: the next copy's subdirectory.
    @MainActor private static var made = 0

    /// A new empty subdirectory of the process's directory of copies.
    @MainActor
    private static func nextDirectory() throws(SystemError) -> String {
        let root: String
        if let existing = self.root { root = existing } else { root = try makeRoot() }
        made += 1
        let directory = root + "/\(made)"
        guard mkdir(directory, 0o700) == 0 else { throw .current("mkdir", directory) }
        return directory
    }

    @MainActor
    private static func makeRoot() throws(SystemError) -> String {
        let temporary = parent()
        // Off the start-up path: a killed host leaves a copy of every plugin, and removing a
        // thousand of them before loading doubled the next start (scripts/bench row 3).
        DispatchQueue.global(qos: .utility).async { removeLeftovers(in: temporary) }
        var template = Array((temporary + "/\(prefix)\(getpid())-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw .current("mkdtemp", temporary) }
        let root = String(cString: made)
        self.root = root
        removeAtExit(root)
        return root
    }

    /// Where the directory of copies goes: `TMPDIR` (else `/tmp`) when it is a memory file system
    /// that allows execution, else `/dev/shm` when that is one and is safe (root-owned and sticky,
    /// or ours and writable by nobody else), else `TMPDIR` or `/tmp` as they are. Why: creating a
    /// file and a directory per plugin on ext4 cost about 0.6 ms each at start-up (inode
    /// allocation, measured with perf), against about 0.05 ms on tmpfs; 100 plugins reached
    /// active in ~90 ms from /tmp and ~28 ms from /dev/shm.
    private static func parent() -> String {
        let temporary = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        if isExecutableMemory(temporary) { return temporary }
        if isExecutableMemory(sharedMemory), isSafeParent(sharedMemory) { return sharedMemory }
        return temporary
    }

    private static let sharedMemory = "/dev/shm"

    /// Whether `path` is on tmpfs mounted without `noexec` (a library there can be mapped).
    private static func isExecutableMemory(_ path: String) -> Bool { csystem_is_executable_tmpfs(path) == 1 }

    /// Whether nobody but root and this user can remove or replace what is put in `path`.
    private static func isSafeParent(_ path: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return false }
        let sticky = status.st_mode & S_ISVTX != 0
        if status.st_uid == 0 && sticky { return true }
        return status.st_uid == geteuid() && status.st_mode & (S_IWGRP | S_IWOTH) == 0
    }

    /// Has a normal exit remove `root`. Not on the main actor: `exit` may run on any thread.
    private nonisolated static func removeAtExit(_ root: String) {
        rootAtExit.withLock { $0 = root }
        atexit { rootAtExit.withLock { root in root.map(ImmutableCopy.removeTree) } }
    }

    private static let prefix = "servicehost-loaded-"

    /// Removes the directories of copies that processes now gone left (a worker killed).
    private static func removeLeftovers(in temporary: String) {
        guard let names = try? DirectoryHandle.open(temporary).names() else { return }
        for name in names where name.hasPrefix(prefix) {
            let pidText = name.dropFirst(prefix.count).prefix { $0 != "-" }
            guard let pid = pid_t(pidText), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            var status = stat()
            let path = temporary + "/" + name
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == geteuid() else { continue }
            removeTree(path)
        }
    }

    /// Removes a directory of copies: its numbered subdirectories, their files, itself.
    private static func removeTree(_ root: String) {
        for number in (try? DirectoryHandle.open(root).names()) ?? [] {
            let directory = root + "/" + number
            for file in (try? DirectoryHandle.open(directory).names()) ?? [] { unlink(directory + "/" + file) }
            rmdir(directory)
        }
        rmdir(root)
    }
}

// The directory of copies to remove when the process exits normally (an atexit handler cannot
// capture).
private let rootAtExit = Locked<String?>(nil)
