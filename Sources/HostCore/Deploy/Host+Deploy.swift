import CSystem
import Glibc
import ServiceABI
import ServiceJSON

/// Deploys (issue 40 items 3 and 4): a set staged and verified as a new generation before
/// anything running changes, switched to the way a reload switches, watched for a probation
/// time and rolled back to the previous generation at the first failure in it.
///
/// Where the host loads from: a generation's folder, `STATE/generations/N`, is the host's one
/// plugin directory while it runs (it replaces the `-p` directories), and its `services.json`,
/// when the set has one, the configuration; a set without one runs with the configuration the
/// host was started with (`--config`, or the first plugin directory's `services.json`).
/// `STATE/generations/current` names the accepted generation a start runs (written under a
/// temporary name, synced, renamed over): it changes only when a probation ends well or by
/// `ctl rollback`, so a host killed at any step of a deploy runs the previous generation
/// whole when started again. `generations/history.jsonl` (``DeployHistory``) keeps each step.
extension Host {
    /// What a deploy did: the generation switched to and the reload's report.
    public struct DeployOutcome: Sendable {
        /// The generation's number and folder.
        public let generation: Int
        public let directory: String
        /// Services added, removed, replaced; `kept`: running services left as they were.
        public let report: LoadReport
        public let kept: [String]
        /// Seconds the generation is watched before it is accepted.
        public let probation: Double
        /// The required service that did not come up with the generation, which was therefore
        /// rolled back at once (the previous one runs); nil when it is in probation.
        public var rolledBackBy: String? = nil
    }

    /// Why a deploy, a rollback or a cancel did not happen; nothing running changed.
    public struct DeployError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The file naming the current generation in `stateDirectory`.
    nonisolated static func currentGenerationFile(in stateDirectory: String) -> String {
        DeployStage.generations(in: stateDirectory) + "/current"
    }

    // MARK: Deploying

    /// Stages and verifies the set in `directory`, switches the running services to it (those
    /// whose file and settings did not change keep running) and watches it for `probation`
    /// seconds; it becomes current when no failure came in that time.
    public func deploy(from directory: String, probation: Double) throws(DeployError) -> DeployOutcome {
        do throws(DeployError) {
            return try deployed(from: directory, probation: probation)
        } catch {
            log.warn(
                "host", "deploy of \(directory) refused, nothing changed: \(error)", event: .deployRefused,
                .string("directory", directory), .string("reason", error.description))
            throw error
        }
    }

    /// How a deploy a service asked for ended, as deploy.h gives it: an sh_deploy_outcome and
    /// its JSON object (`outcome`, and `generation`, `culprit`, `reason` or `error`).
    nonisolated static func settlement(
        _ outcome: sh_deploy_outcome, generation: Int? = nil, culprit: String? = nil, reason: String? = nil,
        error: String? = nil
    ) -> RequestReply {
        let word =
            switch outcome {
            case SH_DEPLOY_APPLIED: "applied"
            case SH_DEPLOY_ROLLED_BACK: "rolledBack"
            default: "refused"
            }
        var object: [String: JSONValue] = ["outcome": .string(word)]
        if let generation { object["generation"] = .number(Double(generation)) }
        if let culprit { object["culprit"] = .string(culprit) }
        if let reason { object["reason"] = .string(reason) }
        if let error { object["error"] = .string(error) }
        return RequestReply(result: Int32(outcome.rawValue), json: Array(JSONValue.object(object).serialized.utf8))
    }

    /// Deploys as ``deploy(from:probation:)`` does, for a service (extension deploy/1):
    /// `settled` gets the outcome once, on the main thread: refused at once, rolled back at once
    /// (a required service did not come up), or when the probation ends.
    func deploy(from directory: String, probation: Double, settled: @escaping @MainActor (RequestReply) -> Void) {
        let outcome: DeployOutcome
        do { outcome = try deploy(from: directory, probation: probation) } catch {
            return settled(Self.settlement(SH_DEPLOY_REFUSED, error: error.description))
        }
        if let culprit = outcome.rolledBackBy {
            return settled(
                Self.settlement(
                    SH_DEPLOY_ROLLED_BACK, generation: outcome.generation, culprit: culprit, reason: "requiredFailed"))
        }
        deployment.probation?.settled.append(settled)
    }

