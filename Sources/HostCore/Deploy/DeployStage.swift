import Glibc

/// The first step of a deploy (issue 40 item 3): a set of plugin files (and an optional
/// `services.json`) copied from a folder into a new generation under the state directory,
/// `STATE/generations/N`, and verified there with the planner the host loads with (pins,
/// signatures, every file's metadata, the start plan) before anything running changes.
///
/// The copy is made under `staging-N` and renamed to `N` only once it is whole, synced and
/// verified: a crash or a full disk while staging leaves no generation, and a refused set is
/// removed. ``Host/deploy(from:probation:)`` then switches the host to it.
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

    /// The folder of generations in `stateDirectory`.
    static func generations(in stateDirectory: String) -> String { stateDirectory + "/generations" }

    /// The files of a set: plugins, their signatures and the configuration.
    static func isPartOfASet(_ name: String) -> Bool {
        !name.hasPrefix(".") && (name.hasSuffix(".so") || name.hasSuffix(".so.minisig") || name == "services.json")
    }

    /// Stages the set in `source` as the next generation under `stateDirectory` and verifies it;
    /// `configurationPath` is the configuration used when the set has no `services.json` of its
    /// own (the running host's). Nothing running is touched. `step` is told of `staging` (with
    /// the first file copied) and `verifying` as they begin.
    static func stage(
        from source: String, stateDirectory: String, configurationPath: String?, allowInsecure: Bool = false,
        step: (DeployStep, Int) -> Void = { _, _ in }
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
        let generation = nextGeneration(in: root)
        let staging = root + "/staging-\(generation)"
        let final = root + "/\(generation)"
        removeTree(staging)  // a crash's leftover of the same number
        // 0755: the loader refuses a plugin folder others can write to, not one they can read.
        guard mkdir(staging, 0o755) == 0 else {
            throw refusal(staging, "stage", "\(SystemError.current("mkdir", staging))")
        }
        do throws(Refusal) {
            for (index, name) in names.enumerated() {
                do throws(SystemError) { try copy(source + "/" + name, to: staging, name: name) } catch {
                    throw refusal(source + "/" + name, "stage", "not staged: \(error)")
                }
                if index == 0 { step(.staging, generation) }
            }
            do { try DirectoryHandle.open(staging).sync() } catch { throw refusal(staging, "stage", "\(error)") }
            step(.verifying, generation)
            var settings = LoadSettings(directories: [staging])
            settings.allowInsecure = allowInsecure
            settings.configurationPath =
                names.contains("services.json") ? staging + "/services.json" : configurationPath
            let order = try verify(LoadPlanner(settings))
            guard rename(staging, final) == 0 else {
                throw refusal(final, "stage", "\(SystemError.current("rename", staging))")
            }
            return DeployStage(generation: generation, directory: final, order: order)
        } catch {
            removeTree(staging)
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

    /// One more than the highest generation (staged or not) in `root`.
    private static func nextGeneration(in root: String) -> Int {
        let names = (try? DirectoryHandle.open(root).names()) ?? []
        let numbers = names.compactMap { Int($0.hasPrefix("staging-") ? String($0.dropFirst(8)) : $0) }
        return (numbers.max() ?? 0) + 1
    }

    /// Copies `path` into `folder` as `name` (0644), synced: written under a temporary name first.
    private static func copy(_ path: String, to folder: String, name: String) throws(SystemError) {
        let source = try ReadOnlyFile(path: path)
        guard source.status.st_mode & S_IFMT == S_IFREG else {
            throw SystemError(operation: "open", path: path, errno: EISDIR)
        }
        let temporary = folder + "/.tmp-" + name
        let output = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
        var offset = 0
        let chunk = 1 << 20
        while offset < source.size {
            let bytes = try source.read(at: offset, count: min(chunk, source.size - offset))
            if bytes.isEmpty { break }
            try bytes.withUnsafeBytes { buffer in
                Result { () throws(SystemError) in try output.writeAll(buffer, path: temporary) }
            }.get()
            offset += bytes.count
        }
        if fsync(output.rawValue) != 0 { throw .current("fsync", temporary) }
        try output.close(temporary)
        guard rename(temporary, folder + "/" + name) == 0 else { throw .current("rename", temporary) }
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
