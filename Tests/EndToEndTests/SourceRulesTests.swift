import Foundation
import TestSupport
import Testing

/// Rules about the code itself that a compiler does not check.
@Suite struct SourceRulesTests {
    /// `Synchronization.Mutex` locks with futex calls ThreadSanitizer cannot see, so every value
    /// it guards is reported as a race by `scripts/test --sanitize thread` (CI failed on
    /// ServiceKit's `TestAttachments` that way). HostCore and ServiceKit share one `Locked` (Locking;
    /// MQTTBridge has a copy) built on `pthread_mutex_t`; this keeps a `Mutex` from coming back.
    @Test func noSwiftFileGuardsStateWithSynchronizationMutex() throws {
        let uses = try Self.codeLines(in: ["Sources", "Plugins", "Tests"]).filter { $0.code.contains(/\bMutex\s*[<(]/) }
        #expect(uses.map(\.place) == [], "use Locked (pthread_mutex_t) instead")
    }

    /// Log events are declared once (`LogEvent`): a host log call names a case, never a string
    /// a test or a log shipper would have to retype (the `event:` parameter takes a `LogEvent`;
    /// this keeps `LogEvent(rawValue: "…")` and `event: "…"` out too).
    @Test func noHostLogCallNamesItsEventWithAString() throws {
        let literal = /event:\s*"|LogEvent\(rawValue:\s*"/
        let uses = try Self.codeLines(in: ["Sources/HostCore", "Sources/host"]).filter { $0.code.contains(literal) }
        #expect(
            uses.map(\.place) == [],
            "name a LogEvent case (Sources/LogEvents/LogEvent.swift), adding a row for a new one")
    }

    /// A system call interrupted by a signal is called again by one helper, `retryingOnInterrupt`
    /// (HostCore/System; the bridge and the tests' support, which do not link the host, have a
    /// copy each): no loop of its own on `EINTR` (`if errno == EINTR { continue }`,
    /// `while call() < 0 && errno == EINTR {}`). Code that treats `EINTR` as "try later" is fine.
    @Test func noHandWrittenLoopRetriesOnEINTR() throws {
        let lines = try Self.codeLines(in: ["Sources", "Plugins", "Tests/Support"])
        var loops: [String] = []
        for (index, line) in lines.enumerated()
        where line.code.contains("EINTR") && !line.place.contains("RetryingOnInterrupt.swift") {
            let next = index + 1 < lines.count && lines[index + 1].file == line.file ? lines[index + 1].code : ""
            let isLoop = line.code.contains(/\bwhile\b|\bcontinue\b/) || next.contains(/^\s*continue\b/)
            if isLoop { loops.append(line.place) }
        }
        #expect(loops == [], "call the system call through retryingOnInterrupt")
    }

    /// One line of Swift code (what precedes a `//` comment) in `folders`.
    struct CodeLine {
        let file: String
        let number: Int
        let code: Substring
        var place: String { "\(file):\(number)" }
    }

    /// The code lines of every Swift file under `folders`, file by file.
    static func codeLines(in folders: [String]) throws -> [CodeLine] {
        var lines: [CodeLine] = []
        for folder in folders {
            let base = Repository.root.appendingPathComponent(folder)
            guard let files = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else {
                throw TestFailure("cannot list \(base.path)")
            }
            for case let file as URL in files where file.pathExtension == "swift" {
                let name = String(file.path.dropFirst(Repository.root.path.count + 1))
                let text = try String(contentsOf: file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false)[0]
                    lines.append(CodeLine(file: name, number: number + 1, code: code))
                }
            }
        }
        return lines
    }
}
