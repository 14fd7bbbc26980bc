import Foundation
import TestSupport

/// The real plugins the end-to-end tests load: the bundled ones from the build, and the
/// out-of-tree ones built here exactly as the README tells a third party to.
enum Plugins {
    /// `libLogger.so` and `libUptime.so` from `swift build`.
    static func bundled() throws -> [String] {
        try ["libLogger.so", "libUptime.so"].map(Repository.product)
    }

    /// The out-of-tree Swift service package, built once per test run with its own scratch path.
    static let greeter: Result<String, TestFailure> = Result {
        let package = Repository.fixture("ThirdPartyService")
        let scratch = Repository.root.appendingPathComponent(".build-fixtures/third-party").path
        var build = try Command.run(
            "/usr/bin/env", ["swift", "build", "--package-path", package, "--scratch-path", scratch])
        if build.status != 0 {
            // SwiftPM keeps the dependency's build plan; files added to or removed from
            // ServiceHost since the cached build leave it stale ("missing inputs"). Once afresh.
            try? FileManager.default.removeItem(atPath: scratch)
            build = try Command.run(
                "/usr/bin/env", ["swift", "build", "--package-path", package, "--scratch-path", scratch])
        }
        guard build.status == 0 else {
            throw TestFailure("building \(package) failed:\n\(build.stdout)\n\(build.stderr)")
        }
        let bin = try Command.run(
            "/usr/bin/env", ["swift", "build", "--package-path", package, "--scratch-path", scratch, "--show-bin-path"])
        return bin.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/libGreeter.so"
    }.mapError { $0 as? TestFailure ?? TestFailure("\($0)") }

    /// The out-of-tree C service, compiled into `directory`.
    @discardableResult
    static func helloC(into directory: String) throws -> String {
        try Command.compileC(Repository.fixture("HelloC/hello.c"), to: directory + "/libHelloC.so")
    }

    /// Overwrites `target` in place (same inode, as `cp` and package managers do) with `source`.
    static func overwriteInPlace(_ target: String, with source: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        guard let handle = FileHandle(forWritingAtPath: target) else {
            throw TestFailure("cannot open \(target) for writing")
        }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    /// The configurable C probe, compiled into `path`.
    @discardableResult
    static func probe(_ path: String, _ defines: [String]) throws -> String {
        try Command.compileC(Repository.fixture("CPlugins/probe.c"), to: path, defines: defines)
    }
}

/// The deliveries of a `--trace` file, as "event service" strings.
func traceEvents(_ path: String) -> [String] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap { line in
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            object["completion"] == nil,  // completion lines record answers, not deliveries
            let event = object["event"] as? String, let service = object["service"] as? String
        else { return nil }
        return "\(event) \(service)"
    }
}
