import Glibc

/// What the host knows of a file whose names it changes (a link into a new generation, the
/// removal of an old generation's name), carried from the file's identity before the change to
/// its identity after: the registry entry (``RegistryCache``), the verdicts (``TrustCache``) and
/// the stored copy (``CopyStore``).
///
/// Why: a link or an unlink changes the inode's change time, which is part of ``FileIdentity``
/// (so that a file rewritten in place with its old size and modification time is not trusted).
/// Without this, every deploy gave each unchanged plugin a new identity: at its next open a new
/// inspection, a new stored copy and, for a signed plugin, a new hash and signature check.
///
/// When: only for a name the host itself linked (``DeployStage``'s unchanged file) or removed
/// (``remove(_:keeping:registry:)``), when the change kept the file's device, inode, size and
/// modification time, and its bytes are shown unchanged across it by the same rule every cache
/// entry is made by: an identity read before and after a read of the bytes (the registry stores
/// what it read only then; a stored copy is renamed into place only then).
enum CarriedIdentity {
    /// Links the open `file` as `link` (``DeployStage/linkOpened(_:as:)``) after its bytes were
    /// found equal to `reference`'s (another inode: the new set's file), and carries what the caches
    /// hold for its identity to the one the link gave it. `inForce`: the file's path (in the
    /// generation in force, which keeps that inode and names the stored copy's source); `final`:
    /// the link's path once the generation is renamed into place. Returns what the link returned.
    static func link(
        _ file: ReadOnlyFile, as link: String, sameAs reference: ReadOnlyFile, inForce: String, final: String,
        registry: RegistryCache?
    ) throws(SystemError) -> Bool {
        let old = FileIdentity(file.status)
        let opened = FileIdentity(reference.status)
        // The comparison before read `old`'s bytes, and the reference's as opened (another inode:
        // a file compared with itself shows nothing).
        let comparedAsOpened =
            file.currentIdentity == old && reference.currentIdentity == opened
            && (old.device != opened.device || old.inode != opened.inode)
        guard try DeployStage.linkOpened(file, as: link) else { return false }
        // Why this is safe: a writer could change the file between the check above and the link
        // (the host user, or root, after a `chmod`: the file is read-only and theirs), and that
        // change would be hidden in the change time the link sets. So the bytes are compared with
        // the reference's again after the link, with both identities read around it: unchanged,
        // they are the bytes compared before the link, which were `old`'s. That is the rule the
        // caches already trust (an identity unchanged across a read), with nothing assumed about
        // the moments in between; a file that fails it is checked anew, as any new identity is.
        guard comparedAsOpened, let new = file.currentIdentity, new.device == old.device, new.inode == old.inode,
            new.size == old.size, new.modified == old.modified, new != old,
            DeployStage.sameBytes(reference, file), file.currentIdentity == new,
            reference.currentIdentity == opened
        else { return true }
        carry(from: old, to: new, inForce: inForce, final: final, registry: registry)
        return true
    }

    private static let signatureSuffix = ".minisig"

    private static func carry(
        from old: FileIdentity, to new: FileIdentity, inForce: String, final: String, registry: RegistryCache?
    ) {
        let source = StoredCopy.absolute(PathBytes.escape(inForce))
        guard !inForce.hasSuffix(signatureSuffix) else {
            // A signature file is known only inside its plugin's verdict, by identity; its plugin
            // (the same name less `.minisig`) was linked just before it, the names being in order.
            var status = stat()
            let plugin = String(inForce.dropLast(signatureSuffix.count))
            if stat(plugin, &status) == 0 {
                PluginTrust.cache.carrySignatureFile(
                    of: FileIdentity(status), from: old, to: new,
                    path: StoredCopy.absolute(PathBytes.escape(plugin)))
            }
            return
        }
        // The copy first: the verdict file keeps a verdict only while its version has a folder.
        carryCopies(from: old, to: new, source: source)
        PluginTrust.cache.carry(from: old, to: new, path: source)
        registry?.carry(
            RegistryKey(path: PathBytes.escape(inForce), identity: old),
            to: [
                RegistryKey(path: PathBytes.escape(inForce), identity: new),
                RegistryKey(path: PathBytes.escape(final), identity: new),
            ])
    }

    /// Links the copies of version `old` in the store in use into a KEY folder of `new` naming
    /// `source` (a path whose file has identity `new`, so eviction keeps it): the same bytes, so
    /// the next start takes them as made (``StoredCopy``). Nothing when `old` has no copy there.
    private static func carryCopies(from old: FileIdentity, to new: FileIdentity, source: String) {
        guard let root = CopyStore.forWorkers.withLock({ $0 }) ?? CopyStore.sharedRootIfSafe() else { return }
        let from = root + "/" + CopyStore.key(old)
        let to = root + "/" + CopyStore.key(new)
        guard let copies = try? DirectoryHandle.open(from).names().filter({ !$0.hasPrefix(".") }), !copies.isEmpty,
            mkdir(to, 0o700) == 0 || errno == EEXIST
        else { return }
        for name in copies where Glibc.link(from + "/" + name, to + "/" + name) != 0 && errno != EEXIST { return }
        // Named last: eviction leaves a folder without `.source` alone (a copy being made).
        guard let folder = try? DirectoryHandle.open(to) else { return }
        _ = Array(source.utf8).withUnsafeBytes { bytes in
            Result { () throws(SystemError) in try folder.replace(CopyStore.sourceName, with: bytes) }
        }
    }

