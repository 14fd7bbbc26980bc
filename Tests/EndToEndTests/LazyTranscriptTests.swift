import Foundation
import TestSupport
import Testing

/// The "Lazy services" transcript (Sources/HostCore/HostCore.docc/Configuration.md) against the
/// real binary on the plugins `scripts/run` gathers: each command's documented lines are lines
/// it prints now, in the same order (the page trims the others; a line ending in `…` is the
/// start of one).
@Suite(.timeLimit(.minutes(10))) struct LazyTranscriptTests {
    @Test func theLazyTranscript_isWhatTheCommandsPrint() throws {
        let transcript = try #require(Documentation.section("Lazy services").codeBlocks(language: "text").first)
        var steps: [(command: String, output: [String])] = []
        for line in transcript {
            if line.hasPrefix("$ ") {
                steps.append((String(line.dropFirst(2)), []))
            } else if !steps.isEmpty {
                steps[steps.count - 1].output.append(line)
            }
        }
        #expect(steps.count >= 3 && steps.allSatisfy { $0.command.hasPrefix("host ctl ") && !$0.output.isEmpty })

        let scratch = try Scratch()
        _ = try scratch.folder("plugins")
        for name in try ReadmeTranscriptTests.bundled() {
            _ = try scratch.copy(try Repository.product("lib\(name).so"), to: "plugins/lib\(name).so", mode: 0o755)
        }
        let control = scratch.file("host.sock")
        let shell = try TranscriptShell(scratch, control: control)
        let host = try Command.start(
            try Repository.product("host"), ["--plugins", "plugins", "--control", control, "--state-dir", "state"],
            environment: shell.environment, directory: scratch.path)
        defer {
            host.send(SIGTERM)
            _ = host.wait()
        }
        #expect(eventually { (try? TranscriptShell.lines(shell.run("host ctl state")).first) == "state: active" })

        for step in steps {
            let printed = TranscriptShell.lines(try shell.run(step.command))
            // Each documented line matches a printed one after the previous match.
            var rest = printed[...]
            for line in step.output {
                let matches = { (real: String) in line.hasSuffix("…") ? real.hasPrefix(line.dropLast()) : real == line }
                guard let found = rest.firstIndex(where: matches) else {
                    Issue.record("`\(step.command)` printed no \(line) (in order):\n\(printed.joined(separator: "\n"))")
                    break
                }
                rest = rest[(found + 1)...]
            }
        }
    }
}
