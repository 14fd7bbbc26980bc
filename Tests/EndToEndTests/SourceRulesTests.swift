import Foundation
import TestSupport
import Testing

/// Rules about the code itself that a compiler does not check.
@Suite struct SourceRulesTests {
    /// `Synchronization.Mutex` locks with futex calls ThreadSanitizer cannot see, so every value
    /// it guards is reported as a race by `scripts/test --sanitize thread` (CI failed on
    /// ServiceKit's `TestAttachments` that way). HostCore and ServiceKit each have a `Locked`
    /// built on `pthread_mutex_t`; this keeps a `Mutex` from coming back.
    @Test func noSwiftFileGuardsStateWithSynchronizationMutex() throws {
        var uses: [String] = []
        for folder in ["Sources", "Plugins", "Tests"] {
            let base = Repository.root.appendingPathComponent(folder)
            guard let files = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else {
                throw TestFailure("cannot list \(base.path)")
            }
            for case let file as URL in files where file.pathExtension == "swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false)[0]
                    if code.contains(/\bMutex\s*[<(]/) { uses.append("\(file.path.dropFirst(Repository.root.path.count + 1)):\(number + 1)") }
                }
            }
        }
        #expect(uses == [], "use Locked (pthread_mutex_t) instead")
    }
}
