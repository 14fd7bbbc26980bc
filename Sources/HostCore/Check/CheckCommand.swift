/// `host check [--plugins DIR …] [--config FILE] [--safe-mode] [--isolation MODE] [--state-dir DIR]
/// [--json]`: a dry run. Reads everything the host would (permissions, static metadata, the
/// configuration, the start plan, claims, crash-loop records) with the host's own planner, and
/// runs no plugin code (`systemd-analyze verify`).
public enum CheckCommand {
    /// What `host check` was asked: the run's options it shares, and `--json`.
    public struct Options {
        /// The options of the run being checked (only those of ``sharedOptions`` are set).
        public var run = RunOptions()
        /// `--json`: print the report as one JSON object.
        public var json = false
    }

    /// The run options that change what a load reads; `host check` takes them as `host` does.
    static let sharedOptions = [
        "--plugins", "--config", "--allow-insecure-plugins", "--only-configured", "--safe-mode", "--isolation",
        "--state-dir", "--source",
    ]

    /// The options of `host check`: the run's own entries (one table, one help text), then `--json`.
    public static let table = OptionTable<Options>(
        "check",
        RunOptions.table.options.filter { sharedOptions.contains($0.name) }.map { $0.lifted(\Options.run) } + [
            .flag("--json", "print the report as one JSON object: the directories,\nthe start order and every problem")
            { $0.json = true }
        ])

    /// The text of `host check --help`.
    public static var help: String {
        """
        host check [--plugins DIR …] [--config FILE] [--safe-mode] [--isolation MODE] [--state-dir DIR] [--json]
          read everything the host would (permissions, metadata, configuration, the
          start order, claims, what safe mode refuses, what a crash loop marked failed,
          which system sources would run and why)
          running no plugin code; print the start order and every problem.
          Exit status: 0 clean, 1 warnings only, 2 errors

        \(table.help)
        """
    }

    /// Parses the arguments after `check`. Without `--plugins` the directories are the
    /// host's defaults (``PluginPath``); a missing default directory is a problem the report
    /// names, not a usage error.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        let parsed = try table.parse(arguments, from: Options())
        if let operand = parsed.operands.first { throw table.error("unexpected argument '\(operand)'") }
        var options = parsed.options
        if options.run.pluginDirectories.isEmpty {
            guard let (directories, source) = PluginPath.defaults() else {
                throw table.error("no plugin directory: pass --plugins DIR, or set \(PluginPath.variable)")
            }
            options.run.pluginDirectories = directories
            options.run.pluginSource = source
        }
        return options
    }
}