    /// Names the files `names` of the generation renamed from `staging` to `final` in the KEY
    /// folders the deploy's check made for their verdicts (``TrustCache``), which name the staged
    /// path: eviction would take that folder, and the verdict with it, as soon as the rename left
    /// that path without a file, and the next start would check the file anew.
    static func staged(_ names: [String], from staging: String, to final: String) {
        guard let root = CopyStore.sharedRootIfSafe() else { return }
        for name in names where name.hasSuffix(".so") {
            var status = stat()
            guard stat(final + "/" + name, &status) == 0,
                let folder = try? DirectoryHandle.open(root + "/" + CopyStore.key(FileIdentity(status))),
                let named = (try? folder.read(CopyStore.sourceName, limit: 65536)) ?? nil,
                String(decoding: named, as: UTF8.self) == StoredCopy.absolute(PathBytes.escape(staging + "/" + name))
            else { continue }
            _ = Array(StoredCopy.absolute(PathBytes.escape(final + "/" + name)).utf8).withUnsafeBytes { bytes in
                Result { () throws(SystemError) in try folder.replace(CopyStore.sourceName, with: bytes) }
            }
        }
    }

    /// Removes the generation's (or a staging) folder `path` as ``DeployStage/removeTree(_:)``
    /// does, first carrying what the caches hold for each file whose inode `inForce` (the folder
    /// of the generation in force) keeps under the same name: removing a name changes the inode's
    /// change time too, and pruning an old generation would otherwise give every unchanged file
    /// of the one running a new identity. The proof is the link's: the bytes read before the
    /// unlink (the identity read around that read being the old one) equal the bytes read after
    /// it (around that read, the new one).
    @discardableResult
    static func remove(_ path: String, keeping inForce: String?, registry: RegistryCache?) -> Bool {
        var carried = false
        if let inForce, inForce != path {
            for name in (try? DirectoryHandle.open(path).names()) ?? []
            where name.hasSuffix(".so") || name.hasSuffix(".so" + signatureSuffix) {
                carried = unlinkCarrying(path + "/" + name, keptAs: inForce + "/" + name, registry: registry) || carried
            }
        }
        // No check follows to write them, as one follows a deploy's links.
        if carried { PluginTrust.cache.save() }
        let removed = DeployStage.removeTree(path)
        // After the removal: the save drops the folder's group with the folder (``RegistryCache``
        // keeps groups only for folders that exist), so the file does not grow with every deploy.
        if removed { registry?.removed(folder: path) }
        if carried || removed { registry?.save(scanned: []) }
        return removed
    }

    /// Whether `file` holds exactly `bytes` now: read a piece at a time into one buffer (not a
    /// second copy of the whole file) and compared, and nothing after them.
    private static func holds(_ file: ReadOnlyFile, _ bytes: [UInt8]) -> Bool {
        let piece = DeployStage.comparePiece
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: piece, alignment: 64)
        defer { buffer.deallocate() }
        return bytes.withUnsafeBytes { expected in
            var offset = 0
            while true {
                guard let count = try? file.read(into: buffer, at: offset) else { return false }
                if count == 0 { return offset == expected.count }
                guard offset + count <= expected.count,
                    memcmp(buffer.baseAddress!, expected.baseAddress! + offset, count) == 0
                else { return false }
                offset += count
            }
        }
    }

    /// Unlinks `path` when `kept` is another name of its inode, carrying its caches' entries;
    /// whether it did.
    private static func unlinkCarrying(_ path: String, keptAs kept: String, registry: RegistryCache?) -> Bool {
        guard let file = try? ReadOnlyFile(path: path), file.status.st_mode & S_IFMT == S_IFREG,
            file.status.st_nlink > 1, let before = try? file.read(at: 0, count: file.size + 1),
            before.count == file.size, file.currentIdentity == FileIdentity(file.status)
        else { return false }
        let old = FileIdentity(file.status)
        var keptStatus = stat()
        guard stat(kept, &keptStatus) == 0, FileIdentity(keptStatus) == old, unlink(path) == 0 else { return false }
        guard let new = file.currentIdentity, new.device == old.device, new.inode == old.inode, new.size == old.size,
            new.modified == old.modified, new != old, holds(file, before), file.currentIdentity == new
        else { return false }
        carry(from: old, to: new, inForce: kept, final: kept, registry: registry)
        return true
    }
}
