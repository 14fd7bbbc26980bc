import CSystem
import Glibc

/// A plugin file's copy in the store of copies (``CopyStore``), which is what the host
/// `dlopen`s: every plugin is loaded from one, never from the plugin directory.
///
/// Why: a library `dlopen`ed from its own file is mapped from that file, so `cp new.so lib/x.so`
/// (which rewrites the same inode, as package managers do too) changes code that is running,
/// and the next call jumps into the middle of the new bytes. The copy does not change,
/// whatever happens to the file.
///
/// Where: `STORE/KEY/NAME`, KEY the file's ``FileIdentity`` (``CopyStore/key(_:)``: inode, device, size, modification
/// and change time) and NAME its escaped base name (crash reports show it). Same key, same
/// bytes: a copy is made once and every later start (and every worker) re-uses it for no system
/// call of its own: the shared store is the host user's alone (checked when chosen, see
/// ``CopyStore``), so a copy there is opened as made, and only a `dlopen` that fails looks at it
/// (``makeIfNeeded()``: missing, not a regular file, writable or of another size is copied
/// again). So `dlopen` handing back a library already loaded under the same path is
/// right, and a file replaced, rewritten in place, or removed and put back has a new key, a new
/// path, and runs its new code.
///
/// A copy is written under a temporary name in KEY (`O_EXCL`, read-only 0500), checked to be
/// the file inspected (its identity did not change during the copy), then renamed into place:
/// two hosts making the same copy at once each rename a whole copy of the same bytes.
struct StoredCopy {
    /// The plugin file as the host names it (escaped, see ``PathBytes``).
    let path: String
    /// The copy, to give `dlopen` (another store's when the first could not take it).
    private(set) var loadPath: String
    /// The file's identity, which the copy's key names.
    private let identity: FileIdentity
    /// The store the copy is in, and where the copy's path relative to the store's open folder
    /// starts in `loadPath` (see `isIntact`); a private copy has no offset.
    private var store: CopyStore
    private var inStore: Int?
    /// The length of the copy's folder in `loadPath`.
    private var directoryLength: Int
    /// Whether the copy was looked at (or made) by this process; false for a copy of the shared
    /// store taken as made, which ``makeIfNeeded()`` checks when its `dlopen` fails.
    private var checked = false
    /// Whether `path` is itself a copy in the store (a worker opening the copy its host made,
    /// ``HeldCopy``): loaded as it is, never copied again.
    private var isStored = false

    /// The stored copy of the file at `path` inspected as `identity`. A copy in the shared store
    /// is taken as made (``makeIfNeeded()`` checks it once its `dlopen` fails, the first start of
    /// a version included); a private one, which no earlier start made, is made now. A file
    /// changed since it was inspected (or while it is copied) is refused with
    /// ``LoadFailure/Reason/changed``, so the code loaded is always the code inspected.
    @MainActor
    init(of path: String, identity: FileIdentity) throws(LoadFailure.Reason) {
        self.path = path
        self.identity = identity
        let store: CopyStore
        do { store = try CopyStore.current() } catch { throw .system(error) }
        self.store = store
        var inStore: Int? = store.root.utf8.count + 1
        let name = Self.nameStart(path)
        // (Asked in a worker only: the string built was an allocation per plugin at every start.)
        if store.isHosts && (path.hasPrefix(store.root + "/") || path == WorkerSpawn.pluginDescriptorPath) {
            // Already a copy in this store (the one a worker's host made, or its descriptor for a
            // worker running as another user): it never changes.
            isStored = true
            // The copy's name is the file's escaped name, sent escaped again: its bytes as named.
            loadPath = String(decoding: PathBytes.unescape(path), as: UTF8.self)
            directoryLength = max(0, name - 1)
        } else if Self.loaded.insert(identity).inserted {
            (loadPath, directoryLength) = Self.storedPath(
                root: store.root, identity: identity, path: path, nameStart: name)
        } else {
            // This version is loaded already, and the host loads a file again only to start a
            // service anew (enabled by a reload, `service start`, a restart): `dlopen` of the same
            // path would hand back the loaded library, whose entry already ran (plugin.h: once
            // per library load). A copy of its own makes it a new load, as at a first start.
            Self.reloads += 1
            let directory: String
            do { directory = try CopyStore.scratch() + "/" + CopyStore.key(identity) + "-\(Self.reloads)" } catch {
                throw .system(error)
            }
            inStore = nil
            directoryLength = directory.utf8.count
            loadPath =
                directory + "/"
                + (name < path.utf8.count ? String(decoding: path.utf8.dropFirst(name), as: UTF8.self) : "plugin.so")
        }
        self.inStore = inStore
        // A copy of the shared store costs its `dlopen` alone (~1.2 µs a plugin per start was
        // this `lstat`, bench row 3); nothing else could have put another file there.
        if !isStored && (inStore == nil || !store.persistent) { _ = try makeIfNeeded() }
    }

