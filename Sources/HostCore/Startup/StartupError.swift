/// Why the host's start stopped; the `host` executable exits with ``status``.
public enum StartupError: Error, Equatable {
    /// A launch option (`--launch-*`) is unusable: said on stderr as `host: MESSAGE`, nothing logged.
    case launchOptions(String)
    /// The start stopped at a step that logged why, as an error line with `event`
    /// (`host.stateDirectoryFailed`, `host.loadFailed`, `control.unavailable`, …).
    case logged(event: LogEvent)

    /// The exit status: 2, as for every start that cannot go on.
    public var status: Int32 { HostExitStatus.cannotRun.rawValue }
}