    private func deployed(from directory: String, probation: Double) throws(DeployError) -> DeployOutcome {
        let state = try deployableState()
        if let watched = deployment.probation {
            throw DeployError(
                description: "generation \(watched.generation) is in probation: wait for it, or cancel it first")
        }
        let base = deployment.startSettings ?? serviceSet.loadSettings
        let stage: DeployStage
        do {
            stage = try DeployStage.stage(
                from: directory, stateDirectory: state, configurationPath: Self.startConfiguration(base),
                allowInsecure: base.allowInsecure, inForce: generationInForce(in: state),
                registry: serviceSet.loadSettings.registry, step: { step, generation in deployStep(step, generation) })
        } catch { throw DeployError(description: error.description) }
        let previous = Self.currentGeneration(in: state)
        let history = DeployHistory(stateDirectory: state)
        do throws(SystemError) {
            // Not synced: lost in a power cut, the staged generation is discarded at the next start
            // (newer than any recorded), which runs the one before, as it would with the line.
            try history.append(
                .init(generation: stage.generation, previous: previous, outcome: .inProbation, from: directory),
                sync: false)
        } catch {
            // Not in the history (a full disk): as if never staged.
            DeployStage.removeTree(stage.directory)
            throw DeployError(description: "generation \(stage.generation) not switched to: \(error)")
        }
        deployStep(.switching, stage.generation)
        let before = services.map(\.id)
        let report: LoadReport
        // The registry is written at the acceptance, not in the request (``RegistryCache/holdSaves(_:)``).
        serviceSet.loadSettings.registry?.holdSaves(true)
        defer { serviceSet.loadSettings.registry?.holdSaves(false) }
        do { report = try switchTo(settings(for: stage.generation, in: state)) } catch {
            try? history.append(
                .init(
                    generation: stage.generation, previous: previous, outcome: .rolledBack,
                    reason: "switchFailed", from: directory))
            // Nothing switched (a failed reload changes nothing): nothing returns to it either.
            removeRolledBack(stage.generation, in: state)
            throw DeployError(description: "generation \(stage.generation) not switched to: \(error)")
        }
        let changed = Set(report.added + report.removed + report.replaced)
        let timer = clock.schedule(after: probation) { [weak self] in self?.acceptProbation() }
        deployment.probation = .init(
            generation: stage.generation, previous: previous, seconds: probation, started: clock.now, from: directory,
            timer: timer)
        // A required service that did not come up (not running, or its launch events failed in
        // the catch-up) fails the probation at once.
        // Only services the plan starts now: not a disabled one, nor a lazy one not opened yet.
        let running = Set(services.filter { !$0.launchFailed }.map(\.id))
        let waiting = Set(dormantServices.map(\.metadata.id))
        let failed = serviceSet.startOrder.first(where: {
            configuration.services[$0]?.policy == .required && !running.contains($0) && !waiting.contains($0)
        })
        if let failed {
            probationFailed(culprit: failed, reason: "requiredFailed")
        } else {
            deployStep(.probation, stage.generation)
        }
        return DeployOutcome(
            generation: stage.generation, directory: stage.directory, report: report,
            kept: before.filter { !changed.contains($0) }, probation: probation, rolledBackBy: failed)
    }

    /// The state directory's path, when the host can deploy now.
    private func deployableState() throws(DeployError) -> String {
        guard let state = stateDirectory?.path else {
            throw DeployError(description: "the host has no state directory to keep generations in")
        }
        if isTerminating || self.state == .notRunning { throw DeployError(description: "the host is not running") }
        return state
    }

    /// The folder of the generation the host runs, nil when it runs its plugin directories.
    private func generationInForce(in state: String) -> String? {
        let directories = serviceSet.loadSettings.directories
        guard directories.count == 1, directories[0].hasPrefix(DeployStage.generations(in: state) + "/") else {
            return nil
        }
        return directories[0]
    }

