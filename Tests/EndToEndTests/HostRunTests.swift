import Foundation
import Testing
import TestSupport

/// The built `host` binary with real plugins, as a user runs it.
@Suite struct HostRunTests {
    @Test func launchesEveryServiceInOrder_reportsBadFiles_andShutsDownInReverse() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        for plugin in try Plugins.bundled() + [try Plugins.greeter.get()] {
            try scratch.copy(plugin, to: "lib/" + URL(fileURLWithPath: plugin).lastPathComponent)
        }
        try Plugins.helloC(into: lib)
        try scratch.write("lib/empty.so", [])
        try scratch.write("lib/notes.so", Array("just some text\n".utf8))
        try scratch.write("lib/random.so", (0..<256).map { UInt8(truncatingIfNeeded: $0 * 31 + 1) })
        let trace = scratch.file("trace.jsonl")

        let host = try Command.start(try Repository.product("host"), ["--plugins", lib, "--control", scratch.file("host.sock"), "--state-dir", scratch.file("state"), "--trace", trace])
        // File name order: libGreeter, libHelloC, libLogger, libUptime (all priority 0).
        let services = ["com.example.greeter", "com.example.hello-c", "dev.servicehost.logger", "dev.servicehost.uptime"]
        let launch = ["willFinishLaunching", "didFinishLaunching", "didBecomeActive"].flatMap { event in
            services.map { "\(event) \($0)" }
        }
        let active = eventually { traceEvents(trace).count >= launch.count }
        host.send(SIGTERM)
        let result = host.wait()
        #expect(active, "the host never became active; stderr:\n\(result.stderr)")
        #expect(result.status == 0, "stderr:\n\(result.stderr)")

        let shutdown = ["willResignActive", "didEnterBackground", "willTerminate"].flatMap { event in
            services.reversed().map { "\(event) \($0)" }
        }
        #expect(traceEvents(trace) == launch + shutdown)
        for bad in ["empty.so: not an ELF shared object (the file is empty)",
                    "notes.so: not an ELF shared object (it is text, starting \"just some text\\n\")",
                    "random.so: not an ELF shared object (it starts with bytes 01 20 3f 5e 7d 9c bb da)"] {
            #expect(result.stderr.contains("error [loader] \(lib)/\(bad)"), "missing: \(bad)\n\(result.stderr)")
        }
        // Each service's own log line, prefixed with its id.
        #expect(result.stderr.contains("info [com.example.greeter] greeter: didBecomeActive"))
        #expect(result.stderr.contains("info [dev.servicehost.uptime] up "))
        #expect(result.stderr.contains("info [dev.servicehost.logger]"))
    }

    @Test func strict_exitsTwoBeforeLaunchingAnything() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Plugins.helloC(into: lib)
        try scratch.write("lib/empty.so", [])
        let trace = scratch.file("trace.jsonl")
        let result = try Command.run(try Repository.product("host"), ["--plugins", lib, "--control", scratch.file("host.sock"), "--state-dir", scratch.file("state"), "--strict", "--trace", trace])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--strict: 1 plugin file(s) or service(s) failed to load; exiting before launch"))
        #expect(traceEvents(trace).isEmpty)
        #expect(!result.stderr.contains("hello-c: event"))
    }

    @Test func shutdownTimeout_exitsNamingTheServiceThatDidNotReturn() throws {
        let host = try RunningHost()
        try host.probe("hang", ["PROBE_ID=\"test.hang\"", "PROBE_HANG_KIND=SH_EVENT_WILL_TERMINATE"])
        try host.start(["--shutdown-timeout", "0.5"])
        let result = host.stop()
        #expect(result.status == 1)
        #expect(result.stderr.contains(
            "forced exit: shutdown took longer than 0.5 s; service test.hang has not returned from willTerminate"),
            "\(result.stderr)")
    }

    @Test func secondSignal_exitsAtOnce() throws {
        let host = try RunningHost()
        try host.probe("hang", ["PROBE_ID=\"test.hang\"", "PROBE_HANG_KIND=SH_EVENT_DID_ENTER_BACKGROUND"])
        try host.start()
        host.process?.send(SIGTERM)
        // The hang begins inside didEnterBackground, which is only traced once it returns:
        // wait for willResignActive, then give the main thread a moment to enter the service.
        #expect(eventually { host.events.count == 4 })
        usleep(200_000)
        let result = host.signal(SIGINT)
        #expect(result.status == 1)
        #expect(result.stderr.contains(
            "forced exit: second signal (SIGINT) during shutdown; service test.hang has not returned from didEnterBackground"),
            "\(result.stderr)")
    }

    @Test func helpVersionAndUsageErrors() throws {
        let host = try Repository.product("host")
        let help = try Command.run(host, ["--help"])
        #expect(help.status == 0 && help.stdout.contains("host --plugins DIR"))
        let version = try Command.run(host, ["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("servicehost "))
        for (arguments, message) in [
            ([], "host: no plugin directory: pass --plugins DIR"),
            (["--plugins"], "host: --plugins needs a value"),
            (["--plugins", "/tmp", "--log-level", "loud"], "host: --log-level: unknown level 'loud' (use error, warn, info or debug)"),
            (["--frobnicate"], "host: unknown option --frobnicate"),
            (["--plugins", "/tmp", "--shutdown-timeout=-1"], "host: --shutdown-timeout: '-1' is not a positive number of seconds"),
        ] {
            // No plugin path and an XDG data folder without plugins: nothing to fall back to.
            let result = try Command.run(host, arguments, environment: ["SERVICEHOST_PLUGIN_PATH": "", "XDG_DATA_HOME": "/nonexistent-xdg"])
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.hasPrefix(message), "\(arguments): \(result.stderr)")
        }
        let missing = try Command.run(host, ["--plugins", "/nonexistent/servicehost"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("plugin directory /nonexistent/servicehost: No such file or directory"))
    }
}

extension HostRunTests {
    /// A SIGTERM at any moment after start-up began is honoured: it waits, blocked, for the
    /// signal thread, and never hits a window where the host ignores it.
    @Test func sigtermRightAfterStartup_isNeverLost() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        for _ in 0..<10 {
            try host.start(wait: false)
            // The socket exists once signals are blocked and the plugins loaded.
            #expect(eventually { FileManager.default.fileExists(atPath: host.control) })
            let result = host.stop()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("terminated cleanly"))
        }
    }
}
