import CSystem
import Dispatch
import Glibc
import ServiceJSON

/// Where the host keeps its copies of plugin files (``StoredCopy``): one store per user,
/// `PARENT/servicehost-copies-UID`, kept across starts so a plugin is copied once per version,
/// not once per start (a new copy per plugin per start took a C plugin's start from ~0.1 ms to
/// ~0.22 ms, scripts/bench row 3).
///
/// PARENT is `TMPDIR` (else `/tmp`) when it is a memory file system that allows execution, else
/// `/dev/shm` when that is one and is safe (root-owned and sticky, or ours and writable by
/// nobody else), else `TMPDIR` or `/tmp` as they are. Why: creating a file and a directory per
/// plugin on ext4 cost about 0.6 ms each (inode allocation, measured with perf), against about
/// 0.05 ms on tmpfs.
///
/// The store is used only when `lstat` shows a directory (not a symlink) owned by the host's
/// user and writable by nobody else; otherwise (someone else made it) the host says why once
/// and keeps its copies in a new private directory, `PARENT/servicehost-loaded-PID-XXXXXX`,
/// removed at a normal exit (the next host removes those of processes gone).
///
/// A store that cannot take a copy (a full or read-only file system, a quota, permissions:
/// another user can fill the world-writable `/dev/shm`) is left for the next candidate, said
/// once (``takeFallback()``): the state directory's `copies` (checked as the shared store is),
/// then a private directory in `TMPDIR` or `/tmp`, then in `/var/tmp`, each on a file system
/// that allows execution. So a full disk never keeps a plugin from loading while any candidate
/// has room.
///
/// A worker uses its host's store (``workerVariable``): it opens the copy its host made and
/// chose the store of (``HeldCopy``), and makes none of its own.
///
/// Eviction: each KEY directory names its source in `.source`. After the first copy a process
/// makes (off the start-up path), the KEY directories whose source no longer has that identity
/// (removed or changed) are removed: every rebuild during development adds a version. A process
/// still running an evicted copy keeps its mapping (Linux maps the inode, not the name); a copy
/// a host holds for its workers' restarts (``HeldCopy``, a shared `flock`) is left alone.
struct CopyStore: Sendable {
    /// The directory of KEY directories.
    let root: String
    /// False for a per-process store (the shared one was unsafe).
    let persistent: Bool
    /// `root` opened (-1 when it could not be), for the `lstat` of each stored copy relative to
    /// it: the kernel then walks the copy's two names, not its whole path. Open for the process's
    /// lifetime (a store chosen again closes the one before).
    let descriptor: Int32

    /// True in a worker: the store is its host's (``workerVariable``), where its host's copies are.
    let isHosts: Bool

    init(root: String, persistent: Bool, isHosts: Bool = false) {
        self.root = root
        self.persistent = persistent
        self.isHosts = isHosts
        descriptor = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    }

    /// The file in each KEY directory naming the plugin file it is a version of.
    static let sourceName = ".source"

    /// The store this process uses, chosen at the first copy.
    @MainActor
    static func current() throws(SystemError) -> CopyStore {
        if let chosen { return chosen }
        if let inherited = inherited() {
            chosen = inherited
            return inherited
        }
        let parent = parent()
        let shared = parent + "/servicehost-copies-\(FileSecurity.hostUser)"
        let store: CopyStore
        do throws(SystemError) {
            // In a folder others may rename things in, they could swap the store for their own.
            if !isSafeParent(parent) {
                refusal = (
                    shared,
                    "its folder \(parent) can be changed by other users (writable by them, without the sticky bit)"
                )
                store = CopyStore(root: try makePrivate(in: parent), persistent: false)
            } else if let problem = problem(shared) {
                refusal = (shared, problem)
                store = CopyStore(root: try makePrivate(in: parent), persistent: false)
            } else {
                store = CopyStore(root: shared, persistent: true)
            }
        } catch {
            // Not even a private directory there (no inode left, no permission): the next place.
            guard let next = fallBack(from: shared, because: error) else { throw error }
            return next
        }
        chosen = store
        return store
    }

    /// The environment variable that gives a worker its host's store (set by ``WorkerSpawn``).
    static let workerVariable = "SERVICEHOST_WORKER_COPY_STORE"