    /// Reloads from `settings`; on failure the settings in force stay.
    private func switchTo(_ settings: LoadSettings) throws(LoadError) -> LoadReport {
        let previous = serviceSet.loadSettings
        let wasFollowing = serviceSet.followsContent
        serviceSet.loadSettings = settings
        // Every generation has its own folder: unchanged files are known by their bytes.
        serviceSet.followsContent = true
        do { return try reload() } catch {
            serviceSet.loadSettings = previous
            serviceSet.followsContent = wasFollowing
            throw error
        }
    }

    /// The probation ended without a failure: the generation becomes current.
    private func acceptProbation() {
        guard let watched = deployment.probation, let state = stateDirectory?.path else { return }
        deployment.probation = nil
        deployStep(.accepting, watched.generation)
        let folder = DeployStage.generations(in: state) + "/\(watched.generation)"
        do throws(SystemError) {
            // Staging synced nothing: the generation's files, names and history line are made
            // durable here, once, before `current` names it.
            try Self.syncGeneration(folder, in: state)
            try Self.recordCurrent(watched.generation, in: state)
            DeployStep.halt(at: DeployStep.currentRecorded)
            // Not synced: lost in a power cut, a start finds the current generation's
            // `inProbation` line last and adds this one (resumingGeneration), as after a kill here.
            try DeployHistory(stateDirectory: state).append(
                .init(
                    generation: watched.generation, previous: watched.previous, outcome: .applied, from: watched.from),
                sync: false)
        } catch {
            // It runs; the next start runs the previous generation. Said, not undone.
            log.error(
                "host", "generation \(watched.generation) runs but is not recorded as current: \(error)",
                event: .deployRefused, .string("directory", folder), .string("reason", error.description))
            for settled in watched.settled {
                settled(
                    Self.settlement(
                        SH_DEPLOY_APPLIED, generation: watched.generation, error: "not recorded as current: \(error)"))
            }
            return
        }
        for settled in watched.settled { settled(Self.settlement(SH_DEPLOY_APPLIED, generation: watched.generation)) }
        log.info(
            "host", "deploy applied: generation \(watched.generation) passed its probation and is current",
            event: .deployApplied, .int("generation", watched.generation), .string("directory", folder),
            .string("probation", Seconds.text(watched.seconds)))
        pruneGenerations(previous: watched.previous)
        // What the switch read and the deploy carried (``CarriedIdentity``), for the next start.
        serviceSet.loadSettings.registry?.save(scanned: [])
        Self.releaseFreedMemory()
    }

    /// A deploy's end: the buffers it freed (a fleet bundle's pieces and copies, the staged
    /// files read to compare them) go back to the system instead of staying in the allocator's
    /// arenas, so a host's resident memory after a deploy is what it runs. Once per deploy.
    nonisolated static func releaseFreedMemory() { _ = csystem_malloc_trim() }

    /// Says a deploy's step in one `deploy.step` line; the host kills itself there when the
    /// tests' `SERVICEHOST_DEPLOY_HALT_AT` names it (``DeployStep/haltAt``).
    func deployStep(_ step: DeployStep, _ generation: Int) {
        log.info(
            "host", "deploy of generation \(generation): \(step.rawValue)", event: .deployStep,
            .int("generation", generation), .string("step", step.rawValue))
        DeployStep.halt(at: step.rawValue)
    }

    /// A failure (a crash, a hang kill, a required service down) of `culprit` while a deploy is
    /// in probation: the whole set goes back to the previous generation. Nothing otherwise.
    func probationFailed(culprit: String?, reason: String) {
        guard let watched = deployment.probation else { return }
        rollBack(watched, culprit: culprit, reason: reason)
    }

    /// Stops the deploy in probation, rolling it back (`ctl deploy --cancel`).
    public func cancelDeploy() throws(DeployError) -> Int {
        _ = try deployableState()
        guard let watched = deployment.probation else { throw DeployError(description: "no deploy is in probation") }
        rollBack(watched, culprit: nil, reason: "cancelled")
        return watched.generation
    }

