/// The options of `host --plugins DIR …`, parsed by hand (the toolchain alone, no packages).
public struct RunOptions: Equatable {
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
                let text = try cursor.value(of: name, inline: inline)
                guard let level = LogLevel(name: text) else {
                    throw UsageError("--log-level: unknown level '\(text)' (use error, warn, info or debug)")
                }
                options.logLevel = level
            case "--shutdown-timeout":
                let text = try cursor.value(of: name, inline: inline)
                guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
                    throw UsageError("--shutdown-timeout: '\(text)' is not a positive number of seconds")
                }
                options.shutdownTimeout = seconds
            default:
                throw UsageError(name.hasPrefix("-") ? "unknown option \(name)" : "unexpected argument '\(name)'")
            }
        }
        guard !options.pluginDirectories.isEmpty else {
            throw UsageError("no plugin directory: pass --plugins DIR")
        }
        return options
    }
}
