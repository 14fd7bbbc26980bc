import Foundation
import Testing

@testable import HostCore

/// Paths a command line gives and prints back: made absolute for the host, printed as `./…`
/// again when under the working directory (`ctl deploy status`'s `from`).
@Suite struct WorkingDirectoryTests {
    let current = FileManager.default.currentDirectoryPath

    @Test func aRelativePath_goesAndComesBack() {
        let absolute = WorkingDirectory.absolute("./release-2/x")
        #expect(absolute == current + "/release-2/x")
        #expect(WorkingDirectory.relative(absolute) == "./release-2/x")
        #expect(WorkingDirectory.absolute("/srv/release-2") == "/srv/release-2")
    }

    @Test func aPathNotUnderTheWorkingDirectory_staysAbsolute() {
        // A sibling sharing the folder's name as a prefix, the folder itself, and elsewhere.
        #expect(WorkingDirectory.relative(current + "-sibling/x") == current + "-sibling/x")
        #expect(WorkingDirectory.relative(current) == current)
        #expect(WorkingDirectory.relative(current + "/") == current + "/")
        #expect(WorkingDirectory.relative("/nonexistent-root-folder/x") == "/nonexistent-root-folder/x")
        #expect(WorkingDirectory.relative("relative/x") == "relative/x")
    }
}