    /// In a worker, its host's store (``workerVariable``), when it is still safe; nil in a host.
    private static func inherited() -> CopyStore? {
        let arguments = CommandLine.arguments
        guard arguments.count > 1, arguments[1] == WorkerSpawn.subcommand,
            let root = getenv(workerVariable).map({ String(cString: $0) }), root.hasPrefix("/"), problem(root) == nil
        else { return nil }
        return CopyStore(root: root, persistent: false, isHosts: true)
    }

    /// The state directory (`--state-dir`), the first place a store that cannot take a copy
    /// falls back to; set by the host before it loads anything.
    @MainActor static var stateDirectory: String?

    /// Leaves `failed` (the store in use, which could not take a copy: `error`) for the next
    /// candidate that can be used (see the type's notes), made the store of later copies; nil
    /// when none is left. Says why once (``takeFallback()``).
    @MainActor
    static func fallBack(from failed: CopyStore, because error: SystemError) -> CopyStore? {
        guard chosen == nil || chosen?.root == failed.root else { return chosen }
        return fallBack(from: failed.root, because: error)
    }

    @MainActor
    private static func fallBack(from failed: String, because error: SystemError) -> CopyStore? {
        tried.insert(failed)
        var next: CopyStore?
        if let state = stateDirectory, state.hasPrefix("/") {
            let root = state + "/copies"
            if !tried.contains(root), allowsExecution(state), problem(root) == nil {
                next = CopyStore(root: root, persistent: true)
            }
        }
        if next == nil {
            let failedParent = parentPath(of: failed)
            for parent in [temporary(), "/var/tmp"]
            where parent != failedParent && !triedParents.contains(parent) && allowsExecution(parent) {
                triedParents.insert(parent)
                guard let root = try? makePrivate(in: parent) else { continue }
                next = CopyStore(root: root, persistent: false)
                break
            }
        }
        if let chosen, chosen.descriptor >= 0 { close(chosen.descriptor) }
        chosen = next
        madeScratch = nil
        guard let next else {
            fallback = (failed, nil, "\(error)", error.errno)
            return nil
        }
        tried.insert(next.root)
        fallback = (failed, next.root, "\(error)", error.errno)
        return next
    }

    /// The store left and the one taken instead (nil: none was left), why, and its errno, once:
    /// the caller logs it.
    @MainActor
    static func takeFallback() -> (from: String, to: String?, reason: String, errno: Int32)? {
        defer { fallback = nil }
        return fallback
    }

    @MainActor private static var fallback: (from: String, to: String?, reason: String, errno: Int32)?
    /// The stores left after a failed copy, and the parents private stores were made in.
    @MainActor private static var tried: Set<String> = []
    @MainActor private static var triedParents: Set<String> = []

    /// Whether the file system of `path` allows execution (a library there can be mapped).
    private static func allowsExecution(_ path: String) -> Bool {
        var system = statvfs()
        // ST_NOEXEC (8, <sys/statvfs.h>): an enum constant there, which Swift does not import.
        return statvfs(path, &system) == 0 && system.f_flag & 8 == 0
    }

    private static func parentPath(of path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
    }

    /// Why the shared store could not be used (its path and the reason), once: the caller logs it.
    @MainActor
    static func takeRefusal() -> (path: String, reason: String)? {
        defer { refusal = nil }
        return refusal
    }

    /// Chooses the store again at the next copy (the chosen one is gone).
    @MainActor
    static func forget() {
        if let chosen, chosen.descriptor >= 0 { close(chosen.descriptor) }
        chosen = nil
    }

    @MainActor private static var chosen: CopyStore? {
        didSet {
            let root = chosen?.root
            forWorkers.withLock { $0 = root }
        }
    }
    /// The root of the store in use, for the workers this host starts (``workerVariable``):
    /// read by ``WorkerSpawn`` off the main actor.
    static let forWorkers = Locked<String?>(nil)
    @MainActor private static var refusal: (path: String, reason: String)?
    @MainActor private static var evictionScheduled = false

    /// Starts, once per process, the background pass that removes what no file needs any more.
    @MainActor
    func didMakeCopy() {
        guard !Self.evictionScheduled else { return }
        Self.evictionScheduled = true
        let root = root
        let persistent = persistent
        let parent = Self.parentPath(of: root)
        DispatchQueue.global(qos: .utility).async {
            if persistent { Self.evict(root) }
            Self.removeLeftovers(in: parent)
        }
    }

    // MARK: Keys

