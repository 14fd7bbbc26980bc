import Glibc

/// The registry cache (GStreamer's registry): what ``PluginInspector`` read from each plugin
/// file, kept in the state directory's `registry.bin` and keyed by path, device, inode, size,
/// modification and change time, so a file met again costs one `stat` instead of an ELF read.
///
/// Stale metadata can never load a plugin: a file whose `stat` differs in any key field is read
/// again, and the loader loads the stored copy of that same identity (``StoredCopy``, whose
/// source is checked before and after copying), so the code loaded is the code whose metadata
/// was used.
///
/// The file's header is read when the first plugin file is looked up, and a directory's group is
/// read (``RegistryReader``: one `pread` each), checked and decoded when the first file of that
/// directory is; the other directories' groups are not read. A registry file whose header is
/// corrupt, truncated or from another host version or format is then discarded (and, given a
/// log, logged once as `registry.rebuilt`); a group that fails its checks or is cut short costs
/// only its directory (logged the same way); the next save writes a new file, copying the other
/// groups unchanged (read then). Saving is atomic (``DirectoryHandle/replace(_:with:)``:
/// temporary file, `fsync`, rename).
public final class RegistryCache: Sendable {
    /// Where `registry.bin` is.
    let directory: DirectoryHandle
    private let log: Log?
    // Guarded by its own lock: inspections of a reload and of `host ctl service start` may overlap.
    private let state: Locked<State>

    /// An entry, and whether this process looked it up or stored it (what a save always keeps).
    private struct Cached {
        var entry: RegistryEntry
        var used: Bool
    }

    private struct State {
        /// Whether the file's header was read: it is read at the first lookup or store, so a host
        /// or an inspection that meets no plugin file never reads (nor checks) the registry.
        var loaded = false
        /// The file, open, once its header was found sound (each group is read and checked when
        /// built or copied); nil when there was none or it was discarded.
        var reader: RegistryReader<ReadOnlyFile>?
        /// The directories (escaped, ending in `/`) whose groups were read and built (or found
        /// bad): a host reads its own directories' groups, not those of every directory sharing the file.
        var built: Set<String> = []
        /// The folder of the last lookup (one of `built`; nil before the first).
        var lastFolder: String?
        /// What the file holds for the directories built, then what was read since; an entry
        /// looked up or stored by this process is marked used (a save always keeps it).
        var entries: [RegistryKey: Cached] = [:]
        /// How many of `entries` are used.
        var usedCount = 0
        /// Whether `entries` differ from the file.
        var changed = false
        /// Lookups answered from the registry and files read, since the last ``takeCounts()``.
        var hits = 0, misses = 0
        /// Whether a failed save was logged (once is enough).
        var saveFailureLogged = false
        /// Whether saves wait (``holdSaves(_:)``): what changed is written by the first save after.
        var held = false
        /// The paths of `entries`, made at a miss and dropped when a group adds entries: a miss
        /// on one of them is a file changed since it was cached. Not kept up to date on every
        /// lookup, so a start whose files all match never hashes a path for it.
        var paths: Set<String>?
    }

    /// The registry in `directory`, read at its first use; a file that cannot be used is then
    /// logged and ignored.
    init(directory: DirectoryHandle, log: Log?) {
        self.directory = directory
        self.log = log
        state = Locked(State())
    }

