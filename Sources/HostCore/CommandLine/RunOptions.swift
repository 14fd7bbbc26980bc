/// The options of `host --plugins DIR …`, parsed by hand (the toolchain alone, no packages).
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
    /// How long shutdown may take before the host exits anyway.
    public var shutdownTimeout: Double = 5
    /// The control socket; nil means the default path.
    public var controlPath: String?
    /// How long the host waits for completions (background fetch and every other answer).
    public var fetchTimeout: Double = 30
    /// The largest JSON payload a control request may carry, in bytes.
    public var maxPayload = 65536
    /// `--launch-notification FILE`.
    public var launchNotificationFile: String?
    /// `--launch-url URL`.
    public var launchURL: String?
    /// `--launch-activity TYPE[,URL]`, split.
    public var launchActivity: (type: String, url: String?)?
    /// `--isolation`, `--event-timeout`, `--crash-limit`, `--safe-mode` (issue 5).
    public var isolation = IsolationOptions()
    /// `--launch-scene NAME[:ROLE]`, split: the scene that connects at launch.
    public var launchScene: (name: String, role: String?)?
    /// `--config FILE`.
    public var configFile: String?
    /// `--only-configured`: start only services the configuration lists.
    public var onlyConfigured = false
    /// `--state-dir DIR`; nil means the default.
    public var stateDirectory: String?
    /// `--first-launch auto|always|never`.
    public var firstLaunch: FirstLaunchMode = .auto

    /// What `Host.load` and `Host.reload` use.
    public var loadSettings: LoadSettings {
        var settings = LoadSettings(directories: pluginDirectories)
        settings.allowInsecure = allowInsecurePlugins
        settings.configurationPath = configFile
        settings.onlyConfigured = onlyConfigured
        settings.strict = strict
        return settings
    }

    /// Default options.
    public init() {}

    /// Parses the arguments after the program name.
    public static func parse(_ arguments: [String]) throws(UsageError) -> RunOptions {
        var options = RunOptions()
        var cursor = ArgumentCursor(arguments)
        while let (name, inline) = cursor.next() {
            switch name {
            case "--plugins":
                options.pluginDirectories.append(try cursor.value(of: name, inline: inline))
            case "--strict":
                options.strict = true
            case "--allow-insecure-plugins":
                options.allowInsecurePlugins = true
            case "--trace":
                options.traceFile = try cursor.value(of: name, inline: inline)
            case "--log-level":
                options.logLevel = try choice(name, try cursor.value(of: name, inline: inline), "level",
                                              "error, warn, info or debug", LogLevel.init(name:))
            case "--shutdown-timeout":
                options.shutdownTimeout = try seconds(name, try cursor.value(of: name, inline: inline))
            case "--fetch-timeout":
                options.fetchTimeout = try seconds(name, try cursor.value(of: name, inline: inline))
            case "--control":
                options.controlPath = try cursor.value(of: name, inline: inline)
            case "--max-payload":
                let text = try cursor.value(of: name, inline: inline)
                guard let bytes = Int(text), bytes > 0 else {
                    throw UsageError("--max-payload: '\(text)' is not a positive number of bytes")
                }
                options.maxPayload = bytes
            case "--config":
                options.configFile = try cursor.value(of: name, inline: inline)
            case "--only-configured":
                options.onlyConfigured = true
            case "--state-dir":
                options.stateDirectory = try cursor.value(of: name, inline: inline)
            case "--first-launch":
                options.firstLaunch = try choice(name, try cursor.value(of: name, inline: inline), "mode",
                                                 "auto, always or never", FirstLaunchMode.init(rawValue:))
            case "--launch-notification":
                options.launchNotificationFile = try cursor.value(of: name, inline: inline)
            case "--launch-url":
                options.launchURL = try cursor.value(of: name, inline: inline)
            case "--launch-activity":
                let text = try cursor.value(of: name, inline: inline)
                let parts = text.split(separator: ",", maxSplits: 1).map(String.init)
                guard let type = parts.first, !type.isEmpty else {
                    throw UsageError("--launch-activity: expected TYPE[,URL]")
                }
                options.launchActivity = (type, parts.count > 1 ? parts[1] : nil)
            case "--launch-scene":
                let parts = try cursor.value(of: name, inline: inline).split(separator: ":", maxSplits: 1,
                                                                             omittingEmptySubsequences: false)
                options.launchScene = (String(parts[0]), parts.count > 1 ? String(parts[1]) : nil)
            default:
                if try options.isolation.parse(name, inline: inline, &cursor) { continue }
                throw UsageError(name.hasPrefix("-") ? "unknown option \(name)" : "unexpected argument '\(name)'")
            }
        }
        guard !options.pluginDirectories.isEmpty else {
            throw UsageError("no plugin directory: pass --plugins DIR")
        }
        return options
    }

    /// One of a fixed set of words, or an error naming the option and the words it takes.
    private static func choice<T>(_ name: String, _ text: String, _ what: String, _ allowed: String,
                                  _ parse: (String) -> T?) throws(UsageError) -> T {
        guard let value = parse(text) else { throw UsageError("\(name): unknown \(what) '\(text)' (use \(allowed))") }
        return value
    }

    private static func seconds(_ name: String, _ text: String) throws(UsageError) -> Double {
        guard let value = Double(text), value > 0, value.isFinite else {
            throw UsageError("\(name): '\(text)' is not a positive number of seconds")
        }
        return value
    }
}
