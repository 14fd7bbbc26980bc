/// The severity of a log line (`SH_LOG_*`), from most to least severe: a log written at
/// one level shows that level and every level before it.
public enum LogLevel: Int32, CaseIterable, Comparable, NamedCase {
    /// Something failed (`SH_LOG_ERROR`).
    case error = 0
    /// Something looks wrong (`SH_LOG_WARN`).
    case warn = 1
    /// Normal operation (`SH_LOG_INFO`).
    case info = 2
    /// Details for debugging (`SH_LOG_DEBUG`).
    case debug = 3

    /// The level's name on the command line and in log lines.
    public var name: String {
        switch self {
        case .error: "error"
        case .warn: "warn"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// Whether `a` is the more severe level.
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}
