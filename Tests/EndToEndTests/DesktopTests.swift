import Foundation
import TestSupport
import Testing

/// `host desktop` and `host open` with the real freedesktop tools (issue 39): Debian's
/// xdg-utils and desktop-file-utils, a private XDG_DATA_HOME and XDG_CONFIG_HOME, and DISPLAY
/// set (xdg-open hands a URL to an `x-scheme-handler` entry only then; no display is used).
@Suite(.timeLimit(.minutes(10)), .serialized) struct DesktopTests {
    static let tools = SystemPackages.ensure(
        ["xdg-utils", "desktop-file-utils"],
        providing: ["/usr/bin/xdg-open", "/usr/bin/xdg-mime", "/usr/bin/desktop-file-validate"])

    /// A host folder with DeepLinks (it claims `myapp`), and the desktop's environment.
    final class Desktop {
        let host: RunningHost
        let environment: [String: String]
        /// The options the entry records: those RunningHost starts with.
        let runOptions: [String]

        init() throws {
            host = try RunningHost()
            try host.scratch.copy(try Repository.product("libDeepLinks.so"), to: "lib/libDeepLinks.so")
            environment = [
                "HOME": host.scratch.path, "XDG_DATA_HOME": host.scratch.file("data"),
                "XDG_CONFIG_HOME": host.scratch.file("config"), "DISPLAY": ":99",
                // Only our entries: no system-wide handler may answer for `myapp`.
                "XDG_DATA_DIRS": host.scratch.file("nowhere"),
            ]
            runOptions = [
                "--plugins", host.lib, "--control", host.control, "--trace", host.tracePath, "--state-dir",
                host.stateDirectory, "--log-format", "json",
            ]
        }

        /// `host ARGUMENTS` in the desktop's environment.
        func run(_ arguments: [String]) throws -> CommandResult {
            try Command.run(try Repository.product("host"), arguments, environment: environment)
        }

        func tool(_ path: String, _ arguments: [String]) throws -> CommandResult {
            try Command.run(path, arguments, environment: environment)
        }

        var entryPath: String { host.scratch.file("data/applications/servicehost-notes.desktop") }
    }

    @Test func install_writesAValidEntry_andXdgOpenReachesDeepLinks_warmAndCold() throws {
        guard Self.tools else { return }
        let desktop = try Desktop()
        let installed = try desktop.run(["desktop", "install", "--name", "Notes"] + desktop.runOptions)
        #expect(installed.status == 0, "\(installed.stdout)\(installed.stderr)")
        let validated = try desktop.tool("/usr/bin/desktop-file-validate", [desktop.entryPath])
        #expect(validated.status == 0 && validated.stdout.isEmpty, "\(validated.stdout)")
        let handler = try desktop.tool("/usr/bin/xdg-mime", ["query", "default", "x-scheme-handler/myapp"])
        #expect(handler.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "servicehost-notes.desktop")
        let status = try json(try desktop.run(["desktop", "status", "--name", "Notes", "--json"] + desktop.runOptions))
        #expect(status["installed"] as? Bool == true && status["current"] as? Bool == true, "\(status)")

        // Warm: a running host gets the URL through its control socket, once.
        try desktop.host.start()
        let warm = try desktop.tool("/usr/bin/xdg-open", ["myapp://item/42"])
        #expect(warm.status == 0, "\(warm.stdout)\(warm.stderr)")
        let warmRecords = desktop.host.stop().records
        #expect(
            warmRecords.messages(from: "dev.servicehost.deeplinks").filter { $0 == "deeplinks: open item 42" }.count
                == 1)

        // Cold: no host runs, so `host open` becomes one, launched with the URL.
        try FileManager.default.removeItem(atPath: desktop.host.tracePath)
        let cold = try Command.start("/usr/bin/xdg-open", ["myapp://item/43"], environment: desktop.environment)
        let active = eventually {
            (try? desktop.host.ctl("state").stdout.contains("state: active")) == true
        }
        #expect(active)
        // The launch URL is delivered once the app is active: wait for its delivery in the trace.
        #expect(eventually { desktop.host.events.contains { $0.hasPrefix("openURL") } }, "\(desktop.host.events)")
        let started = hostProcess(control: desktop.host.control)
        // Launched with the URL (seed 003's cold path), the entry's options kept.
        #expect(started.map { Array($0.arguments.suffix(2)) } == ["--launch-url", "myapp://item/43"])
        #expect(started?.arguments.contains(desktop.host.tracePath) == true)
        if let started { kill(started.pid, SIGTERM) }
        let coldResult = cold.wait()
        let records = coldResult.records
        #expect(
            records.messages(from: "dev.servicehost.deeplinks").filter { $0 == "deeplinks: open item 43 (launch)" }
                .count == 1,
            "\(coldResult.stderr)")
    }

    @Test func status_andCheck_sayWhenAClaimedSchemeIsNotInTheEntry() throws {
        guard Self.tools else { return }
        let desktop = try Desktop()
        // The entry is written while no plugin claims anything.
        try FileManager.default.moveItem(
            atPath: desktop.host.lib + "/libDeepLinks.so", toPath: desktop.host.scratch.file("libDeepLinks.so"))
        #expect(try desktop.run(["desktop", "install", "--name", "Notes"] + desktop.runOptions).status == 0)
        try FileManager.default.moveItem(
            atPath: desktop.host.scratch.file("libDeepLinks.so"), toPath: desktop.host.lib + "/libDeepLinks.so")

        let statusResult = try desktop.run(["desktop", "status", "--name", "Notes", "--json"] + desktop.runOptions)
        #expect(statusResult.status == 1)
        let status = try json(statusResult)
        let schemes = status["schemes"] as? [[String: Any]] ?? []
        #expect(status["current"] as? Bool == false)
        #expect(schemes.count == 1 && schemes.first?["scheme"] as? String == "myapp")
        #expect(schemes.first?["claimedBy"] as? String == "dev.servicehost.deeplinks")
        #expect(schemes.first?["inEntry"] as? Bool == false)

        let check = try desktop.run([
            "check", "--json", "--plugins", desktop.host.lib, "--state-dir", desktop.host.stateDirectory,
        ])
        #expect(check.status == 1)
        let problems = (try json(check))["problems"] as? [[String: Any]] ?? []
        #expect(problems.map { $0["code"] as? String } == ["desktop-unregistered"])
        #expect(problems.first?["service"] as? String == "dev.servicehost.deeplinks")

        // Installed again, it is current and check is clean.
        #expect(try desktop.run(["desktop", "install", "--name", "Notes"] + desktop.runOptions).status == 0)
        #expect(try desktop.run(["desktop", "status", "--name", "Notes"] + desktop.runOptions).status == 0)
        #expect(
            try desktop.run(["check", "--plugins", desktop.host.lib, "--state-dir", desktop.host.stateDirectory]).status
                == 0)
    }

    /// DeepLinks declares the quick action `compose` in its Swift manifest: the entry carries it
    /// as a `[Desktop Action compose]` group running `host action compose` with the run options,
    /// which reaches DeepLinks warm and cold.
    @Test func theEntrysActions_areTheDeclaredQuickActions_andTheirExecReachesTheService_warmAndCold() throws {
        guard Self.tools else { return }
        let desktop = try Desktop()
        #expect(try desktop.run(["desktop", "install", "--name", "Notes"] + desktop.runOptions).status == 0)
        let validated = try desktop.tool("/usr/bin/desktop-file-validate", [desktop.entryPath])
        #expect(validated.status == 0 && validated.stdout.isEmpty, "\(validated.stdout)")
        let text = try String(contentsOfFile: desktop.entryPath, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("Actions=compose;"), "\(text)")
        #expect(lines.contains("NoDisplay=false"), "\(text)")
        let group = try #require(lines.firstIndex(of: "[Desktop Action compose]"), "\(text)")
        #expect(lines[group + 1] == "Name=New entry" && lines[group + 2] == "Icon=document-new", "\(text)")
        let exec = try #require(lines[group + 3].split(separator: "=", maxSplits: 1).last.map(String.init))
        let words = exec.split(separator: " ").map(String.init)
        #expect(words.first?.hasSuffix("/host") == true && words[1...2] == ["action", "compose"], "\(exec)")
        #expect(words.contains(desktop.host.control), "\(exec)")

        // The action's Exec, as a launcher runs it: warm, then cold.
        let run = { () throws -> CommandResult in
            try Command.run(words[0], Array(words.dropFirst()), environment: desktop.environment)
        }
        try desktop.host.start()
        let warm = try run()
        #expect(warm.status == 0, "\(warm.stdout)\(warm.stderr)")
        let warmRecords = desktop.host.stop().records
        #expect(warmRecords.messages(from: "dev.servicehost.deeplinks") == ["deeplinks: open compose"])

        try FileManager.default.removeItem(atPath: desktop.host.tracePath)
        let cold = try Command.start(words[0], Array(words.dropFirst()), environment: desktop.environment)
        #expect(eventually { desktop.host.events.contains { $0.hasPrefix("performActionForShortcutItem") } })
        cold.send(SIGTERM)
        let coldResult = cold.wait()
        #expect(
            coldResult.records.messages(from: "dev.servicehost.deeplinks") == ["deeplinks: open compose (launch)"],
            "\(coldResult.stderr)")
    }

    @Test func uninstall_removesTheEntryAndItsAssociation() throws {
        guard Self.tools else { return }
        let desktop = try Desktop()
        #expect(try desktop.run(["desktop", "install", "--name", "Notes"] + desktop.runOptions).status == 0)
        let removed = try json(try desktop.run(["desktop", "uninstall", "--name", "Notes", "--json"]))
        #expect(removed["problems"] as? [String] == [])
        #expect(!FileManager.default.fileExists(atPath: desktop.entryPath))
        let handler = try desktop.tool("/usr/bin/xdg-mime", ["query", "default", "x-scheme-handler/myapp"])
        #expect(handler.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(handler.stdout)")
        // A second uninstall finds nothing to remove: an error that names the path.
        let again = try json(try desktop.run(["desktop", "uninstall", "--name", "Notes", "--json"]))
        #expect((again["problems"] as? [String])?.count == 1)
    }

    @Test func open_andDesktop_refuseBadArguments() throws {
        let desktop = try Desktop()
        #expect(try desktop.run(["open", "not-a-url", "--plugins", desktop.host.lib]).status == 2)
        #expect(try desktop.run(["open", "myapp://a", "myapp://b", "--plugins", desktop.host.lib]).status == 2)
        #expect(
            try desktop.run(["open", "myapp://a", "--launch-url", "myapp://b", "--plugins", desktop.host.lib]).status
                == 2)
        #expect(try desktop.run(["desktop", "instal"]).status == 2)
        #expect(
            try desktop.run(["desktop", "install", "--launch-url", "x:y", "--plugins", desktop.host.lib]).status == 2)
        #expect(try desktop.run(["desktop", "uninstall", "--plugins", desktop.host.lib]).status == 2)
        // A running host is told, and its answer's status is ctl open's: 3 when no service takes it.
        try desktop.host.start()
        let declined = try desktop.run(["open", "other://x"] + desktop.runOptions)
        #expect(declined.status == 3, "\(declined.stdout)\(declined.stderr)")
        desktop.host.stop()
    }

    private func json(_ result: CommandResult) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("not a JSON object: \(result.stdout)")
        }
        return object
    }

    /// The `host` whose command line names `control` (the one `host open` became): its pid
    /// and arguments.
    private func hostProcess(control: String) -> (pid: pid_t, arguments: [String])? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for name in names {
            guard let pid = pid_t(name),
                let data = FileManager.default.contents(atPath: "/proc/\(name)/cmdline")
            else { continue }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard let first = words.first, first == "host" || first.hasSuffix("/host"), words.contains(control),
                !words.contains("open")
            else {
                continue
            }
            return (pid, Array(words.dropFirst()))
        }
        return nil
    }
}
