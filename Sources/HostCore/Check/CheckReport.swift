import Glibc
import ServiceJSON

/// What `host check` found: where it looked, the start order the host would use, and every
/// problem, each an error (the host would refuse to start, or a file or service would fail
/// to load: what the host logs as an error) or a warning (what it logs as a warning, and
/// claims that shadow each other).
public struct CheckReport {
    /// How bad a problem is.
    public enum Severity: String, Sendable {
        case error, warning
    }

    /// One problem: a stable code for tools, what it is about, and the reason in words.
    public struct Problem: Sendable, Equatable {
        public var severity: Severity
        /// `configuration`, `plugin-directory`, a ``SkippedEntry/Reason`` for a refused file
        /// (`insecure`, `corrupt`, …), `cycle`, `requires-unknown`, `requires-disabled`,
        /// `requires-not-configured`, `requires-version`, `requirement-failed`,
        /// `required-missing`, `missing`, `after-unknown`, `safe-mode` (`--safe-mode` leaves a
        /// file out), `crash-looped` (a crash loop marked the file's service failed),
        /// `answer-conflict` (an earlier service answers a request name it answers: not
        /// started), `url-claim-conflict`, `activity-claim-conflict`, `shortcut-claim-conflict`,
        /// `sandbox-not-isolated`, `sandbox-no-cgroup`, `sandbox-no-landlock` or
        /// `sandbox-needs-privilege` (a worker's user, group or network needs a capability the
        /// host lacks).
        public var code: String
        /// The file concerned, when there is one.
        public var file: String?
        /// The service concerned, when there is one.
        public var service: String?
        /// The reason in words.
        public var message: String

        var json: JSONValue {
            .object([
                "severity": .string(severity.rawValue), "code": .string(code),
                "file": file.map(JSONValue.string) ?? .null,
                "service": service.map(JSONValue.string) ?? .null, "message": .string(message),
            ])
        }
    }

    /// The plugin directories searched, in order.
    public var directories: [String]
    /// Where they came from: `--plugins`, `SERVICEHOST_PLUGIN_PATH` or `XDG_DATA_HOME`, or
    /// `generations/current` when the state directory names a deployed generation the host runs
    /// in their place.
    public var directorySource: String
    /// That deployed generation's number, when there is one.
    public var generation: Int?
    /// The configuration file read; nil when there is none.
    public var configurationPath: String?
    /// The services the host would start, in start order, with their files.
    public var order: [(service: String, file: String)] = []
    /// Services the configuration disables, and those `--only-configured` leaves out.
    public var disabled: [String] = [], notConfigured: [String] = []
    /// The services of ``order`` left dormant until their first event, in start order.
    public var lazy: [String] = []
    /// The request names the services of ``order`` answer, each with its one answerer, by name.
    public var answers: [(name: String, service: String)] = []
    /// Every problem, in the order found.
    public var problems: [Problem] = []
    /// When the configuration has a sandbox: every service to start, with its sandbox (nil: none,
    /// as it runs in the host or its worker has none), so an unsandboxed one is seen before it runs.
    public var sandboxes: [(service: String, sandbox: Sandbox?)] = []
    /// The services of ``sandboxes`` that run in a worker.
    var isolated: Set<String> = []
    /// What each service to start would be allowed, and its score (issue 43), in start order: in
    /// the JSON always, in the text when a service runs in a worker or has a sandbox.
    public var exposures: [SecurityExposure] = []
    /// Each system source (``SystemSource``): on or off, and why.
    public var sources: [(name: String, state: SourceState)] = []

    /// The exit status: 0 clean, 1 warnings only, 2 errors.
    public var status: Int32 {
        let status: HostExitStatus =
            problems.contains { $0.severity == .error } ? .cannotRun : problems.isEmpty ? .clean : .forcedOrWarnings
        return status.rawValue
    }