    private func rollBack(_ watched: DeployState.Probation, culprit: String?, reason: String) {
        guard let state = stateDirectory?.path else { return }
        watched.timer.cancel()
        deployment.probation = nil
        deployStep(.rollingBack, watched.generation)
        let to = watched.previous
        // `to` absent: back to the plugin directories.
        var fields: [LogField] = [.int("generation", watched.generation), .string("reason", reason)]
        if let to { fields.append(.int("to", to)) }
        if let culprit { fields.append(.string("service", culprit)) }
        do throws(LoadError) { _ = try switchTo(settings(for: to, in: state)) } catch {
            fields.append(.string("error", error.description))
        }
        try? DeployHistory(stateDirectory: state).append(
            .init(
                generation: watched.generation, previous: to, outcome: .rolledBack, culprit: culprit, reason: reason,
                from: watched.from))
        log.write(
            .error, "host",
            "deploy rolled back: generation \(watched.generation) "
                + (culprit.map { "failed in probation (\($0): \(reason))" } ?? "(\(reason))")
                + "; running " + (to.map { "generation \($0)" } ?? "the plugin directories"),
            event: .deployRolledBack, fields: fields)
        removeRolledBack(watched.generation, in: state)
        for settled in watched.settled {
            settled(
                Self.settlement(
                    SH_DEPLOY_ROLLED_BACK, generation: watched.generation, culprit: culprit, reason: reason))
        }
        Self.releaseFreedMemory()
    }

    /// Returns to the generation before the current one (`ctl rollback`); returns the generation
    /// now in force (nil: the plugin directories).
    public func rollBackByHand() throws(DeployError) -> (from: Int, to: Int?) {
        let state = try deployableState()
        if let watched = deployment.probation {
            rollBack(watched, culprit: nil, reason: "byHand")
            return (watched.generation, watched.previous)
        }
        guard let current = Self.currentGeneration(in: state) else {
            throw DeployError(description: "no generation is current: the host runs its plugin directories")
        }
        let history = DeployHistory(stateDirectory: state)
        let applied = history.entries().last { $0.generation == current && $0.outcome == .applied }
        let to = applied?.previous
        deployStep(.rollingBack, current)
        do { _ = try switchTo(settings(for: to, in: state)) } catch {
            throw DeployError(description: "not rolled back from generation \(current): \(error)")
        }
        do throws(SystemError) {
            try Self.recordCurrent(to, in: state)
            try history.append(.init(generation: current, previous: to, outcome: .rolledBack, reason: "byHand"))
        } catch {
            throw DeployError(description: "rolled back from generation \(current), but not recorded: \(error)")
        }
        log.write(
            .info, "host",
            "rolled back by hand from generation \(current); running "
                + (to.map { "generation \($0)" } ?? "the plugin directories"),
            event: .deployRolledBack,
            fields: [.int("generation", current), .string("reason", "byHand")] + (to.map { [.int("to", $0)] } ?? []))
        return (current, to)
    }

    /// `ctl deploy status`: the current generation, the one in probation, the last ones' outcomes.
    public func deployStatus() throws(DeployError) -> JSONValue {
        guard let state = stateDirectory?.path else {
            throw DeployError(description: "the host has no state directory to keep generations in")
        }
        var object: [String: JSONValue] = [
            "current": Self.currentGeneration(in: state).map { .number(Double($0)) } ?? .null,
            "generations": .array(DeployHistory(stateDirectory: state).latest().map(\.json)),
        ]
        if let watched = deployment.probation {
            object["probation"] = .object([
                "generation": .number(Double(watched.generation)), "seconds": .number(watched.seconds),
                "remaining": .number(max(0, watched.started + watched.seconds - clock.now)),
                "from": .string(watched.from),
            ])
        }
        return .object(object)
    }

    // MARK: Where the host loads from

