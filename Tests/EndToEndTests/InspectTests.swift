import Foundation
import TestSupport
import Testing

/// `host inspect` reads static metadata and never runs plugin code.
// A time limit: these tests start processes, and the first to need the out-of-tree Greeter
// package builds it with `swift build`.
@Suite(.timeLimit(.minutes(20))) struct InspectTests {
    @Test func printsEveryServicesMetadata() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        for plugin in try Plugins.bundled() + [try Plugins.greeter.get()] {
            try scratch.copy(plugin, to: "lib/" + URL(fileURLWithPath: plugin).lastPathComponent)
        }
        try Plugins.helloC(into: lib)
        let result = try Command.run(try Repository.product("host"), ["inspect", lib])
        #expect(result.status == 0, "\(result.stderr)")
        let text = result.stdout
        for expected in [
            "service com.example.greeter", "version:  2.1.0", "service com.example.hello-c",
            "service dev.servicehost.logger", "service dev.servicehost.uptime", "built with c",
            "events:   willFinishLaunching, didFinishLaunching, didBecomeActive, willResignActive, didEnterBackground, willEnterForeground, willTerminate",
        ] {
            #expect(text.contains(expected), "missing \(expected) in:\n\(text)")
        }
        #expect(text.contains("built with swift 6."), "the Swift toolchain is recorded:\n\(text)")

        let json = try Command.run(try Repository.product("host"), ["inspect", "--json", lib + "/libHelloC.so"])
        let array = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [[String: Any]]
        let services = array[0]["services"] as! [[String: Any]]
        #expect(array[0]["valid"] as? Bool == true)
        #expect(services[0]["id"] as? String == "com.example.hello-c")
        #expect(
            services[0]["events"] as? [String] == [
                "willFinishLaunching", "didFinishLaunching", "didBecomeActive",
                "willResignActive", "didEnterBackground", "willEnterForeground", "willTerminate",
            ])
    }

    @Test func neverRunsPluginCode_whileLoadingDoes() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Plugins.probe(lib + "/marker.so", ["PROBE_ID=\"test.marker\"", "PROBE_CONSTRUCTOR_MARKER"])
        let marker = scratch.file("constructor-ran")
        let host = try Repository.product("host")

        let inspected = try Command.run(host, ["inspect", lib + "/marker.so"], environment: ["PROBE_MARKER": marker])
        #expect(inspected.status == 0)
        #expect(inspected.stdout.contains("service test.marker"))
        #expect(!FileManager.default.fileExists(atPath: marker), "inspect ran the plugin's ELF constructor")

        // The control: loading the same file does run its constructor, so the check above can fail.
        let running = try Command.start(
            host, ["--plugins", lib, "--control", scratch.file("host.sock"), "--state-dir", scratch.file("state"), "--trace", scratch.file("t.jsonl")],
            environment: ["PROBE_MARKER": marker])
        #expect(eventually { FileManager.default.fileExists(atPath: marker) })
        running.send(SIGTERM)
        #expect(running.wait().status == 0)
    }

    @Test func badFilesGetTheLoadersReason_andExitOne() throws {
        let scratch = try Scratch()
        let bad = try scratch.write("bad.so", Array("hello".utf8))
        let result = try Command.run(try Repository.product("host"), ["inspect", bad])
        #expect(result.status == 1)
        #expect(result.stdout.contains("not loadable: not an ELF shared object (it is text, starting \"hello\")"))
    }
}
