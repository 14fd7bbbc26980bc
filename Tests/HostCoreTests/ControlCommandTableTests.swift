import Foundation
import TestSupport
import Testing

@testable import HostCore

/// The command table (``ControlCommands``) against what repeats it in prose: `host.h`'s grant
/// list, the documentation's ctl commands table and its exit statuses (`list --all`'s reasons:
/// SkipReasonTableTests),
/// as VocabularyTests holds `events.h` against EventKind.
@Suite struct ControlCommandTableTests {
    /// The commands a service granted `"requests": "events"` may send.
    private static let eventsGrant = Set(ControlCommands.rows.filter { $0.grant == .events }.map(\.name))

    @Test func theTable_hasEachNameOnce_andEveryCommandIsInCtlsUsage() {
        #expect(Set(ControlCommands.names).count == ControlCommands.rows.count)
        let usage = CtlCommand.usage
        for name in ControlCommands.names {
            #expect(usage.contains("  \(name)") || usage.contains("| \(name)"), "\(name) is not in host ctl's usage")
        }
        #expect(ShellCompletion.Shell.allCases.allSatisfy { ShellCompletion.script($0).contains("memory-warning") })
        // `host --help` shows the same lines (it left out request, authorization and three scene
        // commands when it was written by hand).
        #expect(!CtlCommand.commandLines.isEmpty)
        for line in CtlCommand.commandLines { #expect(Usage.text.contains("  host ctl \(line)\n"), "\(line)") }
    }

    @Test func hostH_listsTheEventsGrant() throws {
        let header = try String(
            contentsOf: Repository.root.appendingPathComponent("Sources/ServiceABI/include/servicehost/host.h"),
            encoding: .utf8)
        let listed = try Prose.words(in: header, after: #""requests": "events" ("#, until: ")")
        #expect(Set(listed) == Self.eventsGrant)
    }

    @Test func theDocumentation_listsTheEventsGrant_inBothPlaces() throws {
        let configuration = try Documentation.section("services.json").text
        #expect(
            Set(try Prose.words(in: configuration, after: #"`"events"` ("#, until: ")")) == Self.eventsGrant)
        let control = try Documentation.section("Control requests from services: `sh_host.control`").text
        let covered = try Prose.words(in: control, after: #"`"requests": "events"` covers"#, until: ";")
        #expect(Set(covered.filter { $0 != "all" }) == Self.eventsGrant)
    }

    @Test func theDocumentationsCommandsTable_namesEveryCommand() throws {
        let table = try Documentation.section("The control channel").table(header: ["command", "what it does"])
        var named: Set<String> = []
        for cell in table.column("command") {
            for item in Documentation.codeSpans(cell) { named.insert(String(item.split(separator: " ")[0])) }
        }
        #expect(named == Set(ControlCommands.names))
    }

    @Test func theHostsExitStatusTable_isTheDeclaredStatuses() throws {
        let table = try Documentation.section("The `host` command").table(header: ["status", "meaning"])
        #expect(table.column("status").compactMap { Int32($0) } == HostExitStatus.allCases.map(\.rawValue))
        #expect(table.rows.count == HostExitStatus.allCases.count)
    }

    @Test func theDocumentationsExitStatuses_areCtlsDeclared() throws {
        let declared = Set(CtlCommand.ExitStatus.allCases.map(\.rawValue))
        let section = try Documentation.section("The control channel").text
        let sentence = try Prose.text(in: section, after: "Exit status: ", until: ".")
        let listed = sentence.split(separator: ";").compactMap {
            Int32($0.trimmingCharacters(in: .whitespaces).prefix(1))
        }
        #expect(Set(listed) == declared)
        #expect(CtlCommand.help.hasSuffix("exit status: " + CtlCommand.ExitStatus.summary))
        // `host ctl request`'s table: what each outcome exits with; a payload that is not JSON
        // never leaves `host ctl` (bad arguments).
        let rows = try Documentation.section("Asking another service")
            .table(header: ["what happened", "result", "host ctl request"]).rows
        #expect(!rows.isEmpty)
        for row in rows {
            let status = try #require(
                Int32(try Prose.text(in: row[2], after: "exit ", until: " ").prefix(1)), "\(row)")
            #expect(declared.contains(status), "\(row)")
            if row[0].contains("not JSON") { #expect(status == CtlCommand.ExitStatus.badArguments.rawValue) }
        }
        #expect(throws: UsageError.self) {
            try CtlCommand.parse(["request", "queue.count", "{nope"], readInput: { _ in [] })
        }
    }
}

/// Reading prose: the words of a list written in a sentence (the table lookups are
/// TestSupport's ``Documentation``).
private enum Prose {
    /// The text between the first `start` and the next `end` after it (line breaks read as spaces).
    static func text(in text: String, after start: String, until end: String) throws -> String {
        let text = text.replacingOccurrences(of: "\n", with: " ")
        guard let from = text.range(of: start) else { throw TestFailure("no \"\(start)\"") }
        let rest = text[from.upperBound...]
        let to = rest.range(of: end)?.lowerBound ?? rest.endIndex
        return String(rest[..<to])
    }

    /// The command-like words (`memory-warning`) between `start` and `end`, "and" left out.
    static func words(in text: String, after start: String, until end: String) throws -> [String] {
        try self.text(in: text, after: start, until: end).split { !($0.isLetter || $0 == "-") }.map(String.init)
            .filter { !["and", "with", "too"].contains($0) }
    }
}
