import Glibc

/// Where the host finds its services: what `load` uses at start and `reload` again later.
public struct LoadSettings: Sendable {
    /// Plugin directories, in order.
    public var directories: [String]
    /// Load files and directories others can write to.
    public var allowInsecure = false
    /// `--config FILE`; nil looks for `services.json` in the first plugin directory.
    public var configurationPath: String?
    /// Start only services the configuration lists.
    public var onlyConfigured = false
    /// Any load failure is fatal (at start: exit 2; on reload: the reload fails).
    public var strict = false
    /// The registry cache to inspect through; nil reads every file (`--no-registry-cache`).
    public var registry: RegistryCache?
    /// The configuration as already read (``LoadPlanner/readConfiguration(_:)``): the host reads
    /// it before loading to place services (isolation), and the first load takes it rather than
    /// reading the file twice. A load clears it, so a reload reads the file anew.
    public var configurationRead: (path: String?, configuration: Result<HostConfiguration, ConfigurationError>)?

    /// Settings for `directories`.
    public init(directories: [String]) { self.directories = directories }
}

/// A load or reload that cannot go on: at start the host exits 2; a reload changes nothing.
public struct LoadError: Error, CustomStringConvertible {
    /// What went wrong, naming the file, directory or services.
    public let description: String
    /// The JSON path of the configuration key at fault (`services.x.eventTimeout`), when a key is.
    public var key: String? = nil
}

/// What `load` or `reload` did.
public struct LoadReport: Sendable {
    /// Files and services that failed (each already logged).
    public var failures: [LoadFailure] = []
    /// Services started (load) or added (reload).
    public var added: [String] = []
    /// Services taken down because they were removed or disabled (reload).
    public var removed: [String] = []
    /// Services whose file changed and were replaced by a new copy, or that were started
    /// again with changed settings (reload).
    public var replaced: [String] = []
    /// Services told of changed settings by didChangeSettings and kept running (reload).
    public var reconfigured: [String] = []
    /// Services whose configuration now asks for another place to run or other supervision
    /// (`isolation`, `sandbox`, `eventTimeout`, `restartResetAfter`, `trusted`), which a reload
    /// does not apply: each keeps what it started with until the host restarts (reload).
    public var restartNeeded: [String] = []
}