    /// The name of the KEY directory of a file with `identity`: its inode in hex, least
    /// significant digit first, then its device, size, modification and change time in hex,
    /// separated by dots.
    ///
    /// Why the inode first and backwards: `dlopen` compares the path it is given with the path of
    /// every library loaded (ld.so, a `strcmp` each, so N² / 2 for N plugins), and the copies'
    /// paths share the store's; the files of one plugin directory differ mostly in the last
    /// digits of their inodes, which now come right after it (a 1000-plugin start: `strcmp`
    /// ~2.7 µs per plugin for 24 more bytes of shared prefix). Dots, not the dashes of the
    /// format before: a host of that format reads these names as no key and leaves them alone,
    /// and this one evicts that format's versions by the same rule as its own.
    static func key(_ identity: FileIdentity) -> String {
        String(unsafeUninitializedCapacity: keyCapacity) { writeKey(identity, into: $0) }
    }

    /// The most bytes a key takes: five fields of up to 16 digits and four dots.
    static let keyCapacity = 5 * 16 + 4

    /// Writes ``key(_:)``'s bytes at the start of `buffer` (at least ``keyCapacity`` bytes) and
    /// returns how many: the stored copy's path is built in one buffer for every plugin at every
    /// start, and appending to an array digit by digit was ~1400 instructions a plugin.
    static func writeKey(_ identity: FileIdentity, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var count = 0
        var inode = identity.inode
        repeat {
            buffer[count] = Hex.digit(inode)
            count += 1
            inode >>= 4
        } while inode != 0
        // One call per field, not a loop over an array of them: the array was a heap
        // allocation per plugin at every start.
        count = writeField(identity.device, into: buffer, at: count)
        count = writeField(UInt64(bitPattern: identity.size), into: buffer, at: count)
        count = writeField(UInt64(bitPattern: identity.modified), into: buffer, at: count)
        return writeField(UInt64(bitPattern: identity.changed), into: buffer, at: count)
    }

    /// A dot, then `value` in hex, most significant digit first, at `start`; returns the end.
    private static func writeField(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int)
        -> Int
    {
        buffer[start] = UInt8(ascii: ".")
        let digits = max(1, (64 - value.leadingZeroBitCount + 3) / 4)
        var rest = value
        for index in stride(from: start + digits, to: start, by: -1) {
            buffer[index] = Hex.digit(rest)
            rest >>= 4
        }
        return start + 1 + digits
    }

    /// The identity a KEY directory's name stands for, in this format or the one before (dashes,
    /// device first: eviction removes those versions by the same rule); nil for any other name.
    static func identity(key: String) -> FileIdentity? {
        let dotted = key.split(separator: ".", omittingEmptySubsequences: false)
        let fields = dotted.count == 5 ? dotted : key.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count == 5 else { return nil }
        let numbers = fields.enumerated().compactMap { index, field in
            UInt64(dotted.count == 5 && index == 0 ? String(field.reversed()) : String(field), radix: 16)
        }
        guard numbers.count == 5 else { return nil }
        // This format: inode, device, …; the one before: device, inode, ….
        let (inode, device) = dotted.count == 5 ? (numbers[0], numbers[1]) : (numbers[1], numbers[0])
        return FileIdentity(
            device: device, inode: inode, size: Int64(bitPattern: numbers[2]),
            modified: Int64(bitPattern: numbers[3]), changed: Int64(bitPattern: numbers[4]))
    }

    // MARK: Choosing the store

    /// The shared store's path when it is safe to use (made when missing), chosen as
    /// ``current()`` chooses it; nil otherwise. For what is cached beside copies by identity
    /// (``TrustCache``) off the main actor.
    static func sharedRootIfSafe() -> String? {
        let parent = parent()
        guard isSafeParent(parent) else { return nil }
        let shared = parent + "/servicehost-copies-\(FileSecurity.hostUser)"
        return problem(shared) == nil ? shared : nil
    }