    /// The copy of the file at `path` inspected as `identity` in the store, made now when it is
    /// missing or not intact: a copy for another process to load (a worker, ``HeldCopy``),
    /// whatever this process loaded.
    @MainActor
    static func made(of path: String, identity: FileIdentity) throws(LoadFailure.Reason) -> String {
        let store: CopyStore
        do { store = try CopyStore.current() } catch { throw .system(error) }
        let (loadPath, directoryLength) = storedPath(
            root: store.root, identity: identity, path: path, nameStart: nameStart(path))
        var copy = StoredCopy(
            path: path, loadPath: loadPath, identity: identity, store: store, inStore: store.root.utf8.count + 1,
            directoryLength: directoryLength)
        _ = try copy.makeIfNeeded()
        return copy.loadPath
    }

    private init(
        path: String, loadPath: String, identity: FileIdentity, store: CopyStore, inStore: Int?, directoryLength: Int
    ) {
        self.path = path
        self.loadPath = loadPath
        self.identity = identity
        self.store = store
        self.inStore = inStore
        self.directoryLength = directoryLength
    }

    /// Where the file name starts in `path` (escaped: an escaped path's last component is its
    /// file name escaped). Worked on in the string's own bytes: every plugin at every start.
    /// Nonisolated, as ``storedPath(root:identity:path:nameStart:)``: a closure made in a
    /// main-actor method is checked for the main actor at each call.
    private nonisolated static func nameStart(_ path: String) -> Int {
        var path = path
        return path.withUTF8 { ($0.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1 }
    }

    /// `root/KEY/NAME` written straight into the String's storage, and the length of its folder.
    private nonisolated static func storedPath(
        root: String, identity: FileIdentity, path: String, nameStart: Int
    ) -> (path: String, directoryLength: Int) {
        var root = root
        var source = path
        var directoryLength = 0
        let name = path.utf8.count - nameStart
        let capacity = root.utf8.count + 1 + CopyStore.keyCapacity + 1 + max(name, 9)
        let stored = String(unsafeUninitializedCapacity: capacity) { buffer in
            var count = root.withUTF8 { buffer.initialize(fromContentsOf: $0) }
            buffer[count] = UInt8(ascii: "/")
            count += 1
            count += CopyStore.writeKey(identity, into: UnsafeMutableBufferPointer(rebasing: buffer[count...]))
            directoryLength = count
            buffer[count] = UInt8(ascii: "/")
            count += 1
            if name > 0 {
                return source.withUTF8 {
                    UnsafeMutableBufferPointer(rebasing: buffer[count...]).initialize(fromContentsOf: $0[nameStart...])
                } + count
            }
            return UnsafeMutableBufferPointer(rebasing: buffer[count...]).initialize(fromContentsOf: "plugin.so".utf8)
                + count
        }
        return (stored, directoryLength)
    }

    /// Looks at the copy once, and makes it again when it is missing or not intact: a regular
    /// file (not a symlink), the host user's, with no write bit, of its key's size. True when it
    /// made a copy (an intact one, or one checked before, is left: false).
    @MainActor
    mutating func makeIfNeeded() throws(LoadFailure.Reason) -> Bool {
        guard !checked, !isStored else { return false }
        checked = true
        if Self.isIntact(loadPath, in: inStore.map { (store.descriptor, $0) }, size: identity.size) { return false }
        while true {
            // Only a copy to make needs its folder's own string.
            let directory = String(decoding: loadPath.utf8.prefix(directoryLength), as: UTF8.self)
            do throws(MakeError) {
                do throws(MakeError) { try Self.make(loadPath, in: directory, of: path, identity: identity) } catch {
                    // The store itself went away while the host ran (removed by hand, or a tmp
                    // cleaner on a long-running host): choose and check it again, once.
                    guard store.persistent, access(store.root, F_OK) != 0 else { throw error }
                    CopyStore.forget()
                    guard let again = try? CopyStore.current(), again.root == store.root else { throw error }
                    try Self.make(loadPath, in: directory, of: path, identity: identity)
                }
                store.didMakeCopy()
                return true
            } catch {
                guard case .store(let failure) = error else { throw error.reason }
                // The store cannot take it (full, read-only, a quota): the next one (``CopyStore``).
                guard let next = CopyStore.fallBack(from: store, because: failure) else { throw .system(failure) }
                try move(to: next)
            }
        }
    }

    /// Puts the copy in `next` (the store that replaces one that could not take it).
    @MainActor
    private mutating func move(to next: CopyStore) throws(LoadFailure.Reason) {
        let name = Self.nameStart(path)
        store = next
        if inStore != nil {
            inStore = next.root.utf8.count + 1
            (loadPath, directoryLength) = Self.storedPath(
                root: next.root, identity: identity, path: path, nameStart: name)
            return
        }
        Self.reloads += 1
        let directory: String
        do { directory = try CopyStore.scratch() + "/" + CopyStore.key(identity) + "-\(Self.reloads)" } catch {
            throw .system(error)
        }
        directoryLength = directory.utf8.count
        loadPath =
            directory + "/"
            + (name < path.utf8.count ? String(decoding: path.utf8.dropFirst(name), as: UTF8.self) : "plugin.so")
    }

    /// Why a copy was not made: the file (its reason), or the store (which another may replace).
    private enum MakeError: Error {
        case file(LoadFailure.Reason)
        case store(SystemError)

        var reason: LoadFailure.Reason {
            switch self {
            case .file(let reason): reason
            case .store(let error): .system(error)
            }
        }
    }

    /// Whether `copy` can be loaded as is: a regular file (not a symlink), ours, with no write
    /// bit, of the size of its key. Anything else is removed, to be copied again. `relative`: the
    /// store's open folder and where the copy's path in it starts in `copy` (its bytes), which
    /// the `lstat` goes by (two names for the kernel to walk, not the whole path); a miss there
    /// asks the whole path too (the folder open may be a store removed since, and `copy` in a
    /// new one).
    private static func isIntact(_ copy: String, in relative: (directory: Int32, offset: Int)?, size: Int64) -> Bool {
        var status = stat()
        let found =
            relative.map { relative in
                relative.directory >= 0
                    && copy.withCString {
                        fstatat(relative.directory, $0 + relative.offset, &status, AT_SYMLINK_NOFOLLOW)
                    } == 0
            } ?? false
        guard found || lstat(copy, &status) == 0 else { return false }
        if status.st_mode & S_IFMT == S_IFREG, status.st_uid == FileSecurity.hostUser, status.st_mode & 0o222 == 0,
            Int64(status.st_size) == size
        {
            return true
        }
        unlink(copy)
        return false
    }

    /// Writes the copy under a temporary name in `directory` and renames it to `copy` once it
    /// is whole and the source did not change meanwhile.
    @MainActor
    private static func make(_ copy: String, in directory: String, of path: String, identity: FileIdentity)
        throws(MakeError)
    {
        let source: ReadOnlyFile
        do { source = try ReadOnlyFile(pluginPath: path) } catch { throw .file(.system(error)) }
        guard FileIdentity(source.status) == identity else { throw .file(.changed) }
        temporaries += 1
        let temporary = directory + "/" + DirectoryHandle.temporaryPrefix + "\(getpid())-\(temporaries)"
        let complete: Bool
        do throws(SystemError) {
            if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw .current("mkdir", directory) }
            // For eviction (``CopyStore``): which file the key is a version of.
            if access(directory + "/" + CopyStore.sourceName, F_OK) != 0 {
                let keyDirectory = try DirectoryHandle.open(directory)
                // Absolute: eviction runs in other processes, from other directories.
                try Array(Self.absolute(path).utf8).withUnsafeBytes { bytes in
                    Result { () throws(SystemError) in try keyDirectory.replace(CopyStore.sourceName, with: bytes) }
                }.get()
            }
            let output = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o500)
            complete = try Self.copy(source, into: output.rawValue, path: path)
            try output.close(temporary)
        } catch {
            unlink(temporary)
            throw .store(error)
        }
        // A file that ends early shrank under the copy; a write during it changes its time.
        var after = stat()
        guard complete, fstat(source.descriptor.rawValue, &after) == 0, FileIdentity(after) == identity else {
            unlink(temporary)
            throw .file(.changed)
        }
        guard rename(temporary, copy) == 0 else {
            let error = SystemError.current("rename", copy)
            unlink(temporary)
            throw .store(error)
        }
    }

    /// Temporary files this process made: the next one's name.
    @MainActor private static var temporaries = 0
    /// The versions (KEY directories) this process has loaded from, each once (see `init`): by
    /// identity, five numbers to hash rather than the directory's path.
    @MainActor private static var loaded: Set<FileIdentity> = []
    /// Makes room for the `count` versions a start loads: growing `loaded` one insert at a
    /// time hashed each identity again at every doubling. (A reload's few are not worth it:
    /// `reserveCapacity` is not specialized, ~10 k instructions.)
    @MainActor static func expectLoads(_ count: Int) {
        if loaded.isEmpty && count > 8 { loaded = Set(minimumCapacity: count) }
    }

    /// Versions loaded again: the next one's scratch directory.
    @MainActor private static var reloads = 0

    /// `path` (escaped, see ``PathBytes``) from the root: the working directory before a
    /// relative one.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        let directory = PathBytes.escape(
            Array(UnsafeBufferPointer(start: cwd, count: strlen(cwd))).map { UInt8(bitPattern: $0) })
        return directory + "/" + path
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
}
