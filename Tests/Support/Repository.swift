import Foundation

/// Where the repository and the built products are, found from this file and the test binary.
public enum Repository {
    /// The repository's root folder.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `Sources/ServiceABI/include`, what a C service compiles against.
    public static var abiInclude: String { root.appendingPathComponent("Sources/ServiceABI/include").path }

    /// A file under `Tests/Fixtures`.
    public static func fixture(_ relative: String) -> String {
        root.appendingPathComponent("Tests/Fixtures").appendingPathComponent(relative).path
    }

    /// The folder holding the built `host` and plugin products: the test binary's own folder
    /// (SwiftPM's `--show-bin-path`), never a hard-coded `.build/debug`.
    public static let binDirectory: URL = {
        var url = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
        ).deletingLastPathComponent()
        // Linux test binaries live in <bin>/ServiceHostPackageTests.xctest; step out of a bundle folder.
        while url.pathExtension == "xctest" || url.lastPathComponent == "Contents" || url.lastPathComponent == "MacOS" {
            url.deleteLastPathComponent()
        }
        return url
    }()

    /// A built product in the bin folder; a test fails clearly when `swift build` did not make it.
    public static func product(_ name: String) throws -> String {
        let path = binDirectory.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else {
            throw TestFailure("\(path) is missing: run `swift build` before `swift test` (scripts/test does)")
        }
        return path
    }
}

/// A test precondition that did not hold.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
