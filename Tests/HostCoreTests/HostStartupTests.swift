import Foundation
import TestSupport
import Testing

@testable import HostCore

/// The `host` run's start (HostStartup), in process: each step in order, and where the start
/// stops with what it logged. The executable's own tests (HostRunTests, ServiceStartTests,
/// SystemdTests, …) run the same start through the binary.
// Ten minutes, as the other main-actor suites: the limit counts from the test's start, and its
// tests wait for the main actor behind every other main-actor suite of the run (all seven
// failed at 320 s in a full run on a loaded machine, each under a second alone).
@MainActor
@Suite(.timeLimit(.minutes(10))) struct HostStartupTests {
    let scratch: Scratch
    let lib: String
    let logPath: String

    init() throws {
        scratch = try Scratch()
        lib = try scratch.folder("lib")
        logPath = scratch.file("log.jsonl")
    }

    /// Options for a run of the plugins in `lib`, with its own state folder and socket.
    private func options(_ extra: [String] = []) throws -> RunOptions {
        try RunOptions.parse(
            ["--plugins", lib, "--state-dir", scratch.file("state"), "--control", scratch.file("host.sock")] + extra)
    }

    /// A start logging JSON lines to the test's log file, leaving the process's signals alone.
    private func startup(_ options: RunOptions) -> HostStartup {
        let descriptor = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let log = Log(level: .debug, format: .json, descriptor: descriptor)
        return HostStartup(options, log: log, handlesSignals: false)
    }

    private func records() throws -> [LogRecord] {
        LogRecord.parse(try String(contentsOfFile: logPath, encoding: .utf8))
    }

    private func compile(_ fixture: String, _ name: String, _ defines: [String]) throws {
        try Command.compileC(Repository.fixture(fixture), to: lib + "/" + name, defines: defines)
    }

    @Test func aStart_loadsLaunchesAndSaysReady_withTheSocketBoundButNotServing() throws {
        try compile("CPlugins/probe.c", "a.so", ["PROBE_ID=\"test.a\""])
        let start = startup(try options())
        let started = try start.start()
        #expect(started.host.state == .active)
        #expect(started.host.services.map(\.id) == ["test.a"])
        #expect(started.server.path == scratch.file("host.sock"))
        #expect(FileManager.default.fileExists(atPath: scratch.file("host.sock")))
        let ready = try #require(try records().named(.hostReady).first)
        #expect(ready.string("state") == "active")
        #expect(ready.strings("services") == ["test.a"])
        #expect(ready.int("lazy") == 0)
        #expect(ready.string("control") == scratch.file("host.sock"))
        // The ready line is the start's last.
        #expect(try records().last(where: { $0.event != nil })?.event == LogEvent.hostReady.name)
    }

    @Test func aStartWithoutServices_warnsBeforeTheReadyLine() throws {
        _ = try startup(try options()).start()
        let events = try records().compactMap(\.event)
        let warned = try #require(events.firstIndex(of: LogEvent.hostNoServices.name))
        let ready = try #require(events.firstIndex(of: LogEvent.hostReady.name))
        #expect(warned < ready)
    }

    @Test func aLaunchOptionThatIsNotUsable_stopsBeforeAnythingIsLogged() throws {
        let start = startup(try options(["--launch-url", "not a url"]))
        do {
            _ = try start.start()
            Issue.record("the start went on")
        } catch {
            guard case .launchOptions(let message) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(message.contains("not a url"))
            #expect(error.status == 2)
        }
        #expect(start.host == nil)
        #expect(try records().isEmpty)
    }

    @Test func aStateDirectoryInUse_stopsTheStartWithItsPath() throws {
        let held = try StateDirectory(path: scratch.file("state"))
        let start = startup(try options())
        #expect(throws: StartupError.logged(event: .hostStateDirectoryFailed)) { try start.start() }
        withExtendedLifetime(held) {}
        #expect(start.host == nil)
        let line = try #require(try records().named(.hostStateDirectoryFailed).first)
        #expect(line.level == "error")
        #expect(line.string("path") != nil)
    }

    @Test func aLoadThatFails_stopsTheStartBeforeTheControlSocket() throws {
        try scratch.write("lib/services.json", Array(#"{"services":{"test.zzz":{"policy":"required"}}}"#.utf8))
        let start = startup(try options())
        #expect(throws: StartupError.logged(event: .hostLoadFailed)) { try start.start() }
        #expect(start.host != nil)
        #expect(start.server == nil)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("host.sock")))
    }

    @Test func aControlSocketThatCannotBeBound_stopsTheStartWithItsPath() throws {
        // Its folder is a file.
        let path = try scratch.write("plain", []) + "/host.sock"
        let start = startup(try options(["--control", path]))
        #expect(throws: StartupError.logged(event: .controlUnavailable)) { try start.start() }
        #expect(try records().named(.controlUnavailable).first?.string("path") == path)
        // Loaded, never launched.
        #expect(start.host?.state == .notRunning)
    }

    @Test func aRequiredServiceThatFailsItsLaunch_stopsTheStartAfterTakingTheOthersDown() throws {
        try compile("CPlugins/probe.c", "a.so", ["PROBE_ID=\"test.a\"", "PROBE_PRIORITY=10"])
        // test.b answers didFinishLaunching with neither OK nor FALSE: a failed launch.
        let failing = ["BAD_ID=\"test.b\"", "BAD_ON_KIND=SH_EVENT_DID_FINISH_LAUNCHING", "BAD_ACTION=5"]
        try compile("BadPlugins/bad.c", "b.so", failing)
        try scratch.write("lib/services.json", Array(#"{"services":{"test.b":{"policy":"required"}}}"#.utf8))
        let start = startup(try options())
        #expect(throws: StartupError.logged(event: .hostRequiredFailed)) { try start.start() }
        #expect(try records().named(.hostRequiredFailed).first?.strings("services") == ["test.b"])
        #expect(try records().named(.hostReady).isEmpty)
        #expect(start.host?.state == .notRunning)
    }
}
