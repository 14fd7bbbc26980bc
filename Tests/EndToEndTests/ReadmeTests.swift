import Foundation
import TestSupport
import Testing

/// What a reader copies from the README or a reference page (Documentation: README.md and the
/// DocC articles) builds: every code block introduced by a line naming
/// a file (`` `Sources/Greeter/servicehost.json`: ``) is written to that path and compiled or
/// parsed as that file. JSON parses strictly, a servicehost.json goes through
/// servicehost-metagen, Swift sources type-check against the built SDK together with the
/// entry generated from their manifest (so the class and its manifest must agree), C compiles
/// as a plugin, and Package.swift is loaded by SwiftPM.
@Suite(.timeLimit(.minutes(10))) struct ReadmeTests {
    @Test func everyFileTheReadmeShows_compilesOrParsesAsThatFile() throws {
        let blocks = try Documentation.fileBlocks()
        #expect(
            Set(blocks.map(\.path)).isSuperset(of: [
                "Package.swift", "Sources/Greeter/GreeterService.swift", "Sources/Greeter/servicehost.json", "hello.c",
                "lib/services.json", "Plugins/CarDisplay/servicehost.json", "Plugins/OfflineQueue/servicehost.json",
                "audit.c",
            ]), "\(blocks.map(\.path))")

        let scratch = try Scratch()
        // The package sits beside a checkout named ServiceHost, as the README's Package.swift expects.
        let root = try scratch.folder("MyService")
        try FileManager.default.createSymbolicLink(
            atPath: scratch.file("ServiceHost"), withDestinationPath: Repository.root.path)
        for block in blocks {
            let path = root + "/" + block.path
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try block.text.write(toFile: path, atomically: true, encoding: .utf8)
        }

        var generated: [String: String] = [:]  // target folder → its generated entry
        for block in blocks {
            let path = root + "/" + block.path
            switch (block.path as NSString).pathExtension {
            case "json":
                #expect(
                    (try? JSONSerialization.jsonObject(with: Data(block.text.utf8))) != nil, "\(block.path) is not JSON"
                )
                if block.path.hasSuffix("servicehost.json") {
                    let output = path + ".generated.swift"
                    let result = try Command.run(try Repository.product("servicehost-metagen"), [path, output])
                    #expect(result.status == 0, "\(block.path): \(result.stderr)")
                    generated[(path as NSString).deletingLastPathComponent] = output
                }
            case "c":
                #expect(throws: Never.self, "\(block.path)") {
                    try Command.compileC(path, to: scratch.file("lib\(block.path).so"))
                }
            case "swift" where block.path == "Package.swift":
                let result = try Command.run(
                    "/usr/bin/env", ["swift", "package", "dump-package", "--package-path", root])
                #expect(result.status == 0, "Package.swift: \(result.stderr)")
            default:
                break
            }
        }
        // Each target's Swift files with the entry generated from its manifest: the checks must pass.
        let targets = Set(
            blocks.filter { $0.path.hasSuffix(".swift") && $0.path.hasPrefix("Sources/") }
                .map { ((root + "/" + $0.path) as NSString).deletingLastPathComponent })
        #expect(!targets.isEmpty)
        for target in targets {
            let sources = try FileManager.default.contentsOfDirectory(atPath: target).filter { $0.hasSuffix(".swift") }
                .map { target + "/" + $0 }
            let result = try Command.run(
                "/usr/bin/env",
                [
                    "swiftc", "-typecheck", "-swift-version", "6", "-parse-as-library",
                    "-I", Repository.binDirectory.appendingPathComponent("Modules").path, "-I", Repository.abiInclude,
                ] + sources)
            #expect(generated[target] != nil, "\(target) has no servicehost.json in the documentation")
            #expect(result.status == 0, "\(target):\n\(result.stderr)")
        }
    }
}
