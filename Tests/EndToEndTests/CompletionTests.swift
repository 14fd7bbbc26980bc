import Foundation
import TestSupport
import Testing

/// `host completion bash|zsh` and `host man` (issue 14), generated from the option tables:
/// the bash script is driven as bash drives it, the man page rendered by man and groff.
@Suite(.timeLimit(.minutes(10))) struct CompletionTests {
    /// Every `--option` the help texts list: the tables as `--help` prints them, read
    /// independently of the generators.
    private func helpOptions() throws -> Set<String> {
        var options = Set<String>()
        for command in [
            ["--help"], ["ctl", "--help"], ["inspect", "--help"], ["check", "--help"], ["new-service", "--help"],
        ] {
            let help = try Command.run(try Repository.product("host"), command).stdout
            for line in help.split(separator: "\n") {
                // The option lines: two spaces, then the synopsis.
                guard line.hasPrefix("  --"), let name = line.dropFirst(2).split(separator: " ").first else { continue }
                options.insert(String(name.split(separator: "=").first ?? name))
            }
        }
        return options
    }

    /// `COMPREPLY` after `_host` for a command line whose last word is being completed.
    private func complete(_ words: [String], in directory: String? = nil) throws -> [String] {
        let bin = (try Repository.product("host") as NSString).deletingLastPathComponent
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let script = """
            source <(host completion bash) || exit 9
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMPREPLY=()
            _host
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try Command.run(
            "/bin/bash", ["-c", script], environment: ["PATH": bin + ":/usr/bin:/bin"], directory: directory)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func bash_completesCommands_options_andTheirValues() throws {
        let bin = (try Repository.product("host") as NSString).deletingLastPathComponent
        let registered = try Command.run(
            "/bin/bash", ["-c", "source <(host completion bash); complete -p host"],
            environment: ["PATH": bin + ":/usr/bin:/bin"])
        #expect(registered.stdout == "complete -F _host host\n", "\(registered.stdout)\(registered.stderr)")
        #expect(try complete(["host", "ch"]) == ["check"])
        #expect(try Set(complete(["host", ""])).isSuperset(of: ["check", "inspect", "ctl", "completion", "man"]))
        #expect(try complete(["host", "--log-level", "d"]) == ["debug"])
        // COMP_WORDBREAKS splits --name=VALUE at "=".
        #expect(try complete(["host", "--log-format", "=", ""]) == ["text", "json"])
        #expect(try complete(["host", "--isolation", ""]) == ["in-process", "process"])
        #expect(try complete(["host", "check", "--j"]) == ["--json"])
        #expect(try complete(["host", "ctl", "--json", "serv"]) == ["service"])
        #expect(try complete(["host", "ctl", "service", ""]) == ["stop", "start", "restart", "reset-failed"])
        #expect(try complete(["host", "ctl", "service", "--f"]) == ["--force"])
        #expect(try complete(["host", "ctl", "list", "--"]) == ["--all"])
        #expect(try complete(["host", "completion", ""]) == ["bash", "zsh"])
        // A value after an option that takes one is not taken for a command.
        #expect(try complete(["host", "--trace", "check", "--str"]) == ["--strict"])
        // Every option of every table is offered somewhere.
        let lines: [[String]] =
            [
                ["host", "--"], ["host", "check", "--"], ["host", "inspect", "--"], ["host", "new-service", "--"],
                ["host", "ctl", "--"],
            ]
            + ["push", "activity", "scene", "list", "service", "deploy", "watch"].map { ["host", "ctl", $0, "--"] }
        var offered = Set<String>()
        for line in lines { offered.formUnion(try complete(line)) }
        let missing = try helpOptions().subtracting(offered)
        #expect(missing.isEmpty, "not completed: \(missing.sorted())")
        // Directories for DIR.
        let scratch = try Scratch()
        _ = try scratch.folder("plugins-here")
        #expect(try complete(["host", "--plugins", "plug"], in: scratch.path) == ["plugins-here"])
    }

    @Test func zsh_scriptParses_andRegistersItsFunction() throws {
        let zsh =
            ["/usr/bin/zsh", "/bin/zsh"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? installZsh()
        guard let zsh else {
            Issue.record("zsh is not installed and apt-get could not install it: the zsh script was not checked")
            return
        }
        let scratch = try Scratch()
        let script = try Command.run(try Repository.product("host"), ["completion", "zsh"]).stdout
        let path = try scratch.write("_host", Array(script.utf8))
        let parsed = try Command.run(zsh, ["-n", path])
        #expect(parsed.status == 0, "\(parsed.stderr)")
        let loaded = try Command.run(
            zsh,
            [
                "-f", "-c",
                "autoload -U compinit && compinit -u -d \(scratch.file("zcompdump")) && source \(path) && print -r -- $_comps[host]",
            ])
        #expect(loaded.stdout == "_host\n", "\(loaded.stdout)\(loaded.stderr)")
    }

    private func installZsh() -> String? {
        SystemPackages.ensure(["zsh"], providing: ["/usr/bin/zsh"], for: "the zsh completion test")
            ? "/usr/bin/zsh" : nil
    }

    @Test func completion_refusesAnUnknownShell() throws {
        let fish = try Command.run(try Repository.product("host"), ["completion", "fish"])
        #expect(
            fish.status == 2 && fish.stderr.contains("completion: unknown shell 'fish' (use bash or zsh)"),
            "\(fish.stderr)")
        let none = try Command.run(try Repository.product("host"), ["completion"])
        #expect(none.status == 2 && none.stderr.contains("completion: expected bash or zsh"))
    }

    @Test func manPage_rendersWithoutWarnings_andListsEveryOption() throws {
        guard let man = Man.path else {
            Issue.record("man is not installed and apt-get could not install man-db: the page was not rendered")
            return
        }
        let scratch = try Scratch()
        let page = try scratch.write(
            "host.1", Array(try Command.run(try Repository.product("host"), ["man"]).stdout.utf8))
        let rendered = try Command.run("/bin/sh", ["-c", "MANWIDTH=80 LC_ALL=C \(man) -l --warnings \(page)"])
        #expect(rendered.status == 0 && rendered.stderr.isEmpty, "\(rendered.stderr)")
        let groff = try Command.run("/bin/sh", ["-c", "groff -ww -man -z \(page)"])
        #expect(groff.status == 0 && groff.stderr.isEmpty, "\(groff.stderr)")
        #expect(rendered.stdout.contains("HOST(1)"))
        let missing = try helpOptions().filter { !rendered.stdout.contains($0) }
        #expect(missing.isEmpty, "not in the man page: \(missing.sorted())")
        let extra = try Command.run(try Repository.product("host"), ["man", "now"])
        #expect(extra.status == 2 && extra.stderr.contains("man: expected no arguments"))
    }
}

/// `man`, with man-db and groff installed by apt-get when missing.
enum Man {
    static let path: String? =
        SystemPackages.ensure(
            ["man-db", "groff-base"], providing: ["/usr/bin/man", "/usr/bin/groff"], for: "the man page test")
        ? "/usr/bin/man" : nil
}