    /// The start's configuration file: `--config`, or the first plugin directory's `services.json`
    /// when there is one (a generation's folder replaces that directory).
    nonisolated private static func startConfiguration(_ base: LoadSettings) -> String? {
        base.configurationPath
            ?? HostConfiguration.defaultPath(pluginDirectories: base.directories).flatMap {
                access($0, F_OK) == 0 ? $0 : nil
            }
    }

    /// What the host loads to run `generation` (nil: the start's plugin directories).
    /// Through the registry of the running host: the start's settings are kept before the start
    /// makes it, and without it every switch read every file again, and so did the next start.
    private func settings(for generation: Int?, in state: String) -> LoadSettings {
        var settings = Self.settings(
            for: generation, in: state, base: deployment.startSettings ?? serviceSet.loadSettings)
        settings.registry = serviceSet.loadSettings.registry
        return settings
    }

    /// What a host started with `base` (its `-p` directories and `--config`) loads to run
    /// `generation` (nil: `base`).
    nonisolated static func settings(for generation: Int?, in state: String, base: LoadSettings) -> LoadSettings {
        guard let generation else { return base }
        var settings = base
        let folder = DeployStage.generations(in: state) + "/\(generation)"
        settings.directories = [folder]
        let own = folder + "/" + HostConfiguration.defaultFileName
        settings.configurationPath = access(own, F_OK) == 0 ? own : startConfiguration(base)
        settings.configurationRead = nil
        return settings
    }

    /// The current generation of `stateDirectory` and what a start with `base` loads to run it,
    /// as ``resumingGeneration(_:)`` resolves it; nil when none is current (or its folder is
    /// missing): the start runs `base`. `host check` and `host inspect` read what it names.
    nonisolated public static func currentGeneration(
        in stateDirectory: String, base: LoadSettings
    ) -> (generation: Int, settings: LoadSettings)? {
        guard let current = currentGeneration(in: stateDirectory) else { return nil }
        let resolved = settings(for: current, in: stateDirectory, base: base)
        guard access(resolved.directories[0], F_OK) == 0 else { return nil }
        return (current, resolved)
    }

    /// The settings a start loads with: `settings` (the `-p` directories and `--config`), or,
    /// when the state directory records a current generation whose folder is there, that
    /// generation's. A host whose state directory has generations says which it runs and why in
    /// one `deploy.resumed`: the generation that was in probation when the host stopped is not
    /// accepted (`rejected`), and a set it was staging, or had staged but not switched to, is
    /// removed (`discarded`). Whatever step a `kill -9` came at, one whole generation runs.
    public func resumingGeneration(_ settings: LoadSettings) -> LoadSettings {
        deployment.startSettings = settings
        // A host that never deployed has no generations folder: one `access`, nothing read.
        guard let state = stateDirectory?.path, access(DeployStage.generations(in: state), F_OK) == 0 else {
            return settings
        }
        let history = DeployHistory(stateDirectory: state)
        let entries = history.entries()
        let current = Self.currentGeneration(in: state)
        var fields: [LogField] = []
        var note = ""
        var rejected = false
        if let last = entries.last, last.outcome == .inProbation {
            if last.generation == current {
                // Killed between recording it as current and saying so here: it was accepted.
                try? history.append(.init(generation: last.generation, previous: last.previous, outcome: .applied))
            } else {
                // Killed while switching, watching or rolling it back: the new set was not accepted.
                try? history.append(
                    .init(
                        generation: last.generation, previous: last.previous, outcome: .rolledBack,
                        reason: "notAccepted"))
                fields.append(.int("rejected", last.generation))
                note = "; generation \(last.generation) was in probation when the host stopped and is not accepted"
                rejected = true
                // Nothing returns to it, as to one rolled back while the host ran.
                DeployStage.removeTree(DeployStage.generations(in: state) + "/\(last.generation)")
            }
        }
        let discarded = Self.discardUnswitched(in: state, recorded: Set(entries.map(\.generation)), current: current)
        if !discarded.isEmpty {
            fields.append(.strings("discarded", discarded.map(String.init)))
            let numbers = discarded.map(String.init).joined(separator: ", ")
            note += "; removed generation(s) \(numbers), staged but never switched to"
        }
        guard let current else {
            log.write(
                rejected ? .warn : .info, "host", "running the plugin directories, no generation is current" + note,
                event: .deployResumed, fields: fields + [.string("reason", rejected ? "notAccepted" : "noneCurrent")])
            return settings
        }
        let resumed = self.settings(for: current, in: state)
        let folder = resumed.directories[0]
        guard access(folder, F_OK) == 0 else {
            log.write(
                .warn, "host",
                "generation \(current) is recorded as current but \(folder) is missing: loading the plugin directories"
                    + note,
                event: .deployResumed,
                fields: fields + [
                    .int("generation", current), .string("directory", folder), .string("reason", "missing"),
                ])
            return settings
        }
        serviceSet.followsContent = true
        log.write(
            .info, "host", "running generation \(current), the current one (\(folder))" + note, event: .deployResumed,
            fields: fields + [
                .int("generation", current), .string("directory", folder),
                .string("reason", rejected ? "notAccepted" : "current"),
            ])
        return resumed
    }

