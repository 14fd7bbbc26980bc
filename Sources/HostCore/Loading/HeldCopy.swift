import Glibc

/// The stored copy (``StoredCopy``) of a process-isolated plugin's file that its workers open:
/// the version the host loaded, which a restarted worker runs again until a reload, whatever
/// happened to the file since (replaced, rewritten, removed). Without it a worker that crashed
/// after the file was replaced restarted on the new build while the host kept the old one's
/// metadata (`ctl list` said 1.0.0; URLs went by the old claims to code that declined them).
///
/// The host makes the copy in its store (a worker uses its host's store, ``CopyStore``) and
/// keeps it open with a shared `flock`, which eviction respects: the version stays in the store
/// while the host may need it, although its file changed.
final class HeldCopy {
    /// The copy, which the worker opens.
    let path: String
    /// The copy's own identity, which the worker checks the file it opens against.
    let identity: FileIdentity
    /// The plugin file's identity the copy was made from (the version it holds).
    let source: FileIdentity
    /// The copy, open and locked (shared) for the copy's lifetime; a worker that runs as
    /// another user gets it as its descriptor 4 (``WorkerSpawn/pluginDescriptor``).
    let descriptor: Int32

    /// The copy of the plugin file `path` inspected as `identity`, made when needed. A file that
    /// changed since its inspection is refused (``LoadFailure/Reason/changed``).
    @MainActor
    init(of path: String, identity: FileIdentity) throws(LoadFailure.Reason) {
        var attempts = 0
        while true {
            let copy = try StoredCopy.made(of: path, identity: identity)
            let descriptor = open(copy, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { throw .system(.current("open", copy)) }
            var held = stat()
            var named = stat()
            // Readable by every user (0555, made 0500): a worker running as another user opens it
            // through the descriptor the host passes it, as nobody else can reach it, whose
            // folders are the host user's alone (0700). Changed once per copy: its change time
            // is part of the identity a worker checks.
            if fstat(descriptor, &held) == 0, held.st_mode & 0o777 != 0o555 { _ = fchmod(descriptor, 0o555) }
            // Held before the check: an eviction pass that removed the copy between its making
            // and the lock left another name (or none); made again, once.
            if flock(descriptor, LOCK_SH) == 0, fstat(descriptor, &held) == 0, lstat(copy, &named) == 0,
                held.st_ino == named.st_ino, held.st_dev == named.st_dev
            {
                self.path = copy
                self.identity = FileIdentity(held)
                self.source = identity
                self.descriptor = descriptor
                return
            }
            close(descriptor)
            attempts += 1
            if attempts > 1 { throw .worker("its stored copy \(copy) was removed while the host took it") }
        }
    }

    /// Whether the copy is still in the store as made (not removed by hand since).
    var isThere: Bool {
        var held = stat()
        var named = stat()
        return fstat(descriptor, &held) == 0 && lstat(path, &named) == 0 && held.st_ino == named.st_ino
            && held.st_dev == named.st_dev
    }

    deinit { close(descriptor) }
}