    /// Checks what `options` would load, with the planner the host loads with.
    @MainActor
    public init(_ options: CheckCommand.Options) {
        var settings = options.run.loadSettings
        directorySource = options.run.pluginSource
        let state = options.run.stateDirectory ?? (try? StateDirectory.defaultPath())
        // What the host would run: a deployed generation recorded as current replaces the folders.
        if let state, let current = Host.currentGeneration(in: state, base: settings) {
            settings = current.settings
            generation = current.generation
            directorySource = "generations/current"
        }
        directories = settings.directories
        let planner = LoadPlanner(settings)
        configurationPath = planner.configurationPath
        var configuration = HostConfiguration()
        switch planner.configuration {
        case .success(let read): configuration = read
        case .failure(let error): problem(.error, "configuration", file: error.file, error.description)
        }
        sources = SystemSources.check(
            SystemSources.builtIn(
                memory: options.run.memoryPressure, notifications: configuration.notifications,
                switches: configuration.sources.merging(options.run.sources) { $1 }),
            switches: options.run.sources, configured: configuration.sources)
        guard case .success(let inspection) = planner.inspection else {
            if case .failure(let error) = planner.inspection {
                problem(.error, "plugin-directory", file: error.path, error.reason)
            }
            return
        }
        for failure in inspection.failures {
            let entry = SkippedEntry(failure)
            // A directory or FIFO named *.so is skipped with a warning, as the host logs it.
            let severity: Severity = if case .notRegularFile = failure.reason { .warning } else { .error }
            problem(severity, entry.reason.rawValue, file: failure.path, service: entry.services.first, failure.message)
        }
        let found = Dictionary(inspection.services.map { ($0.service.id, $0) }, uniquingKeysWith: { first, _ in first })
        checkReferences(configuration, found: found)
        checkPluginRequirements(
            inspection, configuration: configuration, found: found, onlyConfigured: settings.onlyConfigured)
        guard case .success(var plan)? = planner.plan else {
            if case .failure(let error)? = planner.plan { startOrderProblem(error) }
            return
        }
        // What the host starts: the planner's order without a second answerer of a request name.
        for conflict in planner.answerConflicts {
            problem(
                .error, SkippedEntry.Reason.answerConflict.rawValue, file: found[conflict.service]?.plugin.path,
                service: conflict.service, "\(conflict.service) is not started: it \(conflict)")
        }
        // Settings that break their plugin's schema: the host would keep the ones in force.
        for (service, violation) in planner.settingsViolations {
            problem(
                .error, "settings-invalid", file: found[service]?.plugin.path, service: service,
                "\(service): \(violation) (its settings schema)")
        }
        plan.order = planner.startOrder ?? plan.order
        // The run's isolation settings, policies included: what safe mode trusts, what runs in a worker.
        var isolation = IsolationSettings(options.run.isolation, stateDirectory: state ?? "")
        isolation.adopt(configuration)
        checkSandboxes(isolation, order: plan.order)
        let refused = isolation.safeMode ? checkSafeMode(plan, trust: isolation, found: found) : []
        let blocked =
            state.map {
                checkCrashLoops(plan, isolation: isolation, stateDirectory: $0, found: found, refused: refused)
            } ?? []
        order = plan.order.compactMap { id in
            refused.contains(id) || blocked.contains(id) ? nil : found[id].map { (id, $0.plugin.path) }
        }
        disabled = plan.disabled
        notConfigured = plan.notConfigured
        let required = Set(planner.requiredButMissing)
        for id in plan.missing {
            if required.contains(id) {
                problem(
                    .error, "required-missing", service: id,
                    "required service \(id) is in the configuration but no plugin provides it")
            } else {
                problem(.warning, "missing", service: id, "\(id) is in the configuration but no plugin provides it")
            }
        }
        // A missing one checkPluginRequirements reported, even when the plan fails.
        for unmet in plan.unmet where unmet.reason != .missing {
            let code =
                switch unmet.reason {
                case .missing: "requires-unknown"
                case .version, .invalidVersion: "requires-version"
                case .disabled: "requires-disabled"
                case .notConfigured: "requires-not-configured"
                case .notStarted: "requirement-failed"
                }
            problem(
                .error, code, file: found[unmet.service]?.plugin.path, service: unmet.service,
                "\(unmet.service) is not started: \(unmet)")
        }
        checkClaims(plan.order.compactMap { found[$0]?.service })
        checkDesktopSchemes(order.compactMap { found[$0.service]?.service })
        let wanted = WantedServices(plan.order, keeping: [:], found: inspection.plugins)
        let dormant = LazyServices(
            plan: plan, plugins: inspection.plugins, configuration: configuration, wanted: wanted
        ).lazy
        lazy = order.map(\.service).filter(dormant.contains)
        answers = order.flatMap { entry in
            (found[entry.service]?.service.answers ?? []).map { (name: $0, service: entry.service) }
        }.sorted { $0.name < $1.name }
    }

