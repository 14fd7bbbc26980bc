import Foundation
import TestSupport
import Testing

/// The built `host` binary with real plugins, as a user runs it.
// A time limit: these tests start processes, and the first to need the out-of-tree Greeter
// package builds it with `swift build`.
@Suite(.timeLimit(.minutes(20))) struct HostRunTests {
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

        let host = try Command.start(
            try Repository.product("host"),
            [
                "--plugins", lib, "--control", scratch.file("host.sock"), "--state-dir", scratch.file("state"),
                "--trace", trace, "--log-format", "json",
            ])
        // File name order: libGreeter, libHelloC, libLogger, libUptime (all priority 0).
        let services = [
            "com.example.greeter", "com.example.hello-c", "dev.servicehost.logger", "dev.servicehost.uptime",
        ]
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
        let records = result.records
        // Each bad file refused by the loader, with its path and why (as `host inspect` says it).
        let refused = records.named(.loadFailed).filter { $0.level == "error" && $0.source == "loader" }
        #expect(
            refused.map { [$0.string("path"), $0.string("reason")] } == [
                ["\(lib)/empty.so", "not an ELF shared object (the file is empty)"],
                ["\(lib)/notes.so", "not an ELF shared object (it is text, starting \"just some text\\n\")"],
                ["\(lib)/random.so", "not an ELF shared object (it starts with bytes 01 20 3f 5e 7d 9c bb da)"],
            ], "\(records.text)")
        // Each service's own log lines, under its id.
        #expect(records.messages(from: "com.example.greeter").contains("greeter: didBecomeActive"))
        #expect(records.messages(from: "dev.servicehost.uptime").contains { $0.hasPrefix("up ") })
        #expect(!records.messages(from: "dev.servicehost.logger").isEmpty)
    }

    @Test func strict_exitsTwoBeforeLaunchingAnything() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Plugins.helloC(into: lib)
        try scratch.write("lib/empty.so", [])
        let trace = scratch.file("trace.jsonl")
        let result = try Command.run(
            try Repository.product("host"),
            [
                "--plugins", lib, "--control", scratch.file("host.sock"), "--state-dir", scratch.file("state"),
                "--strict", "--trace", trace, "--log-format", "json",
            ])
        #expect(result.status == 2)
        let records = result.records
        #expect(records.named(.loadFailed).map { $0.string("path") } == ["\(lib)/empty.so"], "\(records.text)")
        // The exit names the option that made the failure fatal.
        #expect(records.named(.hostLoadFailed).map { $0.level == "error" && $0.message.contains("--strict") } == [true])
        #expect(traceEvents(trace).isEmpty)
        #expect(records.messages(from: "com.example.hello-c").isEmpty)
    }

    @Test func aStateDirectoryOrTraceItCannotUse_stopsTheHostNamingThePath_beforeAnyPluginRuns() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Plugins.helloC(into: lib)
        let file = try scratch.write("not-a-folder", [])
        func run(_ extra: [String]) throws -> CommandResult {
            try Command.run(
                try Repository.product("host"),
                ["--plugins", lib, "--control", scratch.file("host.sock"), "--log-format", "json"] + extra)
        }
        let state = try run(["--state-dir", file])
        #expect(state.status == 2)
        let refused = state.records.named(.hostStateDirectoryFailed)
        #expect(
            refused.map { [$0.level, $0.source, $0.string("path")] } == [["error", "host", file]],
            "\(state.records.text)")
        #expect(refused.first?.int("errno") == Int(ENOTDIR))
        let missing = scratch.file("no-such-folder") + "/trace.jsonl"
        let trace = try run(["--state-dir", scratch.file("state"), "--trace", missing])
        #expect(trace.status == 2)
        let unwritable = trace.records.named(.hostTraceFailed)
        #expect(
            unwritable.map { [$0.level, $0.source, $0.string("path")] } == [["error", "host", missing]],
            "\(trace.records.text)")
        #expect(unwritable.first?.int("errno") == Int(ENOENT))
        for result in [state, trace] {
            #expect(result.records.messages(from: "com.example.hello-c").isEmpty)
            #expect(result.records.named(.hostReady).isEmpty)
        }
    }

    @Test func shutdownTimeout_exitsNamingTheServiceThatDidNotReturn() throws {
        let host = try RunningHost()
        try host.probe("hang", ["PROBE_ID=\"test.hang\"", "PROBE_HANG_KIND=SH_EVENT_WILL_TERMINATE"])
        // Long enough that a loaded machine still reaches willTerminate before the deadline.
        try host.start(["--shutdown-timeout", "3"])
        let result = host.stop()
        #expect(result.status == 1)
        let forced = result.records.named(.hostForcedExit)
        #expect(forced.map { [$0.level, $0.source] } == [["error", "host"]], "\(result.records.text)")
        #expect(
            forced.first?.fields as? [String: String] == [
                "cause": "timeout", "deadline": "3", "service": "test.hang",
                "event": "willTerminate",
            ])
    }

    @Test func secondSignal_exitsAtOnce() throws {
        let host = try RunningHost()
        let inside = host.scratch.file("inside-didEnterBackground")
        try host.probe(
            "hang",
            [
                "PROBE_ID=\"test.hang\"", "PROBE_HANG_KIND=SH_EVENT_DID_ENTER_BACKGROUND",
                "PROBE_MARK_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "PROBE_MARK_FILE=\"\(inside)\"",
            ])
        try host.start()
        host.process?.send(SIGTERM)
        // The hang begins inside didEnterBackground, which is only traced once it returns: the
        // probe marks a file as it enters, so the second signal surely finds it there.
        try #require(
            eventually { FileManager.default.fileExists(atPath: inside) }, "the host never entered didEnterBackground")
        let result = host.signal(SIGINT)
        #expect(result.status == 1)
        let forced = result.records.named(.hostForcedExit)
        #expect(forced.map { [$0.level, $0.source] } == [["error", "host"]], "\(result.records.text)")
        #expect(
            forced.first?.fields as? [String: String] == [
                "cause": "signal", "signal": "SIGINT", "service": "test.hang",
                "event": "didEnterBackground",
            ])
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
            (
                ["--plugins", "/tmp", "--log-level", "loud"],
                "host: --log-level: unknown level 'loud' (use error, warn, info or debug)"
            ),
            (["--frobnicate"], "host: unknown option --frobnicate"),
            (
                ["--plugins", "/tmp", "--shutdown-timeout=-1"],
                "host: --shutdown-timeout: '-1' is not a positive number of seconds"
            ),
        ] {
            // No plugin path and an XDG data folder without plugins: nothing to fall back to.
            let result = try Command.run(
                host, arguments, environment: ["SERVICEHOST_PLUGIN_PATH": "", "XDG_DATA_HOME": "/nonexistent-xdg"])
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.hasPrefix(message), "\(arguments): \(result.stderr)")
        }
        // Its own state folder: the user's default one is locked while a host of theirs runs
        // (scripts/run), and the start would stop there before the plugin folder.
        let scratch = try Scratch()
        let state = try scratch.folder("state", mode: 0o700)
        let missing = try Command.run(
            host, ["--plugins", "/nonexistent/servicehost", "--log-format", "json", "--state-dir", state])
        #expect(missing.status == 2)
        #expect(
            missing.records.named(.hostLoadFailed).map { $0.message.contains("/nonexistent/servicehost") } == [true],
            "\(missing.stderr)")
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
            #expect(result.records.named(.hostTerminated).count == 1)
        }
    }
}

