import Foundation
import TestSupport
import Testing

/// The "Operating a host" transcripts (issue 14; Sources/HostCore/HostCore.docc/Operating.md)
/// against the real binary: the same commands on the same files, each output line compared by
/// shape (numbers aside), so the transcripts cannot drift silently.
@Suite(.timeLimit(.minutes(10))) struct OperateTranscriptTests {
    /// One `$ command` of a transcript and the lines it printed.
    struct Step {
        var command: String
        var output: [String]
    }

    /// The commands whose output the test compares; every one must be in the transcripts.
    static let checked = [
        "host ctl stats dev.servicehost.logger", "host ctl blame", "host ctl list --all",
        "host ctl service restart dev.servicehost.uptime",
        "host ctl service start dev.servicehost.analytics", "host check --plugins lib; echo $?", "head -4 host.log",
    ]

    /// The steps of the `text` blocks of the "Operating a host" section.
    static func transcript() throws -> [Step] {
        var steps: [Step] = []
        for block in try Documentation.section("Operating a host").codeBlocks(language: "text") {
            for line in block {
                if line.hasPrefix("$ ") {
                    steps.append(Step(command: String(line.dropFirst(2)), output: []))
                } else if !steps.isEmpty {
                    steps[steps.count - 1].output.append(String(line))
                }
            }
        }
        return steps
    }

    /// A line without its figures: every number is N, runs of spaces are one. A system source's
    /// line (`source NAME: on (…)`) is its name only: what it runs on is the machine's.
    static func shape(_ line: String) -> String {
        if line.hasPrefix("source "), let colon = line.firstIndex(of: ":") { return String(line[..<colon]) }
        return line.replacingOccurrences(of: #"[0-9]+(\.[0-9]+)?"#, with: "N", options: .regularExpression)
            .replacingOccurrences(of: #" +"#, with: " ", options: .regularExpression)
    }

    @Test func theTranscripts_matchWhatTheCommandsPrintNow() throws {
        let steps = try Self.transcript()
        for command in Self.checked {
            #expect(steps.contains { $0.command == command }, "the transcripts have no `$ \(command)`")
        }
        // The files of the transcript: five bundled plugins, a text file, a configuration.
        let scratch = try Scratch()
        _ = try scratch.folder("lib")
        for name in ["Logger", "Uptime", "DeepLinks", "OfflineQueue", "Analytics"] {
            _ = try scratch.copy(try Repository.product("lib\(name).so"), to: "lib/lib\(name).so", mode: 0o644)
        }
        _ = try scratch.write("lib/notes.so", Array("hi\n".utf8))
        _ = try scratch.write(
            "lib/services.json", Array(#"{"services":{"dev.servicehost.analytics":{"enabled":false}}}"#.utf8))
        let log = try scratch.write("host.log", [])
        let executable = try Repository.product("host")
        let control = scratch.file("host.sock")
        // The host of the journald example and of the ctl commands: its stderr is the journal stream.
        let identity = try FileManager.default.attributesOfItem(atPath: log)
        let stream =
            "\((identity[.systemNumber] as? NSNumber)?.uint64Value ?? 0):\((identity[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0)"
        let host = try Command.start(
            "/bin/sh",
            [
                // The clock and memory sources off, as in RunningHost: another test setting the clock
                // would add a line to `ctl stats`.
                "-c",
                "exec \"$0\" --plugins lib --stats --control \"$1\" --state-dir state"
                    + " --source time=off --source memory=off 2>>host.log",
                executable, control,
            ],
            environment: ["JOURNAL_STREAM": stream], directory: scratch.path)
        defer {
            host.send(SIGTERM)
            _ = host.wait()
        }
        func run(_ command: String) throws -> [String] {
            var output: [String] = []
            var status: Int32 = 0
            for part in command.components(separatedBy: ";").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                if part == "echo $?" {
                    output.append("\(status)")
                    continue
                }
                var words = part.replacingOccurrences(of: ">/dev/null", with: "").split(separator: " ").map(String.init)
                let quiet = part.contains(">/dev/null")
                let result: CommandResult
                if words.first == "host" {
                    words.removeFirst()
                    if words.first == "ctl" { words.insert(contentsOf: ["--control", control], at: 1) }
                    // No system bus, whatever the machine has: `host check` says the sleep source is off.
                    result = try Command.run(
                        executable, words, environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent"],
                        directory: scratch.path)
                } else {
                    result = try Command.run("/bin/sh", ["-c", part], directory: scratch.path)
                }
                status = result.status
                if !quiet {
                    output += result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                        .dropLast()
                }
            }
            return output
        }
        #expect(eventually { (try? run("host ctl state").first) == "state: active" })
        for step in steps where step.command.hasPrefix("host ctl") || Self.checked.contains(step.command) {
            guard !step.command.hasPrefix("host ctl watch"), !step.command.hasPrefix("host ctl service stop") else {
                continue
            }
            let real = try run(step.command)
            guard Self.checked.contains(step.command) else { continue }
            // blame is slowest first: the order depends on the machine, the lines do not.
            let sorted = step.command == "host ctl blame"
            let expected = step.output.map(Self.shape)
            let actual = real.prefix(step.command.hasPrefix("head") ? expected.count : real.count).map(Self.shape)
            #expect(
                sorted ? expected.sorted() == actual.sorted() : expected == actual,
                "`\(step.command)` now prints:\n\(real.joined(separator: "\n"))")
        }
    }
}
