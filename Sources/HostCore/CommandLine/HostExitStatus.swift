/// The `host` command's exit statuses, declared once (`host ctl` has its own,
/// ``CtlCommand/ExitStatus``): the code exits with these, and a test holds the reference's
/// exit-status table against them.
public enum HostExitStatus: Int32, CaseIterable, Sendable {
    /// A clean shutdown; `inspect`: every file is a valid plugin; `check`: no problem.
    case clean = 0
    /// A forced exit (a second signal, the shutdown timeout); `inspect`: some file is not a
    /// valid plugin; `check`: warnings only.
    case forcedOrWarnings = 1
    /// The host cannot run: a bad command line, configuration, plugin directory, state
    /// directory or trace file, a load failure under `--strict`, a `policy: required` service
    /// that failed, another host on the control socket; `check`: errors.
    case cannotRun = 2
}