    /// A URL scheme a service claims that no installed Desktop Entry of `host desktop install`
    /// lists: `xdg-open SCHEME://…` does not reach the app (a warning). Only where the app is
    /// on the desktop at all (some entry installed): a headless host has no desktop to tell.
    private mutating func checkDesktopSchemes(_ services: [ServiceMetadata]) {
        var entries: [String] = []
        var listed = Set<String>()
        for system in [false, true] {
            guard let directory = DesktopCommand.applicationsDirectory(system: system),
                let names = try? DirectoryHandle.open(directory).names()
            else { continue }
            for name in names where name.hasPrefix("servicehost-") && name.hasSuffix(".desktop") {
                guard let text = try? DesktopRegistration.read(directory + "/" + name),
                    let schemes = DesktopEntry.schemes(inEntry: text)
                else { continue }
                entries.append(directory + "/" + name)
                listed.formUnion(schemes)
            }
        }
        guard !entries.isEmpty else { return }
        var reported = Set<String>()
        for service in services {
            for scheme in service.urls.compactMap(DesktopEntry.scheme(ofClaim:))
            where !listed.contains(scheme) && reported.insert(scheme).inserted {
                problem(
                    .warning, "desktop-unregistered", service: service.id,
                    "\(service.id) claims \(scheme): URLs, which no Desktop Entry lists (\(entries.joined(separator: ", "))):"
                        + " run host desktop install again")
            }
        }
    }

    /// What `--safe-mode` leaves out, as the host decides it: a file with any untrusted
    /// service is not loaded at all (a warning), and a service to start that requires one of
    /// those, or one left out that way, is not started (an error). Returns the services left out.
    private mutating func checkSafeMode(
        _ plan: StartPlan, trust: IsolationSettings,
        found: [String: (service: ServiceMetadata, plugin: PluginInspector.Inspected)]
    ) -> Set<String> {
        var unavailable = Set<String>()
        var seen = Set<String>()
        for id in plan.order {
            guard let plugin = found[id]?.plugin, seen.insert(plugin.path).inserted else { continue }
            let untrusted = trust.untrusted(plugin.metadata.services, path: plugin.path)
            guard !untrusted.isEmpty else { continue }
            unavailable.formUnion(plugin.metadata.services.map(\.id))
            problem(
                .warning, "safe-mode", file: plugin.path, service: untrusted.first,
                IsolationSettings.safeModeRefusal(untrusted))
        }
        let refused = unavailable
        for id in plan.order where !unavailable.contains(id) {
            guard let missing = plan.requirements[id]?.first(where: unavailable.contains) else { continue }
            unavailable.insert(id)
            let why = refused.contains(missing) ? "which safe mode did not start" : "which is not started"
            problem(
                .error, "requirement-failed", file: found[id]?.plugin.path, service: id,
                "\(id) is not started: it requires \(missing), \(why)")
        }
        return unavailable
    }

