/// The command-line options of crash and hang isolation: `--isolation`, `--event-timeout`,
/// `--crash-limit`, `--safe-mode` (parsed by ``RunOptions/table``).
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
}
