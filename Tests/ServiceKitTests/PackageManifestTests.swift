import Foundation
import TestSupport
import Testing

/// ServiceKitTesting depends on HostCore, which carries unsafe flags (Package.swift's
/// hostCodegen). SwiftPM accepts a version-based dependency with unsafe flags only when that
/// dependency's manifest says swift-tools-version 6.2 or later (SwiftPM 6.2 relaxed the rule
/// for those manifests alone): below it, a plugin package could not depend on ServiceKitTesting
/// by version.
@Suite struct PackageManifestTests {
    @Test func theToolsVersion_letsAPackageDependOnServiceKitTestingByVersion() throws {
        let manifest = try String(contentsOf: Repository.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let first = try #require(manifest.split(separator: "\n").first)
        let prefix = "// swift-tools-version:"
        #expect(first.hasPrefix(prefix))
        let version = first.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)
        let parts = version.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count >= 2)
        #expect(parts.lexicographicallyPrecedes([6, 2]) == false, "swift-tools-version \(parts) is below 6.2")
    }
}