    /// The services a crash loop marked failed, as a start decides it: a file that runs in a
    /// worker (`--isolation process`, or a service's policy) is not started while the state
    /// directory holds a failure record of this very file (an error, as the host logs
    /// `worker.blocked`); a record of an older version the host drops (nothing to report).
    /// Reads the records only. Returns the services not started.
    private mutating func checkCrashLoops(
        _ plan: StartPlan, isolation: IsolationSettings, stateDirectory: String,
        found: [String: (service: ServiceMetadata, plugin: PluginInspector.Inspected)], refused: Set<String>
    ) -> Set<String> {
        let records = FailureStore(stateDirectory: stateDirectory).listed()
        var blocked = Set<String>()
        var seen = Set<String>()
        for id in plan.order where !refused.contains(id) {
            guard let plugin = found[id]?.plugin, seen.insert(plugin.path).inserted else { continue }
            let services = plugin.metadata.services
            guard isolation.runsInWorker(services) else { continue }
            let blocking = services.compactMap { service in
                records.record(for: service.id).flatMap {
                    $0.blocks(path: plugin.path, identity: plugin.identity) ? $0 : nil
                }
            }
            guard let record = blocking.first else { continue }
            let ids = services.map(\.id)
            blocked.formUnion(ids)
            problem(
                .error, "crash-looped", file: plugin.path, service: record.serviceID,
                "\(ids.joined(separator: ", ")) \(ids.count == 1 ? "is" : "are") marked failed (\(record.summary));"
                    + " not started until \(plugin.path) changes (\(records.path(for: record.serviceID)))")
        }
        return blocked
    }

    /// Sandboxes (issue 43): one on a service that does not run in a worker (`sandbox-not-isolated`),
    /// `writablePaths` without Landlock (`sandbox-no-landlock`), an identity or network the host
    /// lacks the capability for (`sandbox-needs-privilege`), and resource limits where the host has
    /// no writable cgroup (`sandbox-no-cgroup`): warnings, as the host starts and logs them.
    private mutating func checkSandboxes(_ isolation: IsolationSettings, order: [String]) {
        for id in isolation.sandboxesIgnored {
            problem(
                .warning, "sandbox-not-isolated", service: id,
                "\(id) has a sandbox, which applies only to a service that runs in a worker"
                    + " (\"isolation\": \"process\" or --isolation process)")
        }
        if isolation.defaultSandbox != nil || isolation.policies.values.contains(where: { $0.sandbox != nil }) {
            sandboxes = order.map { ($0, isolation.sandbox(for: $0)) }
        }
        isolated = Set(order.filter { isolation.isolation(for: $0) == .process })
        exposures = order.map {
            SecurityExposure(
                service: $0, isolated: isolation.isolation(for: $0) == .process, sandbox: isolation.sandbox(for: $0),
                hostUser: getuid())
        }
        for id in order where isolation.sandbox(for: id)?.writablePaths != nil {
            guard let reason = WorkerSandbox.landlockUnavailable else { break }
            problem(
                .warning, "sandbox-no-landlock", service: id, "writablePaths of \(id) would not be applied: \(reason)")
        }
        for id in order where isolation.isolation(for: id) == .process {
            guard let sandbox = isolation.sandbox(for: id) else { continue }
            let missing = SandboxPrivileges.missing(for: sandbox)
            guard !missing.isEmpty else { continue }
            let needs = missing.map { "\($0.setting) needs \($0.lacks.name)" }
            problem(
                .warning, "sandbox-needs-privilege", service: id,
                "the worker of \(id) would fail at start: this host lacks what its sandbox asks for ("
                    + needs.joined(separator: ", ") + "); run the host as root or grant it those capabilities")
        }
        let limited = order.filter { isolation.sandbox(for: $0)?.limitsResources == true }
        guard !limited.isEmpty, case .failure(let reason) = CgroupTree.discover() else { return }
        problem(
            .warning, "sandbox-no-cgroup", service: limited.first,
            "resource limits of \(limited.joined(separator: ", ")) would not be applied: \(reason)")
    }

