import Glibc

/// The first step of a deploy (issue 40 item 3): a set of plugin files (and an optional
/// `services.json`) copied from a folder into a new generation under the state directory,
/// `STATE/generations/N`, and verified there with the planner the host loads with (pins,
/// signatures, every file's metadata, the start plan) before anything running changes.
///
/// The copy is made under `staging-N` and renamed to `N` only once it is whole and verified:
/// a crash or a full disk while staging leaves no generation, and a refused set is removed.
/// ``Host/deploy(from:probation:)`` then switches the host to it.
///
/// A file with the same bytes as the same name in the generation in force is not copied: the
/// new generation gets a hard link to that file's inode, so an unchanged set costs no write.
/// Staged files are made read-only (0444) and the host never opens one for writing, so nothing
/// writes through a link into another generation; a file in force that is writable (staged by
/// an older host) is copied, never linked.
///
/// A new file is linked rather than copied when the set's folder is handed over: the file is
/// read-only and the host user's, in a folder only that user can open (0700 or less, as the
/// MQTT bridge unpacks a fleet bundle), on the state directory's file system. Nobody else can
/// have put it there or write it, so the copy would only write the same bytes again.
///
/// Nothing is synced here: a generation has to survive a power cut only once it is accepted
/// (until then a start runs the one before, whatever is left of this one), so the acceptance
/// syncs its files and folders before `generations/current` names it (Host+Deploy.swift). A
/// deploy's request costs no `fsync` at all.
struct DeployStage {
    /// Why a set cannot be deployed: the files refused, or what could not be staged.
    struct Refusal: Error, CustomStringConvertible, Sendable {
        /// One problem: the file (when there is one), a code as `host check` gives it, the reason.
        struct Problem: Sendable, Equatable {
            let file: String?
            let code: String
            let message: String
        }

        let problems: [Problem]

        var description: String {
            "deploy refused: "
                + problems.map { ($0.file.map { "\($0): " } ?? "") + "\($0.code): \($0.message)" }.joined(
                    separator: "; ")
        }
    }

    /// The default probation: 30 s.
    static let defaultProbation: Double = 30
    /// The longest probation: a day.
    static let maxProbation: Double = 86_400

    /// The generation's number (1 for the first deploy).
    let generation: Int
    /// `STATE/generations/N`: the verified set.
    let directory: String
    /// The start order the host would run from it.
    let order: [String]
    /// The files linked from the generation in force (unchanged), and those copied.
    let linked: [String]
    let copied: [String]
    /// The new files linked from a handed-over source folder rather than copied.
    var taken: [String] = []

    /// The folder of generations in `stateDirectory`.
    static func generations(in stateDirectory: String) -> String { stateDirectory + "/generations" }

    /// The files of a set: plugins, their signatures and the configuration.
    static func isPartOfASet(_ name: String) -> Bool {
        !name.hasPrefix(".") && (name.hasSuffix(".so") || name.hasSuffix(".so.minisig") || name == "services.json")
    }

    /// Stages the set in `source` as the next generation under `stateDirectory` and verifies it;
    /// `configurationPath` is the configuration used when the set has no `services.json` of its
    /// own (the running host's). `inForce` is the folder of the generation running, whose files
    /// an unchanged file is linked to; `registry` the running host's, whose entries of such a file
    /// go with it (``CarriedIdentity``). Nothing running is touched. `step` is told of `staging`
    /// (with the first file staged) and `verifying` as they begin.
    static func stage(
        from source: String, stateDirectory: String, configurationPath: String?, allowInsecure: Bool = false,
        inForce: String? = nil, registry: RegistryCache? = nil, step: (DeployStep, Int) -> Void = { _, _ in }
    ) throws(Refusal) -> DeployStage {
        let root = generations(in: stateDirectory)
        if mkdir(root, 0o700) != 0 && errno != EEXIST {
            throw refusal(root, "stage", "\(SystemError.current("mkdir", root))")
        }
        let names: [String]
        do { names = try DirectoryHandle.open(source).names().filter(isPartOfASet).sorted() } catch {
            throw refusal(source, "stage", "cannot read the folder: \(error)")
        }
        guard names.contains(where: { $0.hasSuffix(".so") }) else {
            throw refusal(source, "stage", "no plugin files (*.so) to deploy")
        }
        let generation = nextGeneration(in: root, stateDirectory: stateDirectory)
        let staging = root + "/staging-\(generation)"
        let final = root + "/\(generation)"
        removeTree(staging)  // a crash's leftover of the same number
        // 0755: the loader refuses a plugin folder others can write to, not one they can read.
        guard mkdir(staging, 0o755) == 0 else {
            throw refusal(staging, "stage", "\(SystemError.current("mkdir", staging))")
        }
        do throws(Refusal) {
            var linked: [String] = []
            var copied: [String] = []
            var taken: [String] = []
            let handedOver = isHandedOver(source)
            // A generation in force that is gone or unreadable: every file is copied.
            let running = inForce.flatMap { try? DirectoryHandle.open($0) }
            for (index, name) in names.enumerated() {
                do throws(SystemError) {
                    if let running,
                        try linkIfUnchanged(
                            source + "/" + name, to: name, in: running, as: staging + "/" + name,
                            final: final + "/" + name, registry: registry)
                    {
                        linked.append(name)
                    } else {
                        if try copy(source + "/" + name, to: staging, name: name, link: handedOver) {
                            taken.append(name)
                        } else {
                            copied.append(name)
                        }
                    }
                } catch {
                    throw refusal(source + "/" + name, "stage", "not staged: \(error)")
                }
                if index == 0 { step(.staging, generation) }
            }
            step(.verifying, generation)
            var settings = LoadSettings(directories: [staging])
            settings.allowInsecure = allowInsecure
            settings.configurationPath =
                names.contains("services.json") ? staging + "/services.json" : configurationPath
            let order = try verify(LoadPlanner(settings))
            guard rename(staging, final) == 0 else {
                throw refusal(final, "stage", "\(SystemError.current("rename", staging))")
            }
            CarriedIdentity.staged(names, from: staging, to: final)
            return DeployStage(
                generation: generation, directory: final, order: order, linked: linked, copied: copied, taken: taken)
        } catch {
            CarriedIdentity.remove(staging, keeping: inForce, registry: registry)
            throw error
        }
    }

