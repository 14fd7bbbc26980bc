import Foundation
import TestSupport
import Testing

/// The README's opening transcript (its "Two commands" section) against a real run of what
/// `scripts/run` starts: the plugins it gathers, the host with the transcript's options, then
/// the transcript's commands in order and Ctrl-C where it shows `^C`. Every line the host logs
/// and every line a command prints is compared by shape (numbers aside), so the first thing a
/// reader sees is what the host prints now.
@Suite(.timeLimit(.minutes(10))) struct ReadmeTranscriptTests {
    /// The plugins `scripts/run` gathers: its `bundled=(…)` line.
    static func bundled() throws -> [String] {
        let script = try String(contentsOf: Repository.root.appendingPathComponent("scripts/run"), encoding: .utf8)
        let line = try #require(script.split(separator: "\n").first { $0.hasPrefix("bundled=(") })
        return line.dropFirst("bundled=(".count).prefix { $0 != ")" }.split(separator: " ").map(String.init)
    }

    /// A log line of the host: `LEVEL [SOURCE] MESSAGE`, after a `^C` the terminal echoed.
    static func logLine(_ line: String) -> String? {
        let text = line.hasPrefix("^C") ? String(line.dropFirst(2)) : line
        return text.range(of: #"^(error|warn|info|debug) \[[^\]]+\] "#, options: .regularExpression) == nil ? nil : text
    }

    /// What differs between runs: durations (`22.511 s`, the trace's `t` and `dur_ns`) and the
    /// control socket. Counts stay: "active with 7 service(s)" must be what the host says.
    static let varying: [(pattern: String, template: String)] = [
        (#"control socket \S+"#, "control socket SOCKET"),
        (#"[0-9]+\.[0-9]+ s\b"#, "N s"),
        (#""(t|dur_ns)":[0-9]+"#, #""$1":N"#),
    ]

    /// A line without what differs between runs; the README's `.build/…/` folder is the test's own.
    static func shape(_ line: String) -> String {
        // A system source's line is its name only: whether it is on, and on what, is the machine's.
        if let range = line.range(of: "[host] source "), let end = line[range.upperBound...].firstIndex(of: " ") {
            return String(line[..<end])
        }
        return varying.reduce(line.replacingOccurrences(of: ".build/…/", with: "")) {
            $0.replacingOccurrences(of: $1.pattern, with: $1.template, options: .regularExpression)
        }
    }

    @Test func theOpeningTranscript_isWhatScriptsRunPrints() throws {
        let transcript = try #require(Documentation.section("Two commands").codeBlocks(language: "text").first)
        let start = try #require(transcript.first)
        #expect(start.hasPrefix("$ scripts/run"), "the transcript starts with \(start)")
        let options = start.dropFirst("$ scripts/run".count).split(separator: " ").map(String.init)

        let scratch = try Scratch()
        _ = try scratch.folder("plugins")
        for name in try Self.bundled() {
            _ = try scratch.copy(try Repository.product("lib\(name).so"), to: "plugins/lib\(name).so", mode: 0o755)
        }
        let executable = try Repository.product("host")
        let control = scratch.file("host.sock")
        let shell = try TranscriptShell(scratch, control: control)
        func run(_ command: String, checked: Bool = true) throws -> [String] {
            let result = try shell.run(command.replacingOccurrences(of: ".build/…/", with: ""))
            if checked { #expect(result.status == 0, "`\(command)`: \(result.stderr)") }
            return TranscriptShell.lines(result)
        }

        let host = try Command.start(
            executable, ["--plugins", "plugins"] + options + ["--control", control, "--state-dir", "state"],
            environment: shell.environment, directory: scratch.path)
        var running = true
        defer {
            if running {
                host.send(SIGTERM)
                _ = host.wait()
            }
        }
        #expect(eventually { (try? run("host ctl state", checked: false).first) == "state: active" })

        var expectedLog: [String] = []
        var logged: [String] = []
        var command: (text: String, expected: [String])?
        func finish() throws {
            guard let current = command else { return }
            let actual = try run(current.text)
            #expect(
                current.expected.map(Self.shape) == actual.map(Self.shape),
                "`\(current.text)` now prints:\n\(actual.joined(separator: "\n"))")
            command = nil
        }
        for line in transcript.dropFirst() {
            if let log = Self.logLine(line) {
                if line.hasPrefix("^C") {
                    try finish()
                    host.send(SIGINT)
                    let result = host.wait()
                    running = false
                    #expect(result.status == 0, "\(result.stderr)")
                    logged = result.stderr.split(separator: "\n").map(String.init)
                }
                expectedLog.append(log)
            } else if line.hasPrefix("$ ") {
                try finish()
                command = (String(line.dropFirst(2)), [])
            } else if line.hasPrefix("# ") || line.isEmpty || line.hasPrefix("scripts/run: ") {
                try finish()
            } else {
                command?.expected.append(line)
                #expect(command != nil, "an output line outside a command: \(line)")
            }
        }
        try finish()
        #expect(!running, "the transcript never stops the host (^C)")
        #expect(
            expectedLog.map(Self.shape) == logged.map(Self.shape),
            "the host now logs:\n\(logged.joined(separator: "\n"))")
    }
}