    /// Removes what a deploy left when the host stopped before switching: `staging-N` folders
    /// (killed while staging or verifying) and generations newer than any the history names
    /// (killed between staging and the history's line; the current one counts as named, so a
    /// history removed by hand costs no generation). Returns their numbers. The temporary files
    /// of a replace cut short (`current`, a compaction of `history.jsonl`: ``DirectoryHandle/temporaryPrefix``)
    /// are removed too; only this process writes in the folder, and it has not begun to.
    private static func discardUnswitched(in state: String, recorded: Set<Int>, current: Int?) -> [Int] {
        let root = DeployStage.generations(in: state)
        let newest = max(recorded.max() ?? 0, current ?? 0)
        var discarded: [Int] = []
        let folder = try? DirectoryHandle.open(root)
        _ = try? folder?.removeTemporaryFiles()
        for name in (try? folder?.names()) ?? [] {
            if name.hasPrefix("staging-"), let number = Int(name.dropFirst(8)) {
                if DeployStage.removeTree(root + "/" + name) { discarded.append(number) }
            } else if let number = Int(name), number > newest {
                if DeployStage.removeTree(root + "/" + name) { discarded.append(number) }
            }
        }
        return discarded.sorted()
    }

    // MARK: Pruning

    /// After an acceptance: removes the generations beyond the current one, the previous one
    /// (the rollback target), the `keepGenerations` newest others, and any a service's file
    /// comes from (running, stopped or lazy: a worker restart reads it). One `deploy.pruned`.
    /// `previous` is the accepted generation's (its `applied` line says the same): the history
    /// is not read again for it.
    func pruneGenerations(previous: Int?) {
        guard let state = stateDirectory?.path else { return }
        let root = DeployStage.generations(in: state)
        let numbers = ((try? DirectoryHandle.open(root).names()) ?? []).compactMap { Int($0) }.sorted(by: >)
        let current = Self.currentGeneration(in: state)
        let used = generationsInUse(root)
        var kept: [Int] = []
        var removed: [Int] = []
        var failed: [String] = []
        var more = deployment.keepGenerations
        for number in numbers {
            if number == current || number == previous || used.contains(number) {
                kept.append(number)
            } else if more > 0 {
                more -= 1
                kept.append(number)
            } else if CarriedIdentity.remove(
                root + "/\(number)", keeping: generationInForce(in: state), registry: serviceSet.loadSettings.registry)
            {
                removed.append(number)
            } else {
                failed.append(root + "/\(number)")
            }
        }
        guard !removed.isEmpty || !failed.isEmpty else { return }
        var fields: [LogField] = [
            .strings("removed", removed.map(String.init)), .strings("kept", kept.map(String.init)),
        ]
        if !failed.isEmpty { fields.append(.string("error", "not removed: " + failed.joined(separator: ", "))) }
        log.write(
            failed.isEmpty ? .info : .warn, "host",
            "removed old generation(s) \(removed.map(String.init).joined(separator: ", ")); kept "
                + kept.map(String.init).joined(separator: ", "),
            event: .deployPruned, fields: fields)
    }

