import Glibc
import Locking
import ServiceJSON

/// Verdicts of ``PluginTrust`` by plugin file identity: in memory for this process, and for
/// later starts in one file of the shared store of copies (``CopyStore``), `STORE/.verdicts`
/// (``VerdictFile``), read once, at the first question of a process.
///
/// Why one file rather than one beside each stored copy: a cached start then reads no file per
/// plugin. Reading the verdict beside each copy, with the signature file to compare it with, was
/// 12 system calls per signed plugin, and row 3's signed start-up missed its target (1.34×,
/// 1.49×); the signature file is now known by its identity instead (``PluginTrust``).
///
/// Written only after a new verdict (``save()``, once per load, check or inspection): merged
/// with the file as it is then, under an `flock` of the store, so two hosts starting at once
/// keep each other's verdicts. A verdict lives as long as its version's KEY directory (made
/// for it, naming its source, when no copy made it yet): the records of versions evicted (see
/// ``CopyStore``) are left out of the next write.
final class TrustCache: Sendable {
    private struct State {
        /// Whether the file was read (or there is none to read).
        var loaded = false
        var entries: [FileIdentity: VerdictFile.Entry] = [:]
        /// The identities given a verdict by this process since the last ``save()``, and the
        /// path of the file each was found at.
        var changed: [FileIdentity: (entry: VerdictFile.Entry, path: String)] = [:]
    }

    // The lock guards the table and the file's reads and writes in this process.
    private let state = Locked(State())
    /// The shared store of copies when it is safe (chosen as ``CopyStore`` chooses it), or nil:
    /// verdicts are then kept in memory only.
    private let root: String?

    /// The verdict file's name in the store: a dot, so no KEY directory and no eviction.
    static let fileName = ".verdicts"

    init(root: String? = CopyStore.sharedRootIfSafe()) { self.root = root }

    /// The file's SHA-256 in hex, when known.
    func sha256(_ identity: FileIdentity) -> String? {
        entry(identity)?.sha256.map { Hex.string($0) }
    }

    /// The signature that verified for the file, when one did.
    func signature(_ identity: FileIdentity) -> VerdictFile.Signature? { entry(identity)?.signature }

    /// Keeps the SHA-256 of the file at `path` with `identity`.
    func setSHA256(_ identity: FileIdentity, digest: [UInt8], path: String) {
        set(identity, VerdictFile.Entry(sha256: digest), path: path)
    }

    /// Keeps the signature that verified for the file at `path` with `identity`.
    func setSignature(_ identity: FileIdentity, _ signature: VerdictFile.Signature, path: String) {
        set(identity, VerdictFile.Entry(signature: signature), path: path)
    }

    /// Keeps the verdicts of `old` for `new` too: the same bytes under the identity a link of the
    /// host's gave the file at `path` (``CarriedIdentity`` says when that holds).
    func carry(from old: FileIdentity, to new: FileIdentity, path: String) {
        guard let entry = entry(old) else { return }
        set(new, entry, path: path)
    }

    /// Names `new` as the identity of the signature file in the verdict of `plugin`, where `old`
    /// was: the same signature bytes, linked by the host (``CarriedIdentity``).
    func carrySignatureFile(of plugin: FileIdentity, from old: FileIdentity, to new: FileIdentity, path: String) {
        guard let kept = signature(plugin), kept.file == old else { return }
        let moved = VerdictFile.Signature(
            file: new, keyID: kept.keyID, key: kept.key, prehashed: kept.prehashed, trustedComment: kept.trustedComment)
        set(plugin, VerdictFile.Entry(signature: moved), path: path)
    }

    private func entry(_ identity: FileIdentity) -> VerdictFile.Entry? {
        state.withLock { state in
            if !state.loaded {
                state.loaded = true
                state.entries = read() ?? [:]
            }
            return state.entries[identity]
        }
    }