    /// Every problem that would keep a file or a required service of the set from running.
    private static func verify(_ planner: LoadPlanner) throws(Refusal) -> [String] {
        var problems: [Refusal.Problem] = []
        if case .failure(let error) = planner.configuration {
            problems.append(.init(file: error.file, code: "configuration", message: error.description))
        }
        switch planner.inspection {
        case .failure(let error):
            problems.append(.init(file: error.path, code: "plugin-directory", message: error.reason))
        case .success(let inspection):
            for failure in inspection.failures {
                problems.append(
                    .init(file: failure.path, code: SkippedEntry(failure).reason.rawValue, message: failure.message))
            }
        }
        if case .failure(let error)? = planner.plan {
            problems.append(.init(file: nil, code: "start-order", message: error.description))
        }
        for id in planner.requiredButMissing {
            problems.append(.init(file: nil, code: "required-missing", message: "required service \(id) is missing"))
        }
        for unmet in planner.requiredButUnmet {
            problems.append(.init(file: nil, code: "requirement-failed", message: "\(unmet.service): \(unmet)"))
        }
        for conflict in planner.answerConflicts {
            problems.append(.init(file: nil, code: "answer-conflict", message: "\(conflict.service) \(conflict)"))
        }
        guard problems.isEmpty, let order = planner.startOrder else { throw Refusal(problems: problems) }
        return order
    }

    /// One more than the highest generation in `root` (staged or not) or in its history: a
    /// generation removed when it was rolled back keeps its number.
    private static func nextGeneration(in root: String, stateDirectory: String) -> Int {
        let names = (try? DirectoryHandle.open(root).names()) ?? []
        let numbers = names.compactMap { Int($0.hasPrefix("staging-") ? String($0.dropFirst(8)) : $0) }
        let recorded = DeployHistory(stateDirectory: stateDirectory).entries().map(\.generation)
        return max(numbers.max() ?? 0, recorded.max() ?? 0) + 1
    }

    /// Links `name` of `folder` as `link` when it is a read-only regular file of the host's user
    /// holding the same bytes as `path` (the generation in force's file, unchanged in the new
    /// set); false, linking nothing, when it is not. The inode compared is the one linked: it is
    /// linked through its open descriptor, so a file put in its place meanwhile is never linked.
    /// What the caches know of it goes with it (``CarriedIdentity``): `final` is the link's path
    /// once the generation is in place, `registry` the host's.
    private static func linkIfUnchanged(
        _ path: String, to name: String, in folder: DirectoryHandle, as link: String, final: String,
        registry: RegistryCache?
    ) throws(SystemError) -> Bool {
        let source = try ReadOnlyFile(path: path)
        guard source.status.st_mode & S_IFMT == S_IFREG else {
            throw SystemError(operation: "open", path: path, errno: EISDIR)
        }
        guard let existing = try? ReadOnlyFile(name, in: folder.descriptor.rawValue, path: folder.child(name)),
            existing.status.st_mode & S_IFMT == S_IFREG, isHostsReadOnly(existing), existing.size == source.size,
            sameBytes(source, existing)
        else { return false }
        return try CarriedIdentity.link(
            existing, as: link, sameAs: source, inForce: folder.child(name), final: final, registry: registry)
    }

