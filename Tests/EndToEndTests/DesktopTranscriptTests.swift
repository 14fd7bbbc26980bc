import Foundation
import TestSupport
import Testing

/// README "On the Linux desktop": its transcript, run for real as a user's desktop runs it.
/// The freedesktop tools (xdg-utils, desktop-file-utils) in a private `HOME`, `XDG_DATA_HOME`,
/// `XDG_CONFIG_HOME` and `XDG_RUNTIME_DIR`, `DISPLAY` set (xdg-open hands a URL to an
/// `x-scheme-handler` entry only then; no display is used), a private `dbus-daemon --session`
/// with dbusmock's notification server; the bundled DeepLinks and PushNotifications.
///
/// The transcript's conventions: `$ cat FILE` shows a file the test writes first (what the host
/// runs with); a command ending in `&` is the host's process (its output is the host's log,
/// every line of it compared in order, as the README's opening transcript is); `# the user
/// clicks LABEL` is the server's `ActionInvoked` for that action of the last notification.
/// Before each step the test waits until the host has logged the lines the transcript shows
/// before it.
@Suite(
    .timeLimit(.minutes(10)),
    .enabled(if: DBusMock.installed, "needs dbus-daemon and python3-dbusmock"))
struct DesktopTranscriptTests {
    @Test func theReadmesDesktopTranscript_isWhatTheHostAndTheDesktopPrint() throws {
        guard DesktopTests.tools else { return }
        let blocks = try Documentation.section("On the Linux desktop").codeBlocks(language: "text")
        let transcript = try #require(blocks.first { $0.contains { $0.hasPrefix("$ host desktop install") } })

        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch)
        _ = try scratch.folder("lib")
        for name in ["DeepLinks", "PushNotifications"] {
            _ = try scratch.copy(try Repository.product("lib\(name).so"), to: "lib/lib\(name).so")
        }
        let runtime = try scratch.folder("run", mode: 0o700)
        let control = runtime + "/servicehost/host.sock"
        let shell = try TranscriptShell(
            scratch, control: control,
            environment: daemon.environment.merging([
                "HOME": scratch.path, "XDG_DATA_HOME": scratch.file(".local/share"),
                "XDG_CONFIG_HOME": scratch.file(".config"), "XDG_STATE_HOME": scratch.file(".local/state"),
                "XDG_RUNTIME_DIR": runtime, "DISPLAY": ":99",
                // Only the test's entries: no system-wide handler may answer for `myapp`.
                "XDG_DATA_DIRS": scratch.file("nowhere"),
            ]) { $1 })
        // The scratch folder is the reader's home. The notification source's line is compared
        // whole (the test brings the server); it comes when the server answers, so its place
        // among the other lines is not compared.
        let notificationsLine = "[host] source notifications "
        func shape(_ line: String) -> String {
            ReadmeTranscriptTests.shape(line.replacingOccurrences(of: scratch.path, with: "~"))
        }
        func shapes(_ lines: [String]) -> [String] {
            lines.filter { !$0.contains(notificationsLine) }.map(shape)
                + lines.filter { $0.contains(notificationsLine) }
        }
        let logPath = scratch.file("host.log")
        // What the machine does meanwhile (a test elsewhere setting the clock, memory
        // pressure) is not the transcript's.
        let machine = ["[host] significant time change: ", "[host] memory pressure: "]
        func logged() -> [String] {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init).filter { line in
                !machine.contains { line.contains($0) }
            }
        }

        var host: Command.Running?
        defer {
            if let host {
                _ = try? shell.run("host ctl terminate")
                _ = host.wait()
            }
        }
        var expectedLog: [String] = []
        var command: (text: String, expected: [String], logged: Int)?
        func finish() throws {
            guard let current = command else { return }
            command = nil
            // What the host says before this step, it has said.
            let count = current.logged
            #expect(eventually(within: 30) { logged().count >= count }, "the host logged:\n\(logged())")
            if current.text.hasPrefix("cat ") {
                let name = String(current.text.dropFirst("cat ".count))
                _ = try scratch.write(name, Array((current.expected.joined(separator: "\n") + "\n").utf8))
            }
            if current.text.hasSuffix("&") {
                // The host: its log goes to a file the test reads as it grows.
                host = try Command.start(
                    "/bin/sh", ["-c", "\(current.text.dropLast()) >\(logPath) 2>&1"],
                    environment: shell.environment, directory: scratch.path)
                #expect(current.expected.isEmpty, "the host's own lines are log lines")
                return
            }
            let result = try shell.run(current.text)
            #expect(result.status == 0, "`\(current.text)`: \(result.stderr)")
            let actual = TranscriptShell.lines(result)
            #expect(
                current.expected.map(shape) == actual.map(shape),
                "`\(current.text)` now prints:\n\(actual.joined(separator: "\n"))")
        }
        for line in transcript {
            if let log = ReadmeTranscriptTests.logLine(line) {
                expectedLog.append(log)
            } else if line.hasPrefix("$ ") {
                try finish()
                // A comment after the command is the reader's, not the shell's.
                let text = line.dropFirst(2).split(separator: "#", maxSplits: 1).first ?? ""
                command = (text.trimmingCharacters(in: .whitespaces), [], expectedLog.count)
            } else if line.hasPrefix("# the user clicks ") {
                try finish()
                let label = String(line.dropFirst("# the user clicks ".count).prefix { $0 != " " })
                let count = expectedLog.count
                #expect(eventually(within: 30) { logged().count >= count })
                let calls = try daemon.notifyCalls()
                let actions = try #require(calls.last?.actions, "no notification to click")
                let index = try #require(actions.firstIndex(of: label), "no action labelled \(label): \(actions)")
                try daemon.invokeAction(UInt32(calls.count), actions[index - 1])
            } else if line.hasPrefix("# ") || line.isEmpty {
                try finish()
            } else {
                #expect(command != nil, "an output line outside a command: \(line)")
                command?.expected.append(line)
            }
        }
        try finish()
        let result = try #require(host, "the transcript starts no host (a command ending in &)").wait()
        host = nil
        #expect(result.status == 0)
        // The call the README quotes is the one the server got.
        let notify = try #require(try daemon.notifyCalls().last)
        func quoted(_ text: String) -> String { "\"\(text)\"" }
        let call =
            "Notify(\(quoted(notify.appName)), \(notify.replacesID), \"\", \(quoted(notify.summary)), "
            + "\(quoted(notify.body)), [\(notify.actions.map(quoted).joined(separator: ", "))], {"
            + notify.hints.sorted { $0.key < $1.key }.map { "\(quoted($0.key)): \(quoted($0.value))" }
            .joined(separator: ", ") + "}, \(notify.timeout))"
        let section = try Documentation.section("On the Linux desktop").lines.joined(separator: " ")
        #expect(section.contains("`\(call)`"), "the server got \(call)")
        #expect(shapes(expectedLog) == shapes(logged()), "the host now logs:\n\(logged().joined(separator: "\n"))")
    }
}
