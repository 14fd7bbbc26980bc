import Glibc

/// What the configuration file says about one service's isolation (issue 4's `isolation`,
/// `trusted` and `eventTimeout` keys); nil members fall back to the command line's defaults.
public struct IsolationPolicy: Sendable, Equatable {
    /// `isolation`: where the service runs; nil: `--isolation`.
    public var isolation: ServiceConfiguration.Isolation?
    /// `trusted`: whether `--safe-mode` starts it; nil: only when it is bundled.
    public var trusted: Bool?
    /// `eventTimeout`: its event deadline in seconds; nil: `--event-timeout`.
    public var eventTimeout: Double?
    /// `restartResetAfter`: seconds after which a crash loop's failure is lifted by itself; nil: never.
    public var restartResetAfter: Double?
    /// `sandbox`: the service's own sandbox keys (issue 43); nil: the default's only.
    public var sandbox: Sandbox?

    /// A policy; every member defaults to "the file does not say".
    public init(
        isolation: ServiceConfiguration.Isolation? = nil, trusted: Bool? = nil, eventTimeout: Double? = nil,
        restartResetAfter: Double? = nil
    ) {
        self.isolation = isolation
        self.trusted = trusted
        self.eventTimeout = eventTimeout
        self.restartResetAfter = restartResetAfter
    }

    /// The policy a configured service asks for.
    public init(_ configuration: ServiceConfiguration) {
        self.init(
            isolation: configuration.isolation, trusted: configuration.trusted,
            eventTimeout: configuration.eventTimeout,
            restartResetAfter: configuration.restartResetAfter)
        sandbox = configuration.sandbox
    }
}

/// Crash and hang isolation, as the host runs it: the command line's defaults, each
/// service's policy, and where supervision keeps its files.
public struct IsolationSettings: Sendable {
    /// `--isolation`: where services run unless their policy says otherwise.
    public var isolation: ServiceConfiguration.Isolation = .inProcess
    /// `--event-timeout`: every event's deadline, unless a service's policy sets its own.
    public var eventTimeout: Double = 10
    /// `--crash-limit`: crashes within a window that mark a process-isolated service failed.
    public var crashLimit: CrashLimit = .standard
    /// `--safe-mode`: start only trusted services.
    public var safeMode = false
    /// The state directory: the sentinel and `failures/` live there.
    public var stateDirectory: String
    /// Each configured service's policy, by id (from the configuration file).
    public var policies: [String: IsolationPolicy] = [:]
    /// The configuration's top-level `sandbox`: every process-isolated service's (issue 43).
    public var defaultSandbox: Sandbox?
    /// The program a worker runs: this very binary, even if the file was replaced since.
    public var workerExecutable = "/proc/self/exe"
    /// The folder of bundled plugins, trusted by default: `plugins/` beside the executable.
    /// Unless set, it is resolved when read, and only safe mode reads it: resolving it at
    /// every start cost two `realpath` walks (a `readlink` per level) before `active`.
    public var bundledDirectory: String? {
        get {
            if let chosen = bundledChoice { return chosen }
            return Self.defaultBundledDirectory()
        }
        set { bundledChoice = .some(newValue) }
    }
    private var bundledChoice: String?? = nil

    /// Settings from the command line's options; the state directory from `--state-dir` or its default.
    public init(_ options: IsolationOptions = IsolationOptions(), stateDirectory: String) {
        isolation = options.isolation
        eventTimeout = options.eventTimeout
        crashLimit = options.crashLimit
        safeMode = options.safeMode
        self.stateDirectory = stateDirectory
    }

    /// The policies of every service in `configuration`.
    public static func policies(from configuration: HostConfiguration) -> [String: IsolationPolicy] {
        configuration.services.mapValues(IsolationPolicy.init)
    }

    /// The policies and the default sandbox of `configuration`.
    public mutating func adopt(_ configuration: HostConfiguration) {
        policies = Self.policies(from: configuration)
        defaultSandbox = configuration.sandbox
    }

    /// Service `id`'s sandbox: the default's keys under its own, when it runs in a worker and
    /// either sets any; nil otherwise (an in-process service cannot be sandboxed).
    public func sandbox(for id: String) -> Sandbox? {
        guard isolation(for: id) == .process else { return nil }
        switch (defaultSandbox, policy(id)?.sandbox) {
        case (nil, nil): return nil
        case (let base?, nil): return base
        case (nil, let own?): return own
        case (let base?, let own?): return base.overlaid(by: own)
        }
    }

    /// The configured services with a `sandbox` of their own that do not run in a worker: it
    /// cannot apply to them (`host check` warns, the host logs `sandbox.ignored`).
    public var sandboxesIgnored: [String] {
        policies.filter { $0.value.sandbox != nil && isolation(for: $0.key) != .process }.map(\.key).sorted()
    }

    /// The sandbox of the worker that runs `services` (one file's): the strictest of theirs.
    func sandbox(forWorkerOf services: [String]) -> Sandbox? { Sandbox.strictest(services.compactMap(sandbox(for:))) }

    /// Where service `id` runs.
    public func isolation(for id: String) -> ServiceConfiguration.Isolation { policy(id)?.isolation ?? isolation }

    /// Service `id`'s event deadline, in seconds.
    public func eventTimeout(for id: String) -> Double { policy(id)?.eventTimeout ?? eventTimeout }

    /// How long after a crash loop service `id` is started again by itself; nil: not by itself.
    public func restartResetAfter(for id: String) -> Double? { policy(id)?.restartResetAfter }

    /// Service `id`'s own policy. No policies (most hosts) asks no table: even an empty one
    /// hashes the id, for every service at every start.
    private func policy(_ id: String) -> IsolationPolicy? { policies.isEmpty ? nil : policies[id] }

    /// Whether a file of `services` runs in a worker process: any one of them does (a file's
    /// services share one worker).
    func runsInWorker(_ services: [ServiceMetadata]) -> Bool {
        services.contains { isolation(for: $0.id) == .process }
    }

    /// The ids of `services`, of the plugin at `path`, that `--safe-mode` does not trust: the
    /// file is not loaded when there is one.
    func untrusted(_ services: [ServiceMetadata], path: String) -> [String] {
        services.map(\.id).filter { !isTrusted($0, path: path) }
    }

    /// Why `--safe-mode` does not load a file whose `untrusted` services are these.
    static func safeModeRefusal(_ untrusted: [String]) -> String {
        "not loaded in safe mode: \(untrusted.joined(separator: ", ")) \(untrusted.count == 1 ? "is" : "are") not trusted"
            + " (bundled plugins are; others need \"trusted\": true in the configuration)"
    }

    /// Whether `--safe-mode` starts service `id` of the plugin at `path`: its policy says
    /// `trusted`, or it says nothing and the plugin is bundled.
    public func isTrusted(_ id: String, path: String) -> Bool {
        if let trusted = policy(id)?.trusted { return trusted }
        guard let bundledDirectory, let folder = Self.realFolder(of: path) else { return false }
        return folder == bundledDirectory
    }

    /// `plugins/` beside the running executable (resolved), or nil.
    public static func defaultBundledDirectory() -> String? {
        guard let executable = realPath("/proc/self/exe"),
            let slash = executable.utf8.lastIndex(of: UInt8(ascii: "/"))
        else { return nil }
        return realPath(String(executable[..<slash]) + "/plugins")
    }

    private static func realFolder(of path: String) -> String? {
        guard let file = realPath(path), let slash = file.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        return String(file[..<slash])
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
