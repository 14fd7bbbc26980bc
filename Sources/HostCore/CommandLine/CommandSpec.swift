/// One option of one command, whatever the command's options type: what the shell
/// completions and the man page are generated from.
public struct OptionSpec: Sendable, Equatable {
    /// `--name`.
    public var name: String
    /// The value's placeholder (`DIR`, `LEVEL`); nil for a flag.
    public var placeholder: String?
    /// The value may only be given inline (`--tap=ACTION`).
    public var inlineOnly: Bool
    /// The words the value may be, when the table knows them.
    public var values: [String]
    /// The help text (a line break starts a new help line).
    public var help: String

    /// Whether the value is a path: completed with file (or, for `DIR`, directory) names.
    public var isPath: Bool { ["DIR", "FILE", "PATH"].contains(placeholder ?? "") }
}

extension OptionTable {
    /// The options, type-erased.
    public var specs: [OptionSpec] {
        options.map { option in
            switch option.value {
            case .none:
                OptionSpec(name: option.name, placeholder: nil, inlineOnly: false, values: [], help: option.help)
            case .required(let placeholder):
                OptionSpec(
                    name: option.name, placeholder: placeholder, inlineOnly: false, values: option.values,
                    help: option.help)
            case .optional(let placeholder):
                OptionSpec(
                    name: option.name, placeholder: placeholder, inlineOnly: true, values: option.values,
                    help: option.help)
            }
        }
    }
}

/// One command of `host`: its words (`[]` for `host` itself, `["ctl", "push"]`), its synopsis
/// and summary, its options from its option table, and the words its first operand may be.
public struct CommandSpec: Sendable {
    /// The words after `host` that name it.
    public var words: [String]
    /// What follows the words in a synopsis: `[--json] PATH…`.
    public var synopsis: String
    /// One sentence on what it does.
    public var summary: String
    /// Its options.
    public var options: [OptionSpec]
    /// The words its first operand may be (subcommands, ctl commands, shells); empty when free.
    public var operands: [String] = []
    /// Its first operand is a path.
    public var operandIsPath = false

    /// `host ctl push`.
    public var name: String { (["host"] + words).joined(separator: " ") }
}

/// Every command `host` takes and its options, from the option tables: the one source of
/// `host completion` and `host man`.
public enum CommandLineSpec {
    /// The commands, `host` itself first.
    public static var commands: [CommandSpec] {
        [
            CommandSpec(
                words: [], synopsis: "[--plugins DIR …] [options]",
                summary: "Loads every service of the plugin directories, launches the app and serves until terminated.",
                options: RunOptions.table.specs + [
                    OptionSpec(
                        name: "--help", placeholder: nil, inlineOnly: false, values: [], help: "print the help and exit"
                    ),
                    OptionSpec(
                        name: "--version", placeholder: nil, inlineOnly: false, values: [],
                        help: "print the version and exit"),
                ],
                operands: Usage.commands),
            CommandSpec(
                words: ["check"], synopsis: "[--plugins DIR …] [--config FILE] [--json]",
                summary:
                    "A dry run: reads everything the host would, running no plugin code; prints the start order and every problem."
                    + " Exit status 0 clean, 1 warnings only, 2 errors.",
                options: CheckCommand.table.specs),
            CommandSpec(
                words: ["inspect"], synopsis: "[--json] [--state-dir DIR] PATH…",
                summary:
                    "Prints each plugin's services, versions, ABI and events from its static metadata, running no plugin code.",
                options: InspectCommand.table.specs, operandIsPath: true),
            CommandSpec(
                words: ["new-service"], synopsis: "NAME [--swift|--c] [--id ID] [--dir DIR] [--sdk DIR]",
                summary: "Writes a plugin package that builds and loads the first time.",
                options: NewServiceCommand.table.specs),
            CommandSpec(
                words: ["desktop"], synopsis: "install|uninstall|status [--user|--system] [--name APP] [run options …]",
                summary:
                    "Registers the app with the desktop: a Desktop Entry handling every URL scheme the plugins claim.",
                options: RunOptions.table.specs.filter { !DesktopCommand.refusedRunOptions.contains($0.name) } + [
                    OptionSpec(
                        name: "--user", placeholder: nil, inlineOnly: false, values: [],
                        help: "the user's applications folder (the default)"),
                    OptionSpec(
                        name: "--system", placeholder: nil, inlineOnly: false, values: [],
                        help: "/usr/local/share/applications"),
                    OptionSpec(
                        name: "--name", placeholder: "APP", inlineOnly: false, values: [],
                        help: "the entry's name (default ServiceHost)"),
                    OptionSpec(
                        name: "--json", placeholder: nil, inlineOnly: false, values: [],
                        help: "status: print the report as one JSON object"),
                ], operands: DesktopCommand.Action.allCases.map(\.rawValue)),
            CommandSpec(
                words: ["open"], synopsis: "[URL] [run options …]",
                summary: "Hands a URL to the running host, or starts one with it (what the Desktop Entry runs).",
                options: RunOptions.table.specs.filter { !DesktopCommand.refusedRunOptions.contains($0.name) }),
            CommandSpec(
                words: ["action"], synopsis: "ID [run options …]",
                summary:
                    "Hands a quick action to the running host, or starts one with it (what a Desktop Entry action runs).",
                options: RunOptions.table.specs.filter { !DesktopCommand.refusedRunOptions.contains($0.name) }),
            CommandSpec(
                words: ["fleet"], synopsis: "publish|rollout|status|cancel … [--broker ADDR]",
                summary:
                    "Publishes a bundle on the fleet's MQTT broker, rolls it out to the hosts wave by wave, shows their reported state, cancels a rollout."
                    + " Exit status \(FleetCommand.ExitStatus.summary).",
                options: FleetCommand.table.specs, operands: FleetCommand.Action.allCases.map(\.rawValue)),
            CommandSpec(
                words: ["completion"], synopsis: "bash|zsh",
                summary: "Prints the shell completion script for bash or zsh: source <(host completion bash).",
                options: [], operands: ShellCompletion.Shell.allCases.map(\.rawValue)),
            CommandSpec(
                words: ["man"], synopsis: "", summary: "Prints this manual page (roff): host man > host.1.", options: []
            ),
            CommandSpec(
                words: ["ctl"], synopsis: "[--control PATH] [--json] COMMAND …",
                summary:
                    "Sends one request to a running host and prints its reply. Exit status \(CtlCommand.ExitStatus.summary).",
                options: CtlCommand.table.specs, operands: ControlCommands.names),
        ] + CtlCommand.manual
    }
}