    /// The generations a service's file comes from (running, stopped or lazy: a worker restart
    /// reads it), by their folders under `root`.
    private func generationsInUse(_ root: String) -> Set<Int> {
        let paths = services.map(\.path) + parkedServices.map(\.slot.path) + dormantServices.map(\.path)
        return Set(
            paths.compactMap { path -> Int? in
                guard path.hasPrefix(root + "/"), let slash = path.lastIndex(of: "/") else { return nil }
                return Int(path[path.index(path.startIndex, offsetBy: root.count + 1)..<slash])
            })
    }

    /// Removes `generation`, just rolled back from its probation: it was never accepted, so
    /// nothing returns to it (`ctl rollback` goes back, never forward). Left when a service's
    /// file still comes from it (the switch back failed). One `deploy.pruned`.
    private func removeRolledBack(_ generation: Int, in state: String) {
        let root = DeployStage.generations(in: state)
        guard !generationsInUse(root).contains(generation), access(root + "/\(generation)", F_OK) == 0 else { return }
        let removed = CarriedIdentity.remove(
            root + "/\(generation)", keeping: generationInForce(in: state), registry: serviceSet.loadSettings.registry)
        let kept = ((try? DirectoryHandle.open(root).names()) ?? []).compactMap { Int($0) }.sorted(by: >)
        var fields: [LogField] = [
            .strings("removed", removed ? ["\(generation)"] : []), .strings("kept", kept.map(String.init)),
        ]
        if !removed { fields.append(.string("error", "not removed: \(root)/\(generation)")) }
        log.write(
            removed ? .info : .warn, "host",
            removed
                ? "removed generation \(generation), rolled back"
                : "generation \(generation), rolled back, not removed",
            event: .deployPruned, fields: fields)
    }

    // MARK: The record of the current generation

    /// Writes `generation` to `generations/current` (nil removes it: the plugin directories):
    /// a temporary file, synced, renamed over, and the folder synced, so the file names one
    /// whole generation whatever moment the host dies.
    static func recordCurrent(_ generation: Int?, in stateDirectory: String) throws(SystemError) {
        let folder = try DirectoryHandle.open(DeployStage.generations(in: stateDirectory))
        guard let generation else {
            _ = try folder.remove("current")
            return
        }
        try Array("\(generation)\n".utf8).withUnsafeBytes { bytes in
            Result { () throws(SystemError) in try folder.replace("current", with: bytes) }
        }.get()
    }

    /// Makes the generation in `folder` durable: each of its files (copied, or linked to an
    /// earlier generation's inode, which costs nothing when that is on the disk already), its
    /// folder's names, the `generations` folder (its rename from `staging-N`) and the history
    /// (its `inProbation` line). That is everything a deploy wrote before the acceptance, so it
    /// is enough for `current` to name a whole generation after a power cut; unlike `syncfs`, it
    /// does not wait for what other programs wrote to the same file system.
    nonisolated static func syncGeneration(_ folder: String, in stateDirectory: String) throws(SystemError) {
        let directory = try DirectoryHandle.open(folder)
        for name in try directory.names() {
            let file = try FileDescriptor.open(
                name, O_RDONLY | O_NOFOLLOW, in: directory.descriptor.rawValue, path: directory.child(name))
            if fsync(file.rawValue) != 0 { throw .current("fsync", directory.child(name)) }
            try file.close(directory.child(name))
        }
        try directory.sync()
        try DirectoryHandle.open(DeployStage.generations(in: stateDirectory)).sync()
        try DeployHistory(stateDirectory: stateDirectory).sync()
    }

    /// The generation `generations/current` names, or nil when there is none (or it is unreadable).
    nonisolated static func currentGeneration(in stateDirectory: String) -> Int? {
        guard let file = try? ReadOnlyFile(path: currentGenerationFile(in: stateDirectory)),
            let bytes = try? file.read(at: 0, count: min(file.size, 32))
        else { return nil }
        return Int(String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self))
    }
}
