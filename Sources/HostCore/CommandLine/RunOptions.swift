import Glibc
import ServiceVocabulary

/// The options of `host --plugins DIR …`, parsed by ``table`` (the toolchain alone, no packages).
public struct RunOptions {
    /// Plugin directories, in the order given.
    public var pluginDirectories: [String] = []
    /// Any load failure stops the host before launch (exit 2).
    public var strict = false
    /// Load files and directories writable by others or owned by another user.
    public var allowInsecurePlugins = false
    /// Where to write the JSON Lines trace.
    public var traceFile: String?
    /// How much to log.
    public var logLevel: LogLevel = .info
    /// How log lines are written: text for people, JSON lines for machines.
    public var logFormat: LogFormat = .text
    /// What log lines start with; nil: ``LogTime/default(for:)``.
    public var logTime: LogTime?
    /// `--stats`: count every delivery per service and event kind.
    public var statistics = false
    /// `--metrics-listen [ADDRESS:]PORT`: serve the figures for Prometheus.
    public var metricsListen: ListenAddress?
    /// Where the plugin directories came from: `--plugins`, or a default (PluginPath).
    public var pluginSource = "--plugins"
    /// How long shutdown may take before the host exits anyway.
    public var shutdownTimeout: Double = 5
    /// The control socket; nil means the default path.
    public var controlPath: String?
    /// How long the host waits for completions (background fetch and every other answer).
    public var fetchTimeout: Double = 30
    /// How long the answerer of a request between services may take (`--request-timeout`).
    public var requestTimeout: Double = 5
    /// The largest JSON payload a control request may carry, in bytes.
    public var maxPayload = 65536
    /// `--launch-notification FILE`.
    public var launchNotificationFile: String?
    /// `--launch-url URL`.
    public var launchURL: String?
    /// `--launch-shortcut ID`: the quick action that launched the app.
    public var launchShortcut: String?
    /// `--launch-activity TYPE[,URL]`, split.
    public var launchActivity: (type: String, url: String?)?
    /// `--isolation`, `--event-timeout`, `--crash-limit`, `--safe-mode` (issue 5).
    public var isolation = IsolationOptions()
    /// `--launch-scene NAME[:ROLE]`, split: the scene that connects at launch.
    public var launchScene: (name: String, role: String?)?
    /// `--launch-state background|active`: where the launch leaves the app; nil lets the
    /// launch options decide.
    public var launchState: AppState?
    /// `--notification-authorization prompt|grant|deny`: the answer to services'
    /// authorization requests while the status is not determined.
    public var notificationAuthorization: AuthorizationPolicy = .grant
    /// `--config FILE`.
    public var configFile: String?
    /// `--only-configured`: start only services the configuration lists.
    public var onlyConfigured = false
    /// `--state-dir DIR`; nil means the default.
    public var stateDirectory: String?
    /// `--keep-generations N`: deployed generations kept besides the current and previous ones.
    public var keepGenerations = DeployState.defaultKeepGenerations
    /// `--first-launch auto|always|never`.
    public var firstLaunch: FirstLaunchMode = .auto
    /// `--memory-pressure TRIGGER` and `--memory-warning-interval SECS`: the memory source's PSI
    /// trigger and how often it may warn.
    public var memoryPressure = MemoryPressureSettings()
    /// `--source NAME=on|off`: system sources switched on or off by name (unnamed: on where present).
    public var sources: [String: Bool] = [:]
    /// False with `--no-registry-cache`: every plugin file is read at start and reload.
    public var registryCache = true

    /// What `Host.load` and `Host.reload` use.
    public var loadSettings: LoadSettings {
        var settings = LoadSettings(directories: pluginDirectories)
        settings.allowInsecure = allowInsecurePlugins
        settings.configurationPath = configFile
        settings.onlyConfigured = onlyConfigured
        settings.strict = strict
        return settings
    }

    /// The largest payload any path accepts (`--max-payload` may not go above it): the largest
    /// frame a worker takes.
    public static let largestPayload = OptionValue.maxPayload

    /// Default options.
    public init() {}

