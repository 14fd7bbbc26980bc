import Foundation
import TestSupport
import Testing

/// The reference's table of log events (section "Log lines and trace") against their one
/// declaration, `LogEvent`: every event is in it once, nothing else is, and each row names the
/// fields its events carry. The table is found by its heading, in README.md or in a DocC
/// article under Sources, wherever the reference lives.
@Suite struct LogEventTableTests {
    /// The heading of the section holding the table.
    static let heading = "Log lines and trace"

    /// One row: the events its first cell names, and every `code` word in the row.
    struct Row {
        let events: [String]
        let words: Set<String>
        let text: String
    }

    @Test func theTableNamesEveryDeclaredEventOnce_withItsFields() throws {
        let rows = try Self.table()
        let documented = rows.flatMap(\.events)
        let declared = LogEvent.allCases.map(\.name)
        #expect(documented.count == Set(documented).count, "an event in two rows: \(documented.sorted())")
        #expect(Set(declared).subtracting(documented).sorted() == [], "declared, but not in the table")
        #expect(Set(documented).subtracting(declared).sorted() == [], "in the table, but not declared in LogEvent")
        for row in rows {
            for name in row.events {
                let fields = LogEvent(rawValue: name)?.fields ?? []
                #expect(fields.filter { !row.words.contains($0) } == [], "\(name)'s row leaves out fields: \(row.text)")
            }
        }
    }

    /// The rows of the first `| event | fields |` table after the heading, in README.md or a
    /// `.docc` article.
    static func table() throws -> [Row] {
        var searched: [String] = []
        for file in try documents() {
            searched.append(file.lastPathComponent)
            let text = try String(contentsOf: file, encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            guard let start = lines.firstIndex(where: { $0.hasPrefix("#") && $0.contains(heading) }) else { continue }
            let isHeader = { (line: Substring) in line.replacing(" ", with: "").hasPrefix("|event|fields|") }
            guard let header = lines[start...].firstIndex(where: isHeader) else {
                throw TestFailure("\(file.path): no `| event | fields |` table after \"\(heading)\"")
            }
            return lines[(header + 2)...].prefix { $0.hasPrefix("|") }.map { line in
                let cells = line.split(separator: "|", omittingEmptySubsequences: false)
                let first = cells.count > 1 ? cells[1] : ""
                return Row(
                    events: first.matches(of: /`([a-z][A-Za-z]*\.[a-z][A-Za-z]*)`/).map { String($0.1) },
                    words: Set(line.matches(of: /`([^`]+)`/).map { String($0.1) }), text: String(line))
            }
        }
        throw TestFailure("no heading \"\(heading)\" in \(searched.joined(separator: ", "))")
    }

    /// README.md, then every Markdown file in a `.docc` folder under Sources.
    static func documents() throws -> [URL] {
        let sources = Repository.root.appendingPathComponent("Sources")
        guard let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else {
            throw TestFailure("cannot list \(sources.path)")
        }
        let articles = files.compactMap { $0 as? URL }.filter { $0.pathExtension == "md" && $0.path.contains(".docc/") }
        return [Repository.root.appendingPathComponent("README.md")] + articles.sorted { $0.path < $1.path }
    }
}
