/// The command-line options of crash and hang isolation: `--isolation`, `--event-timeout`,
/// `--crash-limit`, `--safe-mode`.
public struct IsolationOptions: Sendable, Equatable {
    /// `--isolation in-process|process`: where services run by default.
    public var isolation: ServiceConfiguration.Isolation = .inProcess
    /// `--event-timeout SECS`: every event's deadline (default 10).
    public var eventTimeout: Double = 10
    /// `--crash-limit N/SECS`: crashes that mark a service failed (default 5/60).
    public var crashLimit: CrashLimit = .standard
    /// `--safe-mode`: start only trusted services.
    public var safeMode = false

    /// The defaults.
    public init() {}

    /// Takes option `name` when it is one of these; false when it is not.
    mutating func parse(_ name: String, inline: String?, _ cursor: inout ArgumentCursor) throws(UsageError) -> Bool {
        switch name {
        case "--isolation":
            let text = try cursor.value(of: name, inline: inline)
            guard let mode = ServiceConfiguration.Isolation(rawValue: text) else {
                throw UsageError("--isolation: unknown mode '\(text)' (use in-process or process)")
            }
            isolation = mode
        case "--event-timeout":
            let text = try cursor.value(of: name, inline: inline)
            guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
                throw UsageError("--event-timeout: '\(text)' is not a positive number of seconds")
            }
            eventTimeout = seconds
        case "--crash-limit":
            let text = try cursor.value(of: name, inline: inline)
            guard let limit = CrashLimit(parsing: text) else {
                throw UsageError("--crash-limit: '\(text)' is not N/SECS (crashes within seconds, like 5/60)")
            }
            crashLimit = limit
        case "--safe-mode":
            safeMode = true
        default:
            return false
        }
        return true
    }
}