    /// Reads the file's header the first time it is needed, and reads and builds the group of
    /// `path`'s directory the first time one of its files is looked up.
    private func load(_ state: inout State, for path: String) {
        if !state.loaded {
            state.loaded = true
            do {
                if let file = try directory.openFile(RegistryFile.name) {
                    do throws(RegistryFile.Problem) {
                        state.reader = try RegistryReader(file)
                    } catch {
                        discard(error.description, &state)
                    }
                }
            } catch {
                discard("unreadable: \(error)", &state)
            }
        }
        guard let reader = state.reader else { return }
        // The files of one directory come one after another: the same folder as the last
        // lookup is answered without making its string nor hashing it (~2000 instructions per
        // plugin at every start, callgrind).
        if var last = state.lastFolder {
            var path = path
            let sameFolder = path.withUTF8 { bytes in
                let end = (bytes.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1
                return last.withUTF8 { last in
                    end == last.count && (end == 0 || memcmp(bytes.baseAddress!, last.baseAddress!, end) == 0)
                }
            }
            if sameFolder { return }
        }
        let folder = RegistryFile.split(path).directory
        state.lastFolder = folder
        guard state.built.insert(folder).inserted, let slot = reader.slot(of: folder) else { return }
        // A bad group costs only its own directory's entries: it is dropped (logged once) and
        // written again at the next save; the other directories' groups are not even read.
        do throws(RegistryFile.Problem) {
            let found = try RegistryFile.entries(of: try reader.group(slot)).mapValues {
                Cached(entry: $0, used: false)
            }
            if state.entries.isEmpty { state.entries = found } else { state.entries.merge(found) { mine, _ in mine } }
            state.paths = nil
        } catch {
            state.changed = true
            logRebuilt(error.description)
        }
    }

    /// Drops what the file held (nothing of it is trusted) and logs why, once.
    private func discard(_ reason: String, _ state: inout State) {
        state.reader = nil
        state.entries = state.entries.filter(\.value.used)
        // A discarded file is rewritten at the next save even when no plugin is read.
        state.changed = true
        logRebuilt(reason)
    }

    private func logRebuilt(_ reason: String) {
        log?.warn(
            "host", "registry cache \(directory.child(RegistryFile.name)) \(reason); rebuilding it",
            event: .registryRebuilt,
            .string("path", directory.child(RegistryFile.name)), .string("reason", reason))
    }

    /// The registry of the host's state directory.
    public convenience init(stateDirectory: StateDirectory, log: Log?) {
        self.init(directory: stateDirectory.root, log: log)
    }

    /// The registry of the state directory at `path` for `host inspect`, which takes no lock:
    /// nil when the directory is missing or another user could change it (its registry would
    /// then be no evidence of what the files hold).
    public static func forInspection(stateDirectory path: String) -> RegistryCache? {
        guard !path.isEmpty, FileSecurity.pathProblem(path, what: "state directory") == nil,
            let directory = try? DirectoryHandle.open(path), let status = try? directory.status(),
            FileSecurity.problem(path: path, status: status, what: "state directory") == nil
        else { return nil }
        return RegistryCache(directory: directory, log: nil)
    }

    /// What the registry holds for `key`, if anything.
    func lookup(_ key: RegistryKey) -> RegistryEntry? {
        state.withLock { state in
            load(&state, for: key.path)
            guard let index = state.entries.index(forKey: key) else {
                state.misses += 1
                noteChanged(key, &state)
                return nil
            }
            state.hits += 1
            // The flag is set through the index found: one hash of the key per lookup.
            if !state.entries.values[index].used {
                state.entries.values[index].used = true
                state.usedCount += 1
            }
            return state.entries.values[index].entry
        }
    }

    /// Logs `registry.changed` when the registry holds `key`'s path with another identity: the
    /// file changed since it was cached (rebuilt, replaced, touched), so it is read again. Once
    /// per file: what is read is stored under the new identity, which the next lookup finds.
    private func noteChanged(_ key: RegistryKey, _ state: inout State) {
        guard let log, !state.entries.isEmpty else { return }
        if state.paths == nil { state.paths = Set(state.entries.keys.lazy.map(\.path)) }
        guard state.paths?.contains(key.path) == true else { return }
        log.info(
            "host", "registry cache: \(key.path) changed since it was cached; reading it again",
            event: .registryChanged,
            .string("path", key.path))
    }

    /// Records what the registry holds for `old` under each of `new` too: the same file, linked
    /// by the host (``CarriedIdentity``). Counted neither as a lookup answered nor as a file read.
    func carry(_ old: RegistryKey, to new: [RegistryKey]) {
        state.withLock { state in
            load(&state, for: old.path)
            guard let entry = state.entries[old]?.entry else { return }
            for key in new {
                load(&state, for: key.path)
                let before = state.entries.updateValue(Cached(entry: entry, used: true), forKey: key)
                if before?.used != true { state.usedCount += 1 }
                state.changed = true
            }
        }
    }

    /// Notes that the host removed the folder `path` (a deploy's generation or staging folder):
    /// the next save writes the registry without its group (``save(scanned:)`` drops the groups of
    /// folders that are gone), even when this process met no plugin file since its last save.
    func removed(folder path: String) {
        state.withLock { state in
            load(&state, for: PathBytes.escape(path.hasSuffix("/") ? path : path + "/"))
            state.changed = true
        }
    }

    /// Records what was read from the file `key` names, replacing what an older version of it left.
    func store(_ key: RegistryKey, _ entry: RegistryEntry) {
        state.withLock { state in
            load(&state, for: key.path)
            let before = state.entries.updateValue(Cached(entry: entry, used: true), forKey: key)
            if before?.used != true { state.usedCount += 1 }
            if before?.entry != entry { state.changed = true }
        }
    }

    /// The lookups answered from the registry and the files read since the last call.
    public func takeCounts() -> (cached: Int, read: Int) {
        state.withLock { state in
            defer { (state.hits, state.misses) = (0, 0) }
            return (state.hits, state.misses)
        }
    }

    /// Holds saves (true) until released (false): ``save(scanned:)`` meanwhile writes nothing and
    /// keeps what changed for the next save. A deploy's switch holds them, and the acceptance
    /// saves: a generation is a new folder, so its switch always changed the registry, and
    /// writing it (two `fsync`s) was most of a deploy's request.
    func holdSaves(_ held: Bool) { state.withLock { $0.held = held } }

    /// Writes the registry when it changed, dropping what is known stale: older versions of a
    /// path used, and the entries of files directly in one of `scanned` (directories read whole
    /// this time, escaped as ``PathBytes`` says) that were not used, which are gone, replaced or
    /// no longer plugins. Entries of other directories stay: hosts and `host inspect` runs with
    /// other plugin directories share one state directory, and pruning each other's entries made
    /// every one of them read all its files again. A failure is logged once and leaves the old
    /// file: it only costs speed. A registry never used (no plugin file met) is left as it is:
    /// the entries of a directory emptied since go at the next save that reads the file.
    public func save(scanned: [String]) {
        let prefixes = scanned.map { PathBytes.escape($0.hasSuffix("/") ? $0 : $0 + "/") }
        let bytes: [UInt8]? = state.withLock { state in
            // Held: the file stays open and what changed stays to be written.
            if state.held { return nil }
            // The file is closed after each save (a host holds no descriptor for it while it
            // runs) and its header read again at the next lookup, which finds the groups this
            // process built (in `built`) already in memory. A discarded file (no reader) is not
            // read again: it would be logged twice.
            defer {
                if state.reader != nil {
                    state.reader = nil
                    state.loaded = false
                }
            }
            // Nothing read, stored nor discarded, and every entry built was used: nothing to
            // prune or write (the common cached run skips building the sets below).
            guard state.loaded, state.changed || state.entries.count != state.usedCount else { return nil }
            let usedPaths = Set(state.entries.lazy.filter(\.value.used).map(\.key.path))
            let keeps = { (key: RegistryKey, cached: Cached) -> Bool in
                if cached.used { return true }
                if usedPaths.contains(key.path) { return false }
                return !prefixes.contains { prefix in
                    key.path.hasPrefix(prefix)
                        && !key.path.utf8.dropFirst(prefix.utf8.count).contains(UInt8(ascii: "/"))
                }
            }
            // A folder that is gone (a deploy's pruned or rolled-back generation, its renamed
            // staging folder) takes its group with it, used or not: no lookup can reach its files,
            // and the file would otherwise keep a group for every generation ever deployed.
            var gone: [String: Bool] = [:]
            let isGone = { (directory: String) -> Bool in
                if let known = gone[directory] { return known }
                let answer = Self.isGone(directory)
                gone[directory] = answer
                return answer
            }
            let before = state.entries.count
            state.entries = state.entries.filter {
                keeps($0.key, $0.value) && !isGone(RegistryFile.split($0.key.path).directory)
            }
            state.usedCount = state.entries.values.reduce(0) { $0 + ($1.used ? 1 : 0) }
            // The directories not built keep their groups byte for byte (read and checked only
            // now, to copy), except the scanned ones, whose files are all gone, and gone ones.
            let reader = state.reader
            let copied = (reader?.slots ?? []).filter {
                !state.built.contains($0.directory) && !prefixes.contains($0.directory)
            }
            let live = copied.filter { !isGone($0.directory) }
            guard state.changed || live.count != copied.count || state.entries.count != before else { return nil }
            state.changed = false
            var kept: [RegistryFile.Group] = []
            for slot in live {
                do throws(RegistryFile.Problem) {
                    guard let group = try reader?.group(slot) else { continue }
                    guard group.isIntact else { throw .corrupt("checksum mismatch in the group of \(slot.directory)") }
                    kept.append(group)
                } catch {
                    logRebuilt(error.description)
                }
            }
            return RegistryFile.encode(state.entries.mapValues(\.entry), keeping: kept)
        }
        guard let bytes else { return }
        // The error is carried out of the closure rather than thrown through it: a typed throw
        // through `withUnsafeBytes` crashes the 6.3 compiler.
        let failure: SystemError? = bytes.withUnsafeBytes { raw in
            do throws(SystemError) {
                // A cache: a file lost or torn in a power cut is read as corrupt and rebuilt.
                try directory.replace(RegistryFile.name, with: raw, durable: false)
                return nil
            } catch {
                return error
            }
        }
        if let error = failure {
            let first = state.withLock { state in
                state.changed = true
                defer { state.saveFailureLogged = true }
                return !state.saveFailureLogged
            }
            if first {
                log?.warn(
                    "host", "cannot write the registry cache: \(error)", event: .registryUnwritable,
                    .string("path", directory.child(RegistryFile.name)), .string("reason", "\(error)"))
            }
        }
    }

    /// Whether `directory` (escaped, ending in `/`) is gone: only an absolute path the system
    /// says is missing (a relative one is another process's working directory's; any other
    /// error, such as a permission or an unmounted disk's, may pass).
    private static func isGone(_ directory: String) -> Bool {
        guard directory.hasPrefix("/") else { return false }
        var status = stat()
        return stat(PathBytes.cString(directory), &status) != 0 && (errno == ENOENT || errno == ENOTDIR)
    }
}
