import Foundation
import TestSupport
import Testing

/// What a plugin author meets first (issue 16): `host new-service` scaffolds that build, load
/// and pass their TestHost test the first time, and builds that fail, naming the method and
/// servicehost.json, when a handler and the manifest disagree.
// Serialized and with a generous limit: each test runs `swift build` of an out-of-tree
// package (the first one builds the SDK too) on a machine shared with other builds.
@Suite(.serialized, .timeLimit(.minutes(30))) struct AuthoringTests {
    /// `swift build --target TARGET` of Tests/Fixtures/TypoServices.
    static func buildTypoFixture(_ target: String) throws -> (status: Int32, output: String) {
        let result = try swiftPM(
            "build", package: Repository.fixture("TypoServices"), scratch: "typo-services",
            ["--target", target])
        return (result.status, result.stdout + result.stderr)
    }

    /// `swift VERB` of `package` with a scratch folder under .build-fixtures, one per set of SDK
    /// source files: SwiftPM keeps a path dependency's file list in the scratch folder, so a file
    /// added to ServiceKit after the first build was missing from the next one ("cannot find
    /// type … in scope").
    static func swiftPM(_ verb: String, package: String, scratch: String, _ extra: [String] = []) throws
        -> CommandResult
    {
        let scratchPath = Repository.root.appendingPathComponent(".build-fixtures/\(scratch)-\(sdkFileSet)").path
        let arguments = ["swift", verb, "--package-path", package, "--scratch-path", scratchPath] + extra
        let first = try Command.run("/usr/bin/env", arguments)
        // Once more when SwiftPM itself crashed (the Swift runtime's crash banner, killed by a
        // signal): swift-package 6.3 has segfaulted planning a build (`BuildPlan.init`, in
        // Foundation's string compare, on another thread in libdispatch's event loop) before
        // compiling anything. That is the toolchain's failure, not the package's; a package
        // that fails to build or test exits 1 and is reported as it is.
        guard first.status > 128, (first.stdout + first.stderr).contains("*** Program crashed") else { return first }
        print("AuthoringTests: `swift \(verb)` crashed (status \(first.status)); running it once more")
        return try Command.run("/usr/bin/env", arguments)
    }

    /// A short hash of the names of the SDK's source files (FNV-1a), stable across runs.
    static let sdkFileSet: String = {
        var names: [String] = []
        for module in [
            "ServiceKit", "ServiceJSON", "ServiceABI", "ServiceVocabulary", "Locking", "ServiceMetadata",
            "servicehost-metagen",
        ] {
            let folder = Repository.root.appendingPathComponent("Sources/\(module)")
            let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
            names += files.map { module + "/" + $0 }
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in names.sorted().joined(separator: "\n").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }()

    /// The compiler's error lines.
    static func errors(_ output: String) -> [Substring] {
        output.split(separator: "\n").filter { $0.contains("error: ") && !$0.hasPrefix(" ") }
    }

    @Test func misspelledHandler_failsTheBuild_namingTheMethodAndTheManifest() throws {
        let (status, output) = try Self.buildTypoFixture("Misspelled")
        #expect(status != 0, "the build passed:\n\(output)")
        let errors = Self.errors(output)
        // Adopting the protocol with the method misspelled: the error names the method and the manifest.
        #expect(
            errors.contains {
                $0.contains("MisspelledService.swift")
                    && $0.contains("func continueUserActivity(_ activity: UserActivity) -> Bool")
                    && $0.contains("servicehost.json")
            }, "\(output)")
        // Listing the event without the protocol: the error is at the service's line in servicehost.json.
        #expect(
            errors.contains {
                $0.contains("Misspelled/servicehost.json:4:") && $0.contains("continueUserActivity")
                    && $0.contains("func continueUserActivity(_ activity: UserActivity) -> Bool")
            }, "\(output)")
    }

    @Test func handlerMissingFromTheManifest_failsTheBuild_namingTheMethodAndTheManifest() throws {
        let (status, output) = try Self.buildTypoFixture("Unlisted")
        #expect(status != 0, "the build passed:\n\(output)")
        #expect(
            Self.errors(output).contains {
                $0.contains("Unlisted/servicehost.json:3:") && $0.contains("func open(_ url: OpenURL) -> Bool")
                    && $0.contains("does not list the event \"openURL\"")
            }, "\(output)")
    }

    @Test func targetOutsideADynamicLibrary_buildsWithAWarningNamingTheFix() throws {
        // The build plugin speaks when SwiftPM plans the build: a newer manifest makes it plan again.
        try FileManager.default.setAttributes(
            [.modificationDate: Date()],
            ofItemAtPath: Repository.fixture("TypoServices/Package.swift"))
        let (status, output) = try Self.buildTypoFixture("NotDynamic")
        #expect(status == 0, "\(output)")
        #expect(
            output.split(separator: "\n").contains {
                $0.contains("warning: ") && $0.contains("target 'NotDynamic'")
                    && $0.contains("no dynamic library product holds it")
                    && $0.contains(".library(name: \"NotDynamic\", type: .dynamic")
            }, "\(output)")
    }

    @Test func newService_swift_buildsPassesItsTestHostTest_andLoads() throws {
        // A fixed folder, so the scratch build is reused between runs.
        let folder = Repository.root.appendingPathComponent(".build-fixtures/scaffold/Scaffolded").path
        try? FileManager.default.removeItem(atPath: folder)
        let made = try Command.run(
            try Repository.product("host"),
            ["new-service", "Scaffolded", "--id", "com.example.scaffolded", "--dir", folder])
        #expect(made.status == 0, "\(made.stderr)")
        // The scaffold's own test (TestHost, no host binary) builds and passes.
        let test = try Self.swiftPM("test", package: folder, scratch: "scaffold-swift")
        #expect(test.status == 0, "\(test.stdout)\n\(test.stderr)")
        #expect(
            test.stdout.contains("launch_logsAndOpensItsOwnURLs") && test.stdout.contains("passed"), "\(test.stdout)")
        let build = try Self.swiftPM("build", package: folder, scratch: "scaffold-swift")
        #expect(build.status == 0, "\(build.stdout)\n\(build.stderr)")
        let bin = try Self.swiftPM("build", package: folder, scratch: "scaffold-swift", ["--show-bin-path"])

        let host = try RunningHost()
        try host.scratch.copy(
            bin.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/libScaffolded.so",
            to: "lib/libScaffolded.so")
        try host.start()
        let (status, reply) = try host.ctlJSON("open", "scaffolded://item/42")
        let result = host.stop()
        #expect(status == 0)
        #expect(reply["handledBy"] as? String == "com.example.scaffolded", "\(reply)\n\(result.stderr)")
        #expect(
            result.records.messages(from: "com.example.scaffolded").contains("scaffolded: open scaffolded://item/42"))
    }

    @Test func newService_c_buildsWithItsScript_andLoads() throws {
        let host = try RunningHost()
        let folder = host.scratch.file("HelloScaffold")
        let made = try Command.run(
            try Repository.product("host"),
            ["new-service", "HelloScaffold", "--c", "--id", "com.example.hello-scaffold", "--dir", folder])
        #expect(made.status == 0, "\(made.stderr)")
        let build = try Command.run(folder + "/build.sh", [])
        #expect(build.status == 0, "\(build.stderr)")
        try host.scratch.copy(folder + "/lib/libHelloScaffold.so", to: "lib/libHelloScaffold.so")
        try host.start()
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(traceEvents(host.tracePath).contains("didBecomeActive com.example.hello-scaffold"))
        #expect(
            result.records.messages(from: "com.example.hello-scaffold").contains {
                $0.hasPrefix("helloscaffold: event 3")
            })
    }

    @Test func newService_refusesABadName_aTakenFolder_andABadID() throws {
        let scratch = try Scratch()
        let host = try Repository.product("host")
        let badName = try Command.run(host, ["new-service", "2fast", "--dir", scratch.file("a")])
        #expect(badName.status == 2 && badName.stderr.contains("\"2fast\" is not a valid NAME"))
        let badID = try Command.run(host, ["new-service", "Fine", "--id", "nodots", "--dir", scratch.file("b")])
        #expect(badID.status == 2 && badID.stderr.contains("--id \"nodots\" is not a reverse-DNS id"))
        _ = try scratch.folder("taken")
        try scratch.write("taken/file", [])
        let taken = try Command.run(host, ["new-service", "Fine", "--dir", scratch.file("taken")])
        #expect(taken.status == 1 && taken.stderr.contains("already exists and is not empty"))
    }
}