    /// Why `path` cannot be the shared store (made 0700 when missing), or nil when it can.
    private static func problem(_ path: String) -> String? {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            return "cannot create it: \(SystemError.current("mkdir", path))"
        }
        var status = stat()
        guard lstat(path, &status) == 0 else { return "\(SystemError.current("lstat", path))" }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: return "it is a symlink"
        default: return "it is not a directory"
        }
        if status.st_uid != FileSecurity.hostUser {
            return "it is owned by uid \(status.st_uid), not the host's user (uid \(FileSecurity.hostUser))"
        }
        if status.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            return "it is writable by \(status.st_mode & S_IWOTH != 0 ? "other users" : "its group")"
                + " (mode \(String(status.st_mode & 0o7777, radix: 8)))"
        }
        return nil
    }

    private static let privatePrefix = "servicehost-loaded-"

    /// A directory of this process's own, removed at exit, for copies that must not be shared:
    /// a version loaded a second time (``StoredCopy``). Made at the first use, beside the store
    /// in use (a store left for another takes its scratch directory's place too).
    @MainActor
    static func scratch() throws(SystemError) -> String {
        if let madeScratch { return madeScratch }
        let store = try current()
        let root = store.persistent ? try makePrivate(in: parentPath(of: store.root)) : store.root
        madeScratch = root
        return root
    }

    @MainActor private static var madeScratch: String?

    @MainActor
    private static func makePrivate(in parent: String) throws(SystemError) -> String {
        var template = Array((parent + "/\(privatePrefix)\(getpid())-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw .current("mkdtemp", parent) }
        let root = String(cString: made)
        removeAtExit(root)
        return root
    }

    /// `TMPDIR` when it is absolute, else `/tmp`.
    private static func temporary() -> String {
        getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
    }

    private static func parent() -> String {
        let temporary = temporary()
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
        return (status.st_uid == FileSecurity.hostUser || status.st_uid == 0)
            && status.st_mode & (S_IWGRP | S_IWOTH) == 0
    }

    // MARK: Removing

    /// Removes the KEY directories of `root` whose source no longer has their identity. One
    /// without `.source` yet is being made: left alone.
    private static func evict(_ root: String) {
        guard let store = try? DirectoryHandle.open(root), let keys = try? store.names() else { return }
        for key in keys {
            guard let identity = identity(key: key), let directory = try? DirectoryHandle.open(store.child(key)),
                let source = (try? directory.read(sourceName, limit: 65536)) ?? nil
            else { continue }
            var status = stat()
            let path = String(decoding: source, as: UTF8.self)
            // A relative path names a file only from its writer's directory: never judged here.
            guard path.hasPrefix("/") else { continue }
            if stat(PathBytes.cString(path), &status) == 0 && FileIdentity(status) == identity { continue }
            // A copy being made (its temporary file) is left to its maker; a copy removed between
            // another host's check and its dlopen is copied again by that host.
            let names = (try? directory.names()) ?? []
            if names.contains(where: { $0.hasPrefix(DirectoryHandle.temporaryPrefix) }) { continue }
            // A copy a host holds for its workers' restarts (``HeldCopy``): its version runs.
            if isHeld(root + "/" + key, names: names.filter { $0 != sourceName }) { continue }
            removeTree(root + "/" + key)
        }
    }

    /// Whether a process holds one of the copies `names` of `directory` (a shared `flock`).
    private static func isHeld(_ directory: String, names: [String]) -> Bool {
        for name in names {
            let descriptor = open(directory + "/" + name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            if flock(descriptor, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK { return true }
        }
        return false
    }

    /// Removes the private stores of processes now gone (a killed worker's, or an older host's).
    private static func removeLeftovers(in parent: String) {
        guard let names = try? DirectoryHandle.open(parent).names() else { return }
        for name in names where name.hasPrefix(privatePrefix) {
            let pidText = name.dropFirst(privatePrefix.count).prefix { $0 != "-" }
            guard let pid = pid_t(pidText), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            var status = stat()
            let path = parent + "/" + name
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == FileSecurity.hostUser
            else { continue }
            removeTree(path)
        }
    }

    /// Removes a directory of copies two levels deep: its subdirectories, their files, itself.
    private static func removeTree(_ root: String) {
        for name in (try? DirectoryHandle.open(root).names()) ?? [] {
            let entry = root + "/" + name
            for file in (try? DirectoryHandle.open(entry).names()) ?? [] { unlink(entry + "/" + file) }
            if rmdir(entry) != 0 { unlink(entry) }
        }
        rmdir(root)
    }

    /// Has a normal exit remove the private store `root`. Not on the main actor: `exit` may
    /// run on any thread.
    private nonisolated static func removeAtExit(_ root: String) {
        let first = privateRootsAtExit.withLock { roots in
            roots.append(root)
            return roots.count == 1
        }
        if first { atexit { privateRootsAtExit.withLock { roots in roots.forEach(CopyStore.removeTree) } } }
    }
}

// The private stores to remove when the process exits normally (an atexit handler cannot
// capture): a store left for another one adds one.
private let privateRootsAtExit = Locked<[String]>([])
