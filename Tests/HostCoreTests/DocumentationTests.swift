import Foundation
import TestSupport
import Testing

/// The README and the DocC articles as one set of pages: a heading names one section (so a test
/// finds a table by its heading wherever it lives), every link of the README reaches a file, and
/// every article is reachable from its catalog's root page.
@Suite struct DocumentationTests {
    @Test func everyHeading_namesOneSection() throws {
        // DocC's root pages each have their own Overview and Topics.
        let headings = try Documentation.sections().map(\.heading).filter { !["Overview", "Topics"].contains($0) }
        let repeated = Dictionary(grouping: headings, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        #expect(repeated.isEmpty, "headings on two pages or twice on one: \(repeated)")
        #expect(headings.count > 50)
    }

    @Test func everyLinkOfTheReadme_reachesAFile() throws {
        let readme = try Documentation.page("README.md").lines.joined(separator: "\n")
        let targets = readme.matches(of: /\]\(([^)#]+)\)/).map { String($0.output.1) }.filter { !$0.contains("://") }
        #expect(targets.count >= 10)
        for target in targets {
            let exists = FileManager.default.fileExists(atPath: Repository.root.appendingPathComponent(target).path)
            #expect(exists, "README.md links to \(target), which is not there")
        }
    }

    @Test func everyArticle_isListedByItsCatalogsRootPage() throws {
        let pages = try Documentation.pages().filter { $0.path.contains(".docc/") }
        let folder = { (path: String) in URL(fileURLWithPath: path).deletingLastPathComponent().lastPathComponent }
        let stem = { (path: String) in URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent }
        for catalog in Set(pages.map { folder($0.path) }) {
            let articles = pages.filter { folder($0.path) == catalog }
            let rootTitle = "# ``\(stem(catalog))``"
            let root = try #require(articles.first { $0.lines.first == rootTitle }, "\(catalog) has no root page")
            let links = root.lines.compactMap { $0.firstMatch(of: /^- <doc:([A-Za-z]+)>$/)?.output.1 }
            let listed = Set(links.map(String.init))
            let files = Set(articles.filter { $0.path != root.path }.map { stem($0.path) })
            #expect(listed == files, "\(root.path) lists \(listed.sorted()), the catalog holds \(files.sorted())")
        }
    }
}