extension HostRunTests {
    /// The signal thread starts before plugins load (it samples the hang watchdog too), before
    /// the shutdown coordinator exists: a SIGTERM it reads while a plugin loads is kept, and the
    /// host still launches, becomes active and then shuts down cleanly.
    @Test func sigtermWhileAPluginLoads_isKept_andShutsDownAfterTheLaunch() throws {
        let host = try RunningHost()
        let loading = host.scratch.file("loading")
        try host.probe(
            "slow", ["PROBE_ID=\"test.slow\"", "PROBE_CONSTRUCTOR_MARKER", "PROBE_CONSTRUCTOR_SLEEP_MS=1500"])
        try host.start(wait: false, environment: ["PROBE_MARKER": loading])
        try #require(eventually { FileManager.default.fileExists(atPath: loading) }, "the plugin was never loaded")
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let order = result.records.compactMap(\.event).filter {
            [LogEvent.hostShuttingDown.name, LogEvent.hostReady.name, LogEvent.hostTerminated.name].contains($0)
        }
        #expect(
            order == [LogEvent.hostShuttingDown.name, LogEvent.hostReady.name, LogEvent.hostTerminated.name],
            "\(result.records.text)")
        #expect(result.records.named(.hostShuttingDown).first?.string("by") == "SIGTERM")
        let lifecycle = [
            "willFinishLaunching", "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground",
            "willTerminate",
        ]
        #expect(host.events == lifecycle.map { $0 + " test.slow" })
    }
}