    private mutating func problem(
        _ severity: Severity, _ code: String, file: String? = nil, service: String? = nil, _ message: String
    ) {
        problems.append(Problem(severity: severity, code: code, file: file, service: service, message: message))
    }

    /// `requires` and `after` naming ids that no plugin provides and the configuration does
    /// not list: every one (the planner stops at the first `requires`; `after` it ignores).
    private mutating func checkReferences(
        _ configuration: HostConfiguration,
        found: [String: (service: ServiceMetadata, plugin: PluginInspector.Inspected)]
    ) {
        for id in configuration.services.keys.sorted() {
            guard let entry = configuration.services[id], entry.enabled else { continue }
            for other in entry.requires where found[other] == nil && configuration.services[other] == nil {
                problem(.error, "requires-unknown", service: id, "\(id) requires \(other), which no plugin provides")
            }
            for other in entry.after where found[other] == nil && configuration.services[other] == nil {
                problem(
                    .warning, "after-unknown", service: id,
                    "\(id) starts after \(other), which no plugin provides (ignored)")
            }
        }
    }

    /// Requirements plugins declare that no plugin provides, of services that would run:
    /// every one, reported even when a cycle stops the plan.
    private mutating func checkPluginRequirements(
        _ inspection: PluginLoader.Inspection, configuration: HostConfiguration,
        found: [String: (service: ServiceMetadata, plugin: PluginInspector.Inspected)], onlyConfigured: Bool
    ) {
        for (service, plugin) in inspection.services {
            let entry = configuration.services[service.id]
            guard entry?.enabled ?? !onlyConfigured, found[service.id]?.plugin.path == plugin.path else { continue }
            for requirement in service.requires where found[requirement.id] == nil {
                let unmet = UnmetRequirement(
                    service: service.id, version: service.version, requirement: requirement.description,
                    requirementID: requirement.id, reason: .missing)
                problem(
                    .error, "requires-unknown", file: plugin.path, service: service.id,
                    "\(service.id) is not started: \(unmet)")
            }
        }
    }

    private mutating func startOrderProblem(_ error: StartOrderError) {
        switch error.code {
        case .requirementMissing(let service, let requirement):
            // Already reported by checkReferences unless the configuration lists the requirement.
            if !problems.contains(where: { $0.code == "requires-unknown" && $0.service == service }) {
                problem(
                    .error, "requires-unknown", service: service,
                    "\(service) requires \(requirement), which no plugin provides")
            }
        case .requirementDisabled(let service, _):
            problem(.error, "requires-disabled", service: service, error.description)
        case .requirementNotConfigured(let service, _):
            problem(.error, "requires-not-configured", service: service, error.description)
        case .cycle(let services, _):
            problem(.error, "cycle", service: services.first, error.description)
        }
    }

    /// Two services to start claiming the same URL (scheme, or scheme and host), activity type
    /// or quick action: the first in service order is asked first, the other only when it declines.
    private mutating func checkClaims(_ services: [ServiceMetadata]) {
        for (kind, claims) in [
            ("URL", { (s: ServiceMetadata) in s.urls }), ("activity", { (s: ServiceMetadata) in s.activities }),
            ("shortcut", { (s: ServiceMetadata) in s.shortcuts.map(\.id) }),
        ] {
            var first: [String: String] = [:]
            for service in services {
                for claim in Set(claims(service)).sorted() {
                    guard let owner = first[claim] else {
                        first[claim] = service.id
                        continue
                    }
                    problem(
                        .warning, "\(kind.lowercased())-claim-conflict", service: service.id,
                        "\(owner) and \(service.id) both claim the \(kind) \(claim): \(owner) is asked first (start order),"
                            + " \(service.id) only when \(owner) declines")
                }
            }
        }
    }

