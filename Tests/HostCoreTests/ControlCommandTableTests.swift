import Foundation
import TestSupport
import Testing

@testable import HostCore

/// The command table (``ControlCommands``) against what repeats it in prose: `host.h`'s grant
/// list, the documentation's ctl commands table, its exit statuses and `list --all`'s reasons,
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
    }

    @Test func hostH_listsTheEventsGrant() throws {
        let header = try String(
            contentsOf: Repository.root.appendingPathComponent("Sources/ServiceABI/include/servicehost/host.h"),
            encoding: .utf8)
        let listed = try Documentation.words(in: header, after: #""requests": "events" ("#, until: ")")
        #expect(Set(listed) == Self.eventsGrant)
    }

    @Test func theDocumentation_listsTheEventsGrant_inBothPlaces() throws {
        let configuration = try Documentation.section("services.json")
        #expect(
            Set(try Documentation.words(in: configuration, after: #"`"events"` ("#, until: ")")) == Self.eventsGrant)
        let control = try Documentation.section("Control requests from services: `sh_host.control`")
        let covered = try Documentation.words(in: control, after: #"`"requests": "events"` covers"#, until: ";")
        #expect(Set(covered.filter { $0 != "all" }) == Self.eventsGrant)
    }

    @Test func theDocumentationsCommandsTable_namesEveryCommand() throws {
        let rows = try Documentation.table(
            in: try Documentation.section("The control channel"), header: "| command | what it does |")
        var named: Set<String> = []
        for row in rows {
            for item in Documentation.backticked(row[0]) { named.insert(String(item.split(separator: " ")[0])) }
        }
        #expect(named == Set(ControlCommands.names))
    }

    @Test func theDocumentationsExitStatuses_areCtlsDeclared() throws {
        let declared = Set(CtlCommand.ExitStatus.allCases.map(\.rawValue))
        let section = try Documentation.section("The control channel")
        let sentence = try Documentation.text(in: section, after: "Exit status: ", until: ".")
        let listed = sentence.split(separator: ";").compactMap {
            Int32($0.trimmingCharacters(in: .whitespaces).prefix(1))
        }
        #expect(Set(listed) == declared)
        #expect(CtlCommand.help.hasSuffix("exit status: " + CtlCommand.ExitStatus.summary))
        // `host ctl request`'s table: what each outcome exits with; a payload that is not JSON
        // never leaves `host ctl` (bad arguments).
        let asking = try Documentation.section("Asking another service")
        let rows = try Documentation.table(in: asking, header: "| what happened | result | `host ctl request` |")
        #expect(!rows.isEmpty)
        for row in rows {
            let status = try #require(
                Int32(try Documentation.text(in: row[2], after: "exit ", until: " ").prefix(1)), "\(row)")
            #expect(declared.contains(status), "\(row)")
            if row[0].contains("not JSON") { #expect(status == CtlCommand.ExitStatus.badArguments.rawValue) }
        }
        #expect(throws: UsageError.self) {
            try CtlCommand.parse(["request", "queue.count", "{nope"], readInput: { _ in [] })
        }
    }

    @Test func theDocumentedSkipReasons_areSkippedEntrysReasons() throws {
        let section = try Documentation.section("Operating a host")
        let reasons = try Documentation.text(in: section, after: "with a reason tools can match:", until: "(`--json`")
        #expect(Set(Documentation.backticked(reasons)) == Set(SkippedEntry.Reason.allCases.map(\.rawValue)))
    }
}

/// The reference text, wherever it lives: README.md or a DocC article (`Sources/*/*.docc/*.md`).
enum Documentation {
    /// Every Markdown file of the documentation.
    static func files() throws -> [String] {
        var texts = [try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)]
        let sources = Repository.root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let moduleURL = sources.appendingPathComponent(module)
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: moduleURL.path)) ?? []
            where entry.hasSuffix(".docc") {
                let catalog = moduleURL.appendingPathComponent(entry)
                guard let walker = FileManager.default.enumerator(atPath: catalog.path) else { continue }
                for case let file as String in walker where file.hasSuffix(".md") {
                    texts.append(try String(contentsOf: catalog.appendingPathComponent(file), encoding: .utf8))
                }
            }
        }
        return texts
    }

    /// The section under the heading `title` (any level), up to the next heading of the same
    /// or a higher level.
    static func section(_ title: String) throws -> String {
        for text in try files() {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            var inCode = false
            for (index, line) in lines.enumerated() {
                if line.hasPrefix("```") { inCode.toggle() }
                guard !inCode, line.hasPrefix("#") else { continue }
                let level = line.prefix { $0 == "#" }.count
                guard line.dropFirst(level).trimmingCharacters(in: .whitespaces) == title else { continue }
                var body: [Substring] = []
                var fence = false
                for next in lines[(index + 1)...] {
                    if next.hasPrefix("```") { fence.toggle() }
                    if !fence, next.hasPrefix("#"), next.prefix(while: { $0 == "#" }).count <= level { break }
                    body.append(next)
                }
                return body.joined(separator: "\n")
            }
        }
        throw TestFailure("no section \"\(title)\" in README.md or the DocC articles")
    }

    /// The rows of the table whose header line is `header`, each as its cells.
    static func table(in section: String, header: String) throws -> [[String]] {
        let lines = section.split(separator: "\n").map(String.init)
        guard let start = lines.firstIndex(of: header) else { throw TestFailure("no table \(header)") }
        return lines[(start + 2)...].prefix { $0.hasPrefix("|") }.map { line in
            // Cells split on `|` but not on `\|` (an alternative inside code).
            var cells: [String] = []
            var cell = ""
            var previous: Character = " "
            for character in line.dropFirst() {
                if character == "|" && previous != "\\" {
                    cells.append(cell.trimmingCharacters(in: .whitespaces))
                    cell = ""
                } else {
                    cell.append(character)
                }
                previous = character
            }
            return cells
        }
    }

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

    /// Each `code span` of `text`.
    static func backticked(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map {
            String($0.element)
        }
    }
}