    /// Parses the arguments after the program name.
    public static func parse(_ arguments: [String]) throws(UsageError) -> RunOptions {
        let parsed = try table.parse(arguments, from: RunOptions())
        if let operand = parsed.operands.first {
            throw UsageError(
                operand.hasPrefix("-") && operand != "-"
                    ? "unknown option \(operand)" : "unexpected argument '\(operand)'")
        }
        var options = parsed.options
        if options.pluginDirectories.isEmpty {
            guard let (directories, source) = PluginPath.defaults() else {
                throw UsageError("no plugin directory: pass --plugins DIR, or set \(PluginPath.variable)")
            }
            // The XDG default is a guess: when it is not there, say what was searched.
            if source != PluginPath.variable, let missing = directories.first(where: { access($0, F_OK) != 0 }) {
                throw UsageError(
                    "no plugin directory: pass --plugins DIR, or set \(PluginPath.variable)"
                        + " (searched \(missing), which does not exist)")
            }
            options.pluginDirectories = directories
            options.pluginSource = source
        }
        return options
    }

    /// The options of `host --plugins DIR …`, in the order `host --help` lists them.
    public static let table = OptionTable<RunOptions>(
        nil,
        [
            .value(
                "--plugins", "DIR",
                "load every *.so in DIR, in name order (repeatable;\ndefault: $SERVICEHOST_PLUGIN_PATH, else\n$XDG_DATA_HOME/servicehost/plugins)"
            ) {
                $0.pluginDirectories.append($1)
            },
            .flag("--strict", "any plugin that fails to load stops the host (exit 2)") { $0.strict = true },
            .flag(
                "--allow-insecure-plugins",
                "load files or directories writable by others\nor owned by another user (plugins, the\nconfiguration, the state directory)"
            ) {
                $0.allowInsecurePlugins = true
            },
            .value("--trace", "FILE", "write one JSON line per event delivered to a service") { $0.traceFile = $1 },
            .choice(
                "--log-level", "LEVEL", "level", "error, warn, info (default) or debug",
                { (word: LogLevel) in word.name }
            ) { $0.logLevel = $1 },
            .choice(
                "--log-format", "FORMAT", "format",
                "text (default) or json: one JSON object per line\nwith level, source, event, message and fields",
                { (word: LogFormat) in word.rawValue }
            ) {
                $0.logFormat = $1
            },
            .choice(
                "--log-time", "WHEN", "time",
                "none, iso or mono (seconds since start); default:\niso on a terminal, none otherwise and under journald",
                { (word: LogTime) in word.rawValue }
            ) {
                $0.logTime = $1
            },
            .flag(
                "--stats",
                "count every delivery per service and event kind\n(host ctl stats); costs one clock read per call"
            ) {
                $0.statistics = true
            },
            .value(
                "--metrics-listen", "[ADDR:]PORT",
                "serve the statistics for Prometheus on GET /metrics\n(PORT alone: 127.0.0.1 only); implies --stats"
            ) {
                options, text throws(UsageError) in
                options.metricsListen = try ListenAddress(parsing: text)
                options.statistics = true
            },
            .value("--shutdown-timeout", "SECS", "how long SIGTERM's shutdown may take (default 5)") {
                options, text throws(UsageError) in
                options.shutdownTimeout = try OptionValue.seconds(text)
            },
            .value("--control", "PATH", "the control socket (default\n$XDG_RUNTIME_DIR/servicehost/host.sock)") {
                $0.controlPath = $1
            },
            .value(
                "--config", "FILE",
                "services.json: order, settings, policies (default:\nservices.json in the first plugin directory)"
            ) {
                $0.configFile = $1
            },
            .flag("--only-configured", "start only the services the configuration lists") { $0.onlyConfigured = true },
            .value(
                "--state-dir", "DIR", "stores, first-launch marks, crash records (default\n$XDG_STATE_HOME/servicehost)"
            ) {
                $0.stateDirectory = $1
            },
            .value(
                "--keep-generations", "N",
                "deployed generations kept besides the current and\nprevious ones (default 3)"
            ) {
                options, text throws(UsageError) in
                options.keepGenerations = try OptionValue.integer(text, in: 0...1000, "generations")
            },
            .flag(
                "--no-registry-cache",
                "read every plugin file at start, neither using nor\nwriting the registry cache (<state>/registry.bin)"
            ) {
                $0.registryCache = false
            },
            .choice(
                "--first-launch", "MODE", "mode", "auto (default), always or never",
                { (word: FirstLaunchMode) in word.rawValue }
            ) { $0.firstLaunch = $1 },
            .value("--fetch-timeout", "SECS", "how long completions may take (default 30)") {
                options, text throws(UsageError) in
                options.fetchTimeout = try OptionValue.seconds(text)
            },
            .value("--request-timeout", "SECS", "how long a request's answerer may take (default 5)") {
                options, text throws(UsageError) in
                options.requestTimeout = try OptionValue.seconds(text)
            },
            .value("--max-payload", "BYTES", "the largest payload of a control request (default 65536)") {
                options, text throws(UsageError) in
                options.maxPayload = try OptionValue.integer(text, in: 1...OptionValue.maxPayload, "bytes")
            },
            .value(
                "--launch-notification", "FILE", "cold launch by this push: in the launch options,\nthen delivered once"
            ) {
                $0.launchNotificationFile = $1
            },
            .value("--launch-url", "URL", "cold launch by this URL, likewise") { $0.launchURL = $1 },
            .value("--launch-shortcut", "ID", "cold launch by this quick action, likewise") {
                options, text throws(UsageError) in
                if let problem = ShortcutID.problem(with: text) { throw UsageError("the quick action id \(problem)") }
                options.launchShortcut = text
            },
            .value("--launch-activity", "TYPE[,URL]", "cold launch by this user activity, likewise") {
                options, text throws(UsageError) in
                let parts = text.split(separator: ",", maxSplits: 1).map(String.init)
                guard let type = parts.first, !type.isEmpty else { throw UsageError("expected TYPE[,URL]") }
                options.launchActivity = (type, parts.count > 1 ? parts[1] : nil)
            },
            CommandOption(
                name: "--launch-state", value: .required(placeholder: "STATE"),
                help:
                    "background or active: where the launch leaves the app\n(default: background for a content-available push,\nelse active)",
                values: ["background", "active"]
            ) { options, given throws(UsageError) in
                let text = given ?? ""
                guard let state = [AppState.background, .active].first(where: { $0.name == text }) else {
                    throw UsageError("unknown launch state '\(text)' (use background or active)")
                }
                options.launchState = state
            },
            .choice(
                "--notification-authorization", "POLICY", "policy",
                "prompt, grant (default) or deny: how a service's\nauthorization request is answered",
                { (word: AuthorizationPolicy) in word.rawValue }
            ) {
                $0.notificationAuthorization = $1
            },
            .value("--launch-scene", "NAME[:ROLE]", "connect this scene at launch") { options, text in
                let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                options.launchScene = (String(parts[0]), parts.count > 1 ? String(parts[1]) : nil)
            },
            .choice(
                "--isolation", "MODE", "mode",
                "in-process (default) or process: each plugin in a\nworker process, restarted when it crashes",
                { (word: ServiceConfiguration.Isolation) in word.rawValue }
            ) {
                $0.isolation.isolation = $1
            },
            .value(
                "--event-timeout", "SECS",
                "every event's deadline (default 10); a worker that\nmisses it is killed and restarted"
            ) {
                options, text throws(UsageError) in
                options.isolation.eventTimeout = try OptionValue.seconds(text)
            },
            .value("--crash-limit", "N/SECS", "crashes that mark a service failed (default 5/60)") {
                options, text throws(UsageError) in
                guard let limit = CrashLimit(parsing: text) else {
                    throw UsageError("'\(text)' is not N/SECS (crashes within seconds, like 5/60)")
                }
                options.isolation.crashLimit = limit
            },
            .value(
                "--memory-pressure", "TRIGGER",
                "the memory source's PSI trigger: some|full STALL_US WINDOW_US\n(default \"some 200000 2000000\")"
            ) { options, text throws(UsageError) in
                options.memoryPressure.trigger = try MemoryPressureSettings.trigger(text)
            },
            .value(
                "--memory-warning-interval", "SECS",
                "at most one didReceiveMemoryWarning per SECS from\nthe memory source (default 10)"
            ) { options, text throws(UsageError) in
                options.memoryPressure.interval = try OptionValue.seconds(text)
            },
            .value(
                "--source", "NAME=on|off",
                "switch a system source (sleep, lock, time, network,\npower, memory, notifications) on or off (default: on\nwhere present)"
            ) {
                options, text throws(UsageError) in
                let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, let name = parts.first, let on = ["on": true, "off": false][parts[1]] else {
                    throw UsageError("'\(text)' is not NAME=on or NAME=off")
                }
                guard SystemSources.builtInNames.contains(name) else {
                    throw UsageError(
                        "unknown source '\(name)'" + Suggestion.didYouMean(name, among: SystemSources.builtInNames)
                            + " (known: \(SystemSources.builtInNames.joined(separator: ", ")))")
                }
                options.sources[name] = on
            },
            .flag(
                "--safe-mode",
                "start only trusted services (bundled ones, and\nthose the configuration marks \"trusted\": true)"
            ) {
                $0.isolation.safeMode = true
            },
        ])
}
