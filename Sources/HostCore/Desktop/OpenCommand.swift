import Glibc
import ServiceVocabulary

/// `host open [URL] [run options …]`: what a Desktop Entry's `Exec` runs. Hands the URL to the
/// running host (the control socket, as `host ctl open`); when none runs, becomes one: the
/// same process execs `host [run options] --launch-url URL` (a cold launch, the URL delivered
/// once after launch). Without a URL, starts the host when none runs (the launcher's icon).
///
/// `host action ID [run options …]` is the same for a quick action (a Desktop Entry's
/// `[Desktop Action ID]`): `host ctl action ID`, else `host [run options] --launch-shortcut ID`.
public enum OpenCommand {
    /// What `host open` or `host action` was asked.
    public struct Invocation: Sendable {
        /// The URL; nil to only make sure the app runs (or for `host action`).
        public var url: String?
        /// `host action`'s quick action id; nil for `host open`.
        public var shortcut: String?
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

    /// The text of `host action --help`.
    public static let actionHelp = """
        host action ID [--plugins DIR …] [run options …]
          hand the quick action ID to the running host (as host ctl action) and print who
          handled it; when no host runs, start one with these options and --launch-shortcut ID
          (a cold launch). What a Desktop Entry's [Desktop Action ID] runs.
          Exit status: as host ctl action when a host ran (0 handled, 3 declined); else the host's
        """

    /// Parses the arguments after `action`: the quick action's id, then the run's options.
    public static func parseAction(_ arguments: [String]) throws(UsageError) -> Invocation {
        if arguments.contains("--help") || arguments.contains("-h") { throw UsageError.help }
        let operands = try RunOptions.table.parse(arguments, from: RunOptions()).operands
        guard operands.count == 1, let id = operands.first else {
            throw UsageError("action: expected one quick action ID, got \(operands.count) operands")
        }
        if let problem = ShortcutID.problem(with: id) { throw UsageError("action: the quick action id \(problem)") }
        var runArguments = arguments
        if let index = runArguments.firstIndex(of: id) { runArguments.remove(at: index) }
        var invocation = try invocation(runArguments, command: "action", operand: "the quick action is its operand")
        invocation.shortcut = id
        return invocation
    }

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
        var invocation = try invocation(runArguments, command: "open", operand: "the URL is its operand")
        invocation.url = url
        return invocation
    }

    /// The run's options checked (no launch options: `operand` says what replaces them) and the
    /// control socket they name.
    private static func invocation(
        _ runArguments: [String], command: String, operand: String
    ) throws(UsageError) -> Invocation {
        if let given = runArguments.first(where: {
            DesktopCommand.refusedRunOptions.contains(OptionTable<RunOptions>.split($0).name)
        }) {
            throw UsageError("\(command): \(given) is not for host \(command): \(operand)")
        }
        let run = try RunOptions.parse(runArguments)
        let controlPath: String
        do {
            controlPath = try run.controlPath ?? ControlPaths.defaultSocket(stateDirectory: run.stateDirectory)
        } catch {
            throw UsageError("\(command): no control socket: \(error) (pass --control PATH)")
        }
        return Invocation(url: nil, shortcut: nil, runArguments: runArguments, controlPath: controlPath)
    }

    /// The `host ctl` words that hand the URL or the quick action to a running host; nil when
    /// there is neither (only make sure the host runs).
    public static func ctlArguments(_ invocation: Invocation) -> [String]? {
        if let shortcut = invocation.shortcut { return ["action", shortcut] }
        return invocation.url.map { ["open", $0] }
    }

    /// The arguments of the cold start: the run's options, then `--launch-url URL` or
    /// `--launch-shortcut ID`.
    public static func coldStartArguments(_ invocation: Invocation) -> [String] {
        invocation.runArguments + (invocation.url.map { ["--launch-url", $0] } ?? [])
            + (invocation.shortcut.map { ["--launch-shortcut", $0] } ?? [])
    }
}