    /// Whether `file` is read-only (nobody may write it) and the host user's: one a generation
    /// may share with another folder.
    private static func isHostsReadOnly(_ file: ReadOnlyFile) -> Bool {
        file.status.st_mode & 0o222 == 0 && file.status.st_uid == geteuid()
    }

    /// Links the open `file` as `link`: the inode checked is the one linked, through its
    /// descriptor's /proc name (`linkat(AT_EMPTY_PATH)` needs CAP_DAC_READ_SEARCH; that name
    /// does not), so a file put in its place meanwhile is never linked. False, linking nothing,
    /// where it cannot be (no /proc, another file system, too many links): the caller copies.
    static func linkOpened(_ file: ReadOnlyFile, as link: String) throws(SystemError) -> Bool {
        let proc = "/proc/self/fd/\(file.descriptor.rawValue)"
        guard linkat(AT_FDCWD, proc, AT_FDCWD, link, AT_SYMLINK_FOLLOW) == 0 else {
            if [ENOENT, EXDEV, EMLINK, EPERM, EACCES].contains(errno) { return false }
            throw .current("link", link)
        }
        return true
    }

    /// Whether two open files of the same size hold the same bytes (false when one cannot be
    /// read). Exact, and it needs no libcrypto: a digest would read the same bytes. Both are read
    /// into one buffer made once and compared with `memcmp`: a buffer per piece cost a page fault
    /// per 4 KiB, more than the reading (issue 41's rollout profile).
    static func sameBytes(_ first: ReadOnlyFile, _ second: ReadOnlyFile) -> Bool {
        guard first.size == second.size else { return false }
        let chunk = min(comparePiece, max(first.size, 1))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * chunk, alignment: 64)
        defer { buffer.deallocate() }
        let left = UnsafeMutableRawBufferPointer(rebasing: buffer[..<chunk])
        let right = UnsafeMutableRawBufferPointer(rebasing: buffer[chunk...])
        var offset = 0
        while offset < first.size {
            let count = min(chunk, first.size - offset)
            guard (try? first.read(into: UnsafeMutableRawBufferPointer(rebasing: left[..<count]), at: offset)) == count,
                (try? second.read(into: UnsafeMutableRawBufferPointer(rebasing: right[..<count]), at: offset)) == count,
                memcmp(left.baseAddress!, right.baseAddress!, count) == 0
            else { return false }
            offset += count
        }
        return true
    }

    /// The piece of two files compared (or copied) at a time: under the allocator's mmap
    /// threshold (128 KiB), so the buffer comes from its arena, already mapped, not from a new
    /// mapping faulted in page by page at every deploy.
    static let comparePiece = 64 << 10

    /// Whether the set's folder is the host user's and only theirs to open (no access for group
    /// or others): its read-only files may be linked into the generation, not copied.
    private static func isHandedOver(_ folder: String) -> Bool {
        var st = stat()
        guard stat(folder, &st) == 0 else { return false }
        return st.st_mode & S_IFMT == S_IFDIR && st.st_uid == geteuid() && st.st_mode & 0o077 == 0
    }

    /// Copies `path` into `folder` as `name` (0444: no one writes a staged file, so a later set
    /// may link it), written under a temporary name first; not synced (the acceptance syncs).
    /// `link`: the source folder is handed over, and a read-only file of the host's user is
    /// linked instead (true) when the file system allows.
    private static func copy(_ path: String, to folder: String, name: String, link: Bool) throws(SystemError)
        -> Bool
    {
        let source = try ReadOnlyFile(path: path)
        guard source.status.st_mode & S_IFMT == S_IFREG else {
            throw SystemError(operation: "open", path: path, errno: EISDIR)
        }
        if link, isHostsReadOnly(source), try linkOpened(source, as: folder + "/" + name) { return true }
        let temporary = folder + "/.tmp-" + name
        let output = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o444)
        // One buffer for the whole copy (a new one per piece faulted in every page of it).
        let chunk = min(comparePiece, max(source.size, 1))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 64)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < source.size {
            let count = try source.read(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(chunk, source.size - offset)]), at: offset)
            if count == 0 { break }
            try output.writeAll(UnsafeRawBufferPointer(rebasing: buffer[..<count]), path: temporary)
            offset += count
        }
        try output.close(temporary)
        guard rename(temporary, folder + "/" + name) == 0 else { throw .current("rename", temporary) }
        return false
    }

    private static func refusal(_ file: String, _ code: String, _ message: String) -> Refusal {
        Refusal(problems: [.init(file: file, code: code, message: message)])
    }

    /// Removes a generation's or a staging folder and its files (one level: a set has no
    /// subfolders); false when something is left.
    @discardableResult
    static func removeTree(_ path: String) -> Bool {
        for name in (try? DirectoryHandle.open(path).names()) ?? [] { unlink(path + "/" + name) }
        return rmdir(path) == 0 || errno == ENOENT
    }
}
