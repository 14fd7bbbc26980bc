/// The text of `host --help`, and the commands `host` takes.
public enum Usage {
    /// The commands before any option: `host inspect …`, `host ctl …`, `host help`.
    public static let commands = [
        "check", "inspect", "ctl", "desktop", "open", "action", "new-service", "fleet", "completion", "man", "help",
    ]

    /// "unknown command 'inspet'; did you mean 'inspect'?".
    public static func unknownCommand(_ word: String) -> UsageError {
        UsageError("unknown command '\(word)'" + Suggestion.didYouMean(word, among: commands))
    }

    /// The help text, with a real example; the option lines come from the option tables.
    public static var text: String {
        """
        host: run ServiceHost services loaded from plugin directories

        USAGE
          host --plugins DIR [--plugins DIR …] [options]
          host ctl [--control PATH] [--json] [--timeout SECS] COMMAND …
          host check [--plugins DIR …] [--config FILE] [--safe-mode] [--isolation MODE] [--state-dir DIR] [--json]
          host inspect [--json] [PATH…]
          host new-service NAME [--swift|--c] [--id ID] [--dir DIR]
          host desktop install|uninstall|status [--user|--system] [--name APP] [run options …]
          host open [URL] [run options …]
          host action ID [run options …]
          host fleet publish|rollout|status|cancel … [--broker ADDR]
          host completion bash|zsh | man
          host --help | --version

        RUN OPTIONS
        \(RunOptions.table.help)

        PLUGIN DIRECTORIES without --plugins (\(PluginPath.variable), else
        $XDG_DATA_HOME/servicehost/plugins): \(PluginPath.summary)

        CONTROL (a running host)
        \(CtlCommand.commandLines.map { "  host ctl " + $0 }.joined(separator: "\n"))
            (service start also loads a service that was disabled or left out, when its file
            is a loadable plugin)
          exit status: \(CtlCommand.ExitStatus.summary)

        CHECK (a dry run: no plugin code runs)
          host check                print the directories searched, the configuration,
                                    the start order and every problem; exit status 0
                                    clean, 1 warnings only, 2 errors
        \(CheckCommand.table.help)

        COMPLETION AND MANUAL (generated from these option tables)
          source <(host completion bash)    host completion zsh > ~/.zfunc/_host
          host man > host.1 && man -l host.1

        INSPECT
          host inspect PATH…        print each plugin's services, versions, ABI and
                                    events from its static metadata, running no plugin code
        \(InspectCommand.table.help)

        ON THE DESKTOP (freedesktop: Desktop Entry, xdg-mime, xdg-open)
        \(DesktopCommand.help.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        \(OpenCommand.help.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        \(OpenCommand.actionHelp.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))

        A FLEET (over its MQTT broker: bundles, desired state, waves)
        \(FleetCommand.help.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))

        NEW SERVICE
          host new-service NAME     write a plugin package (Swift, or --c) that builds
                                    and loads the first time
        \(NewServiceCommand.table.help)

        EXIT STATUS
          0  clean exit (or every inspected file is a valid plugin)
          1  forced exit after a second signal or the shutdown timeout; an inspected
             file is not a valid plugin
          2  bad command line, configuration or directory; a load failure with --strict
             or of a required service; another host already on the control socket

        EXAMPLE
          host --plugins ./lib --trace trace.jsonl
          host ctl open myapp://item/42
          host inspect ./lib/libLogger.so
          host new-service Greeter --id com.example.greeter
        """
    }
}