    /// The report for a person: directories, configuration, start order, then the problems.
    public var text: String {
        let source =
            generation.map { "generation \($0), current in the state directory" }
            ?? (directorySource == "--plugins" ? "--plugins" : "from \(directorySource)")
        var lines = ["plugin directories (\(source)): " + directories.joined(separator: ":")]
        lines.append("configuration: " + (configurationPath ?? "none"))
        lines.append(order.isEmpty ? "start order: none" : "start order:")
        let width = order.map(\.service.count).max() ?? 0
        for (index, entry) in order.enumerated() {
            lines.append(
                "  \(index + 1). " + entry.service + String(repeating: " ", count: width - entry.service.count) + "  "
                    + entry.file)
        }
        if !disabled.isEmpty { lines.append("disabled: " + disabled.joined(separator: ", ")) }
        if !notConfigured.isEmpty {
            lines.append("not configured (--only-configured): " + notConfigured.joined(separator: ", "))
        }
        if !lazy.isEmpty { lines.append("lazy (opened at their first event): " + lazy.joined(separator: ", ")) }
        if !answers.isEmpty {
            lines.append("answers: " + answers.map { "\($0.name) (\($0.service))" }.joined(separator: ", "))
        }
        for entry in sandboxes {
            let where_ = isolation(entry.service)
            lines.append("sandbox \(entry.service): " + (entry.sandbox?.summary ?? "none" + where_))
        }
        if !sandboxes.isEmpty || exposures.contains(where: { isolated.contains($0.service) }) {
            for exposure in exposures { lines.append(exposure.text) }
        }
        for (name, state) in sources { lines.append("source \(name): \(state.isOn ? "on" : "off") (\(state.text))") }
        for problem in problems {
            // A service's message names it; a file's does not once problemText drops it.
            lines.append(
                "\(problem.severity.rawValue): \(problem.code): " + (problem.file.map { "\($0): " } ?? "")
                    + problemText(problem))
        }
        let errors = problems.filter { $0.severity == .error }.count
        let warnings = problems.count - errors
        lines.append(problems.isEmpty ? "no problems" : "\(count(errors, "error")), \(count(warnings, "warning"))")
        return lines.joined(separator: "\n")
    }

    /// Why a service has no sandbox, for the text report.
    private func isolation(_ service: String) -> String { isolated.contains(service) ? "" : " (runs in the host)" }

    /// The message without the file it starts with (the line names it first).
    private func problemText(_ problem: Problem) -> String {
        guard let file = problem.file, problem.message.hasPrefix(file + ": ") else { return problem.message }
        return String(problem.message.dropFirst(file.count + 2))
    }

    private func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }

    /// The report as one JSON object.
    public var json: String {
        JSONValue.object([
            "directories": .array(directories.map(JSONValue.string)), "directorySource": .string(directorySource),
            "generation": generation.map { .number(Double($0)) } ?? .null,
            "configuration": configurationPath.map(JSONValue.string) ?? .null,
            "order": .array(order.map { .object(["service": .string($0.service), "file": .string($0.file)]) }),
            "disabled": .array(disabled.map(JSONValue.string)),
            "notConfigured": .array(notConfigured.map(JSONValue.string)),
            "lazy": .array(lazy.map(JSONValue.string)),
            "answers": .array(answers.map { .object(["name": .string($0.name), "service": .string($0.service)]) }),
            "sources": .array(
                sources.map {
                    .object(["source": .string($0.name), "on": .bool($0.state.isOn), "reason": .string($0.state.text)])
                }),
            "sandboxes": .array(
                sandboxes.map {
                    .object([
                        "service": .string($0.service), "isolated": .bool(isolated.contains($0.service)),
                        "sandbox": $0.sandbox.map { .string($0.summary) } ?? .null,
                    ])
                }),
            "security": .array(exposures.map(\.json)),
            "problems": .array(problems.map(\.json)), "status": .number(Double(status)),
        ]).serialized
    }
}
