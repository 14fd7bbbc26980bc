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
            host,
            [
                "--plugins", lib, "--control", scratch.file("host.sock"), "--state-dir", scratch.file("state"),
                "--trace", scratch.file("t.jsonl"),
            ],
            environment: ["PROBE_MARKER": marker])
        #expect(eventually { FileManager.default.fileExists(atPath: marker) })
        running.send(SIGTERM)
        #expect(running.wait().status == 0)
    }

    @Test func showsWhatAServiceAnswers_andWhetherItIsLazy() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        let events = "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_REQUEST))"
        let geo = try Plugins.probe(
            lib + "/geo.so",
            ["PROBE_ID=\"test.geo\"", events, "PROBE_ANSWERS=\"geo.locate\"", "PROBE_FLAGS=SH_META_SERVICE_LAZY"])
        let plain = try Plugins.probe(lib + "/plain.so", ["PROBE_ID=\"test.plain\""])
        let host = try Repository.product("host")
        let json = try Command.run(host, ["inspect", "--json", geo, plain])
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
        let files = try #require(parsed as? [[String: Any]], "\(json.stdout)")
        let services = files.compactMap { ($0["services"] as? [[String: Any]])?.first }
        #expect(services.map { $0["answers"] as? [String] } == [["geo.locate"], []])
        #expect(services.map { $0["activation"] as? String } == ["lazy", "eager"])
        let text = try Command.run(host, ["inspect", geo, plain]).stdout
        #expect(text.contains("service test.geo\n"), "\(text)")
        #expect(text.contains("\n    answers:   geo.locate\n    activation: lazy\n"), "\(text)")
        // An eager service that answers nothing shows neither line, as before.
        let plainBlock = try #require(text.components(separatedBy: "service test.plain\n").last)
        #expect(!plainBlock.contains("answers:") && !plainBlock.contains("activation:"), "\(text)")
    }

    /// Issue 42: a service's settings schema, a line per setting in the text and the schema's
    /// keywords in the JSON; a service without one shows no `settings` line and `null`.
    @Test func showsASettingsSchema_inTheTextAndTheJSON() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        let typed = try Plugins.probe(lib + "/typed.so", ["PROBE_ID=\"test.typed\""] + SettingsSchemaTests.schema)
        let plain = try Plugins.probe(lib + "/plain.so", ["PROBE_ID=\"test.plain\""])
        let host = try Repository.product("host")
        let json = try Command.run(host, ["inspect", "--json", typed, plain])
        #expect(json.status == 0, "\(json.stderr)")
        let files = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let services = files.compactMap { ($0["services"] as? [[String: Any]])?.first }
        let schema = try #require(services.first?["settingsSchema"] as? [String: Any], "\(json.stdout)")
        #expect(schema["type"] as? String == "object")
        let properties = try #require(schema["properties"] as? [String: [String: Any]])
        #expect(properties["level"]?["enum"] as? [String] == ["info", "debug"])
        #expect(properties["level"]?["default"] as? String == "info")
        #expect(properties["host"]?["type"] as? String == "string" && properties["host"]?["maxLength"] as? Int == 8)
        #expect(services.last?["settingsSchema"] is NSNull, "\(json.stdout)")
        let text = try Command.run(host, ["inspect", typed, plain]).stdout
        #expect(
            text.contains(
                "\n    settings:\n      host: string, at most 8 characters\n"
                    + "      level: one of \"info\", \"debug\"; default \"info\"\n"), "\(text)")
        let plainBlock = try #require(text.components(separatedBy: "service test.plain\n").last)
        #expect(!plainBlock.contains("settings:"), "\(text)")
    }

    /// Issue 36 item 14: a file name or a metadata string with a newline (or another control
    /// character) cannot forge a line of `host inspect`'s text: both are shown escaped.
    @Test func controlCharactersInANameOrMetadata_doNotForgeLines() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        let source = try scratch.write(
            "forged.c",
            Array(
                #"""
                #include <servicehost.h>
                SH_META_ATTRIBUTES static const sh_meta_plugin plugin_meta = {
                    {sizeof(sh_meta_plugin), SH_META_PLUGIN_VERSION, SH_META_MAGIC, SH_META_KIND_PLUGIN},
                    SH_ABI_VERSION, SH_ABI_VERSION_MIN, "c", ""};
                SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) { (void)offer; return 0; }
                SH_SERVICE_METADATA(s0, "test.real", "Real\n  service test.forged-by-name", "1.0\r\xc2\x9b",
                    SH_EVENTS_LIFECYCLE, 0);
                """#.utf8))
        // lib/x<LF>  service test.forged-by-path<LF>.so
        let name = lib + "/x\n  service test.forged-by-path\n.so"
        _ = try Command.compileC(source, to: name)
        let result = try Command.run(try Repository.product("host"), ["inspect", lib])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        // One service line, the real one; no line the name or the metadata made.
        #expect(lines.filter { $0.hasPrefix("  service ") } == ["  service test.real"], "\(result.stdout)")
        #expect(lines.first == "\(lib)/x\\x0a  service test.forged-by-path\\x0a.so", "\(result.stdout)")
        #expect(lines.contains(#"    name:     Real\u{a}  service test.forged-by-name"#), "\(result.stdout)")
        #expect(lines.contains(#"    version:  1.0\u{d}\u{9b}"#), "\(result.stdout)")
        #expect(!result.stdout.unicodeScalars.contains { $0 == "\r" || $0.value == 0x9B }, "\(result.stdout)")
        // The JSON keeps the path escaped the same way (its own escaping is JSON's).
        let json = try Command.run(try Repository.product("host"), ["inspect", "--json", lib])
        let files = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(files?.first?["path"] as? String == "\(lib)/x\\x0a  service test.forged-by-path\\x0a.so")
    }

    @Test func badFilesGetTheLoadersReason_andExitOne() throws {
        let scratch = try Scratch()
        let bad = try scratch.write("bad.so", Array("hello".utf8))
        let result = try Command.run(try Repository.product("host"), ["inspect", bad])
        #expect(result.status == 1)
        #expect(result.stdout.contains("not loadable: not an ELF shared object (it is text, starting \"hello\")"))
    }
}
