import Foundation

/// The project's documentation as tests read it: README.md and every article of the DocC
/// catalogs (`Sources/*/*.docc/**/*.md`). A section or table lives in exactly one of them, so a
/// test finds it by its heading, wherever it was moved, instead of naming the file.
public enum Documentation {
    /// One Markdown file: its path from the repository's root, and its lines.
    public struct Page: Sendable {
        public let path: String
        public let lines: [String]
    }

    /// A heading and what it covers: its lines up to the next heading of its level or above.
    public struct Section: Sendable {
        /// The page's path from the repository's root.
        public let path: String
        /// The heading's text, without its `#`s.
        public let heading: String
        /// 1 for `#`, 2 for `##`, …
        public let level: Int
        /// The lines below the heading (its subsections included).
        public let lines: [String]

        public var text: String { lines.joined(separator: "\n") }

        /// The section's tables, in order.
        public var tables: [Table] { Documentation.tables(in: lines) }

        /// The one table of the section whose header row is `header` (cells without backticks).
        public func table(header: [String]) throws -> Table {
            let matches = tables.filter { $0.header == header }
            guard matches.count == 1 else {
                throw TestFailure("\(path) § \(heading): \(matches.count) tables headed \(header)")
            }
            return matches[0]
        }

        /// The bodies of the fenced blocks opened by ```` ```language ```` (any language when nil).
        public func codeBlocks(language: String? = nil) -> [[String]] {
            Documentation.codeBlocks(in: lines, language: language)
        }
    }

    /// A Markdown table: its header cells and its rows' cells, trimmed, `\|` read as `|`.
    public struct Table: Sendable {
        public let header: [String]
        public let rows: [[String]]

        /// Column `name`'s cells, one per row (empty when a row is short).
        public func column(_ name: String) -> [String] {
            guard let index = header.firstIndex(of: name) else { return [] }
            return rows.map { index < $0.count ? $0[index] : "" }
        }
    }

    /// README.md first, then every DocC article by path.
    public static func pages() throws -> [Page] {
        var paths = ["README.md"]
        let sources = Repository.root.appendingPathComponent("Sources")
        let enumerator = FileManager.default.enumerator(atPath: sources.path)
        var articles: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            if relative.hasSuffix(".md"), relative.split(separator: "/").contains(where: { $0.hasSuffix(".docc") }) {
                articles.append("Sources/" + relative)
            }
        }
        paths += articles.sorted()
        return try paths.map { path in
            let text = try String(contentsOf: Repository.root.appendingPathComponent(path), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            return Page(path: path, lines: lines)
        }
    }

    /// A page by its path from the root (`README.md`, `Sources/HostCore/HostCore.docc/Limits.md`).
    public static func page(_ path: String) throws -> Page {
        guard let page = try pages().first(where: { $0.path == path }) else { throw TestFailure("no page \(path)") }
        return page
    }

    /// Every section of every page.
    public static func sections() throws -> [Section] {
        try pages().flatMap(sections(of:))
    }

    /// The one section headed `heading` (its text without `#`s, exactly), wherever it lives; a
    /// heading found on no page or on several is a failure naming them.
    public static func section(_ heading: String) throws -> Section {
        let matches = try sections().filter { $0.heading == heading }
        guard matches.count == 1 else {
            throw TestFailure("\(matches.count) sections headed \"\(heading)\": \(matches.map(\.path))")
        }
        return matches[0]
    }

    /// The sections of one page; headings inside fenced blocks (`# a comment`, `#include`) are text.
    public static func sections(of page: Page) -> [Section] {
        var headings: [(line: Int, level: Int, text: String)] = []
        var fenced = false
        for (index, line) in page.lines.enumerated() {
            if line.hasPrefix("```") { fenced.toggle() }
            guard !fenced, let level = headingLevel(line) else { continue }
            headings.append((index, level, String(line.dropFirst(level + 1)).trimmingCharacters(in: .whitespaces)))
        }
        return headings.enumerated().map { position, heading in
            let end = headings[(position + 1)...].first { $0.level <= heading.level }?.line ?? page.lines.count
            return Section(
                path: page.path, heading: heading.text, level: heading.level,
                lines: Array(page.lines[(heading.line + 1)..<end]))
        }
    }

    /// The code spans of a cell or line: "`a`, `b` (c)" → ["a", "b"].
    public static func codeSpans(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The blocks a line naming a file introduces (`` `hello.c`: ``, a blank line, a fence),
    /// on every page: the path and the block's text.
    public static func fileBlocks() throws -> [(path: String, text: String, page: String)] {
        var blocks: [(String, String, String)] = []
        for page in try pages() {
            let lines = page.lines
            var index = 0
            while index + 2 < lines.count {
                let line = lines[index]
                if line.hasPrefix("`"), line.hasSuffix("`:"), lines[index + 1].isEmpty,
                    lines[index + 2].hasPrefix("```")
                {
                    var body: [String] = []
                    var cursor = index + 3
                    while cursor < lines.count, !lines[cursor].hasPrefix("```") {
                        body.append(lines[cursor])
                        cursor += 1
                    }
                    let path = String(line.dropFirst().dropLast(2))
                    blocks.append((path, body.joined(separator: "\n") + "\n", page.path))
                    index = cursor
                }
                index += 1
            }
        }
        return blocks
    }

    static func headingLevel(_ line: String) -> Int? {
        let level = line.prefix { $0 == "#" }.count
        guard (1...6).contains(level), line.dropFirst(level).first == " " else { return nil }
        return level
    }

    static func tables(in lines: [String]) -> [Table] {
        var tables: [Table] = []
        var index = 0
        var fenced = false
        while index < lines.count {
            if lines[index].hasPrefix("```") { fenced.toggle() }
            if !fenced, index + 1 < lines.count, lines[index].hasPrefix("|"), isDelimiterRow(lines[index + 1]) {
                let header = cells(lines[index]).map { $0.replacingOccurrences(of: "`", with: "") }
                var rows: [[String]] = []
                index += 2
                while index < lines.count, lines[index].hasPrefix("|") {
                    rows.append(cells(lines[index]))
                    index += 1
                }
                tables.append(Table(header: header, rows: rows))
                continue
            }
            index += 1
        }
        return tables
    }

    static func codeBlocks(in lines: [String], language: String?) -> [[String]] {
        var blocks: [[String]] = []
        var body: [String] = []
        var wanted: Bool?  // nil outside a block
        for line in lines {
            if let keep = wanted {
                if line.hasPrefix("```") {
                    if keep { blocks.append(body) }
                    wanted = nil
                } else {
                    body.append(line)
                }
            } else if line.hasPrefix("```") {
                body = []
                wanted = language.map { line.dropFirst(3) == $0 } ?? true
            }
        }
        return blocks
    }

    /// `| a | b \| c |` → ["a", "b | c"].
    static func cells(_ row: String) -> [String] {
        var cells: [String] = []
        var cell = ""
        var escaped = false
        for character in row.trimmingCharacters(in: .whitespaces).dropFirst() {
            if escaped {
                cell.append(character == "|" ? "|" : "\\\(character)")
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "|" {
                cells.append(cell.trimmingCharacters(in: .whitespaces))
                cell = ""
            } else {
                cell.append(character)
            }
        }
        return cells
    }

    static func isDelimiterRow(_ line: String) -> Bool {
        line.hasPrefix("|") && line.allSatisfy { "|-: ".contains($0) } && line.contains("-")
    }
}
