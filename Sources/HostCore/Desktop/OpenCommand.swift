import Glibc

/// `host open [URL] [run options …]`: what a Desktop Entry's `Exec` runs. Hands the URL to the
/// running host (the control socket, as `host ctl open`); when none runs, becomes one: the
/// same process execs `host [run options] --launch-url URL` (a cold launch, the URL delivered
/// once after launch). Without a URL, starts the host when none runs (the launcher's icon).
public enum OpenCommand {
    /// What `host open` was asked.
    public struct Invocation: Sendable {
        /// The URL; nil to only make sure the app runs.
        public var url: String?
        /// The run's options, as given: the cold start runs with them.
        public var runArguments: [String]
        /// The control socket the running host would listen on.
        public var controlPath: String
    }

    /// The text of `host open --help`.
    public static let help = """
        host open [URL] [--plugins DIR …] [run options …]
          hand URL to the running host (as host ctl open) and print who handled it; when no
          host runs, start one with these options and --launch-url URL (a cold launch).
          Without URL: start the host when none runs. What a Desktop Entry's Exec runs
          (host desktop install).
          Exit status: as host ctl open when a host ran (0 handled, 3 declined); else the host's
        """

    /// Parses the arguments after `open`.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        if arguments.contains("--help") || arguments.contains("-h") { throw UsageError.help }
        // The URL is the one operand, wherever it is: an entry's `%u` may come last.
        let operands = try RunOptions.table.parse(arguments, from: RunOptions()).operands
        guard operands.count <= 1 else { throw UsageError("open: expected one URL, got \(operands.count) operands") }
        let url = operands.first
        if let url, !url.contains(":") { throw UsageError("open: '\(url)' is not a URL (no scheme)") }
        var runArguments = arguments
        if let url, let index = runArguments.lastIndex(of: url) { runArguments.remove(at: index) }
        if let given = runArguments.first(where: {
            DesktopCommand.refusedRunOptions.contains(OptionTable<RunOptions>.split($0).name)
        }) {
            throw UsageError("open: \(given) is not for host open: the URL is its operand")
        }
        let run = try RunOptions.parse(runArguments)
        let controlPath: String
        do {
            controlPath = try run.controlPath ?? ControlPaths.defaultSocket(stateDirectory: run.stateDirectory)
        } catch {
            throw UsageError("open: no control socket: \(error) (pass --control PATH)")
        }
        return Invocation(url: url, runArguments: runArguments, controlPath: controlPath)
    }

    /// The arguments of the cold start: the run's options, then `--launch-url URL`.
    public static func coldStartArguments(_ invocation: Invocation) -> [String] {
        invocation.runArguments + (invocation.url.map { ["--launch-url", $0] } ?? [])
    }
}
