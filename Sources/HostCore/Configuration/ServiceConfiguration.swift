import ServiceJSON

/// What the configuration file says about one service: `services.<id>` in ``HostConfiguration``.
///
/// Every member has a default, so `"com.example.x": {}` configures a service without changing
/// anything but its place in the start order (listed services start before unlisted ones).
public struct ServiceConfiguration: Sendable, Equatable {
    /// What a load or launch failure of the service does to the host.
    public enum Policy: String, Sendable, CaseIterable {
        /// The failure stops the host (exit 2).
        case required
        /// The failure is logged and the service disabled; the others go on. The default.
        case optional
    }

    /// Where the service runs (issue 5; parsed and stored, not yet acted on).
    public enum Isolation: String, Sendable, CaseIterable {
        /// Loaded into the host process.
        case inProcess = "in-process"
        /// Run in a worker process of its own.
        case process
    }

    /// When the service is opened (issue 15).
    public enum Activation: String, Sendable, CaseIterable {
        /// At start, with the host.
        case eager
        /// On the first event it would be asked for (``DormantServices``).
        case lazy
    }

    /// Which control requests the service may make through `sh_host.control` (issue 17).
    public enum RequestGrant: String, Sendable, CaseIterable {
        /// The events a client causes and asks (`push`, `open`, `activity`, `post`, `request`,
        /// `memory-warning`) and the read-only `state` and `list`: the rows of `ControlCommands` whose grant is `.events`.
        case events
        /// Every request the control socket takes, lifecycle moves and `reload` included.
        case all
    }

    /// The service id: the key under `services`.
    public var id: String
    /// `enabled`: `false` keeps the service from loading. Default `true`.
    public var enabled: Bool
    /// `priority`: overrides the priority in the plugin's metadata; `nil` keeps it.
    public var priority: Int32?
    /// `requires`: services that must start before this one; a missing or disabled one is an error.
    public var requires: [String]
    /// `after`: services this one starts after when they run; a missing or disabled one is ignored.
    public var after: [String]
    /// `bindsTo` (systemd's BindsTo=): required services (they are in ``requires`` too) that
    /// this one stops with and starts again after.
    public var bindsTo: [String] = []
    /// `partOf` (systemd's PartOf=): required services (they are in ``requires`` too) whose
    /// restarts this one follows.
    public var partOf: [String] = []
    /// `settings`: the object handed to the service at launch, or `nil` when there is none.
    public private(set) var settings: [String: JSONValue]?
    /// ``settings`` serialized as compact UTF-8 JSON, ready for `sh_launch_options.settings_json`
    /// (not NUL-terminated: pass `count` as `settings_len`); `nil` when there are no settings.
    public private(set) var settingsJSON: [UInt8]?
    /// `policy`: `"required"` or `"optional"`. Default ``Policy/optional``.
    public var policy: Policy
    /// `isolation`: `"in-process"` or `"process"`; `nil` when the file does not say (issue 5).
    public var isolation: Isolation?
    /// `trusted`: `nil` when the file does not say (issue 5).
    public var trusted: Bool?
    /// `eventTimeout`: seconds, greater than 0; `nil` when the file does not say (issue 5).
    public var eventTimeout: Double?
    /// `restartResetAfter`: seconds after which a process-isolated service marked failed by a
    /// crash loop is started again by itself, greater than 0 and at most ``longestResetAfter``;
    /// `nil` (the default): it stays failed until its file changes or `ctl service reset-failed`.
    public var restartResetAfter: Double?
    /// `healthCheck`: how the host checks the service's health; `nil` (the default): never.
    public var healthCheck: HealthCheckPolicy?
    /// The longest `restartResetAfter`: a year.
    public static let longestResetAfter: Double = 365 * 86400
    /// `activation`: `"lazy"` or `"eager"`, overriding the plugin's metadata; `nil` keeps it.
    public var activation: Activation?
    /// `requests`: `"events"` or `"all"`; `nil` (the default) lets the service make no control
    /// requests through `sh_host.control`.
    public var requests: RequestGrant?
    /// `sha256`: the SHA-256 the service's plugin file must have (64 lowercase hex digits); a
    /// file whose digest differs is refused before it is opened (issue 40). `nil`: not pinned.
    public var sha256: String?
    /// `sandbox`: this service's own sandbox keys, over the configuration's top-level
    /// `"sandbox"` (issue 43); they need `"isolation": "process"` (or `--isolation process`).
    public var sandbox: Sandbox?

    /// A service configuration; every member but `id` has the file's default.
    public init(
        id: String, enabled: Bool = true, priority: Int32? = nil, requires: [String] = [], after: [String] = [],
        settings: [String: JSONValue]? = nil, policy: Policy = .optional, isolation: Isolation? = nil,
        trusted: Bool? = nil, eventTimeout: Double? = nil
    ) {
        self.id = id
        self.enabled = enabled
        self.priority = priority
        self.requires = requires
        self.after = after
        self.policy = policy
        self.isolation = isolation
        self.trusted = trusted
        self.eventTimeout = eventTimeout
        setSettings(settings)
    }

    /// Replaces ``settings`` and ``settingsJSON`` together.
    public mutating func setSettings(_ settings: [String: JSONValue]?) {
        self.settings = settings
        settingsJSON = settings.map { Array(JSONValue.object($0).serialized.utf8) }
    }
}
