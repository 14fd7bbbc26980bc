/// `host man`: the manual page `host(1)` in roff (man macros), generated from the option
/// tables (``CommandLineSpec``), so it lists every option of every command the binary takes.
/// `host man > host.1; man -l host.1`.
public enum ManPage {
    /// The page.
    public static var text: String {
        var lines = [
            ".TH HOST 1 \"\" \"ServiceHost \(roff(HostVersion.string))\" \"User Commands\"",
            ".nh",  // no hyphenation: option names stay whole, so they can be searched for
            ".SH NAME",
            "host \\- run ServiceHost services loaded from plugin directories",
            ".SH SYNOPSIS",
        ]
        let commands = CommandLineSpec.commands
        for command in commands {
            lines += [".B \(roff(command.name))"] + (command.synopsis.isEmpty ? [] : [roff(command.synopsis)]) + [".br"]
        }
        lines += [
            ".SH DESCRIPTION",
            "The host loads plugins (shared libraries found by their C entry symbol) from plugin directories and",
            "delivers the app's lifecycle and notification events to their services.",
            "Without \\fB\\-\\-plugins\\fR it reads \\fB\(PluginPath.variable)\\fR (directories separated by colons),",
            "else \\fI$XDG_DATA_HOME/servicehost/plugins\\fR.",
            ".SH COMMANDS",
        ]
        for command in commands {
            lines += [".SS \(roff(command.name))", roff(command.summary)]
            if !command.operands.isEmpty {
                lines += [
                    ".PP",
                    (command.words.isEmpty ? "Commands: " : "Its first argument: ")
                        + roff(command.operands.joined(separator: ", ")) + ".",
                ]
            }
            for option in command.options {
                var head = "\\fB\(roff(option.name))\\fR"
                if let placeholder = option.placeholder {
                    head += option.inlineOnly ? "[=\\fI\(roff(placeholder))\\fR]" : " \\fI\(roff(placeholder))\\fR"
                }
                lines += [".TP", head, roff(option.help.split(separator: "\n").joined(separator: " "))]
                if !option.values.isEmpty {
                    lines.append("One of: " + roff(option.values.joined(separator: ", ")) + ".")
                }
            }
        }
        lines += [
            ".SH ENVIRONMENT",
            ".TP", "\\fB\(PluginPath.variable)\\fR",
            "Plugin directories, separated by colons, when no \\fB\\-\\-plugins\\fR is given.",
            ".TP", "\\fBXDG_DATA_HOME\\fR", "Else the plugins are in \\fI$XDG_DATA_HOME/servicehost/plugins\\fR.",
            ".TP", "\\fBXDG_RUNTIME_DIR\\fR", "The control socket is \\fI$XDG_RUNTIME_DIR/servicehost/host.sock\\fR.",
            ".TP", "\\fBXDG_STATE_HOME\\fR",
            "Stores, first\\-launch marks and crash records are in \\fI$XDG_STATE_HOME/servicehost\\fR.",
            ".TP", "\\fBJOURNAL_STREAM\\fR",
            "When it names standard error, every log line gets its syslog priority prefix for journald.",
            ".SH EXIT STATUS",
            ".TP", "0", "Clean exit; \\fBcheck\\fR found no problem; \\fBctl\\fR: handled.",
            ".TP", "1",
            "Forced exit; \\fBcheck\\fR found warnings only; \\fBinspect\\fR: a file is not a valid plugin; \\fBctl\\fR: an error.",
            ".TP", "2",
            "Bad command line, configuration or directory, or a load failure that stops the host; \\fBcheck\\fR found errors.",
            ".TP", "3", "\\fBctl\\fR: delivered but not handled.",
            ".SH EXAMPLES",
            ".nf",
            "host \\-\\-plugins ./lib \\-\\-trace trace.jsonl",
            "host check \\-\\-plugins ./lib",
            "host ctl service restart dev.servicehost.logger",
            "source <(host completion bash)",
            ".fi",
            ".SH SEE ALSO",
            "\\fBsystemd.service\\fR(5), \\fBjournalctl\\fR(1)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` as roff text: backslashes and dashes escaped, and a line that would start with a
    /// control character (`.` or `'`) guarded.
    static func roff(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "…": out += "..."  // ASCII, so groff needs no input encoding
            default: out.append(character)
            }
        }
        return out.hasPrefix(".") || out.hasPrefix("'") ? "\\&" + out : out
    }
}