    private func set(_ identity: FileIdentity, _ entry: VerdictFile.Entry, path: String) {
        state.withLock { state in
            state.entries[identity] = state.entries[identity].map { $0.updated(by: entry) } ?? entry
            state.changed[identity] = (state.changed[identity].map { $0.entry.updated(by: entry) } ?? entry, path)
        }
    }

    /// Writes this process's new verdicts to the file, merged with what it holds now. Best
    /// effort: a verdict not written is computed again next time.
    func save() {
        state.withLock { state in
            guard !state.changed.isEmpty else { return }
            defer { state.changed = [:] }
            guard let root, let store = try? DirectoryHandle.open(root), lock(store) else { return }
            // A version checked before it is copied (or never copied: `host check`) gets its KEY
            // directory now, naming its source, so eviction ends its verdicts with it.
            for (identity, changed) in state.changed where !hasCopy(identity, in: store) {
                Self.makeKeyDirectory(identity, source: changed.path, in: root)
            }
            var merged: [FileIdentity: VerdictFile.Entry] = [:]
            for (identity, entry) in read(in: store) ?? [:] where hasCopy(identity, in: store) {
                merged[identity] = entry
            }
            for (identity, changed) in state.changed {
                merged[identity] = merged[identity].map { $0.updated(by: changed.entry) } ?? changed.entry
            }
            let bytes = VerdictFile.encode(merged)
            _ = bytes.withUnsafeBytes { bytes in
                Result { () throws(SystemError) in try store.replace(Self.fileName, with: bytes) }
            }
            // The lock goes with the store's descriptor.
        }
    }

    /// The file's entries; nil when there is none, it cannot be read, or it is corrupt (every
    /// verdict is then computed again, and the next ``save()`` writes the file anew).
    private func read(in store: DirectoryHandle? = nil) -> [FileIdentity: VerdictFile.Entry]? {
        guard let root else { return nil }
        let path = root + "/" + Self.fileName
        let file: ReadOnlyFile
        do {
            // Not following a symlink: the store is this user's, and so is what it names.
            if let store {
                file = try ReadOnlyFile(Self.fileName, in: store.descriptor.rawValue, path: path)
            } else {
                file = try ReadOnlyFile(path, in: AT_FDCWD, path: path)
            }
        } catch {
            return nil
        }
        guard file.status.st_mode & S_IFMT == S_IFREG, file.size <= VerdictFile.maxFileSize,
            let bytes = try? file.read(at: 0, count: file.size + 1)
        else { return nil }
        return try? VerdictFile.decode(bytes)
    }

    /// An exclusive `flock` of the store's folder, waiting at most about a second for another
    /// host writing its verdicts (a host stopped while it held it does not stop this one).
    private func lock(_ store: DirectoryHandle) -> Bool {
        for _ in 0..<200 {
            if flock(store.descriptor.rawValue, LOCK_EX | LOCK_NB) == 0 { return true }
            guard errno == EWOULDBLOCK || errno == EINTR else { return false }
            usleep(5000)
        }
        return false
    }

    /// `root/KEY` for `identity`, with the `.source` a copy's folder has (``CopyStore``).
    private static func makeKeyDirectory(_ identity: FileIdentity, source path: String, in root: String) {
        let folder = root + "/" + CopyStore.key(identity)
        if mkdir(folder, 0o700) != 0 && errno != EEXIST { return }
        guard let directory = try? DirectoryHandle.open(folder), (try? directory.contains(CopyStore.sourceName)) != true
        else { return }
        // Absolute: eviction runs in other processes, from other directories.
        _ = Array(StoredCopy.absolute(path).utf8).withUnsafeBytes { bytes in
            Result { () throws(SystemError) in try directory.replace(CopyStore.sourceName, with: bytes) }
        }
    }

    /// Whether the store holds a copy (a KEY directory) of the version `identity`.
    private func hasCopy(_ identity: FileIdentity, in store: DirectoryHandle) -> Bool {
        var status = stat()
        return fstatat(store.descriptor.rawValue, CopyStore.key(identity), &status, AT_SYMLINK_NOFOLLOW) == 0
    }
}
