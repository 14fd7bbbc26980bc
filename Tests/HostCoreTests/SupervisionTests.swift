import Foundation
import ServiceJSON
import TestSupport
import Testing

@testable import HostCore

/// The parts of supervision that need no worker: backoff and crash limits, failure records,
/// the sentinel, the options, trust.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct SupervisionTests {
    @Test func restartsBackOff_from100ms_doubling_to10s_andTheLimitCountsOnlyTheWindow() {
        var history = CrashHistory(limit: CrashLimit(count: 3, window: 60))
        var reached = history.record(at: 0)
        #expect(!reached && history.restartDelay == 0.1)
        reached = history.record(at: 30)
        #expect(!reached && history.restartDelay == 0.2)
        // The first crash left the window: still two within 60 s.
        reached = history.record(at: 60.5)
        #expect(!reached && history.recent == 2)
        reached = history.record(at: 61)
        #expect(reached)
        var many = CrashHistory(limit: CrashLimit(count: 100, window: 60))
        for time in 0..<20 { _ = many.record(at: Double(time)) }
        #expect(many.restartDelay == 10)
        many.reset()
        #expect(many.recent == 0)
    }

    @Test func crashLimit_parsesCountSlashSeconds() {
        #expect(CrashLimit(parsing: "5/60") == CrashLimit(count: 5, window: 60))
        #expect(CrashLimit(parsing: "3") == CrashLimit(count: 3, window: 60))
        #expect(CrashLimit(parsing: "2/0.5") == CrashLimit(count: 2, window: 0.5))
        for bad in ["", "0/60", "x/60", "5/", "5/-1", "5/60/1", "-1"] {
            #expect(CrashLimit(parsing: bad) == nil, "\(bad)")
        }
        #expect(CrashLimit.standard.description == "5 crashes within 60 s")
    }

    @Test func runOptions_takeTheIsolationFlags() throws {
        let options = try RunOptions.parse([
            "--plugins", "/tmp", "--isolation", "process", "--event-timeout=0.5",
            "--crash-limit", "3/10", "--safe-mode",
        ])
        #expect(options.isolation.isolation == .process)
        #expect(options.isolation.eventTimeout == 0.5)
        #expect(options.isolation.crashLimit == CrashLimit(count: 3, window: 10))
        #expect(options.isolation.safeMode)
        let defaults = try RunOptions.parse(["--plugins", "/tmp"]).isolation
        #expect(defaults == IsolationOptions())
        #expect(defaults.isolation == .inProcess && defaults.eventTimeout == 10 && defaults.crashLimit == .standard)
        for (arguments, message) in [
            (["--isolation", "thread"], "--isolation: unknown mode 'thread' (use in-process or process)"),
            (["--event-timeout", "0"], "--event-timeout: '0' is not a positive number of seconds"),
            (["--crash-limit", "many"], "--crash-limit: 'many' is not N/SECS (crashes within seconds, like 5/60)"),
        ] {
            #expect(throws: UsageError(message)) { try RunOptions.parse(["--plugins", "/tmp"] + arguments) }
        }
    }

    @Test func policies_overrideTheDefaults_perService() {
        var settings = IsolationSettings(stateDirectory: "/tmp/x")
        settings.policies = [
            "a.b": IsolationPolicy(isolation: .process, trusted: true, eventTimeout: 2),
            "c.d": IsolationPolicy(ServiceConfiguration(id: "c.d", isolation: .inProcess, eventTimeout: 0.5)),
        ]
        settings.isolation = .process
        #expect(settings.isolation(for: "a.b") == .process)
        #expect(settings.isolation(for: "c.d") == .inProcess)
        #expect(settings.isolation(for: "e.f") == .process)
        #expect(settings.eventTimeout(for: "a.b") == 2 && settings.eventTimeout(for: "c.d") == 0.5)
        #expect(settings.eventTimeout(for: "e.f") == 10)
        #expect(settings.isTrusted("a.b", path: "/nowhere/x.so"))
        #expect(!settings.isTrusted("e.f", path: "/nowhere/x.so"))
        let configuration = HostConfiguration(services: [ServiceConfiguration(id: "g.h", trusted: false)])
        #expect(IsolationSettings.policies(from: configuration) == ["g.h": IsolationPolicy(trusted: false)])
    }

    @Test func bundledPlugins_areTrusted_byTheirRealFolder() throws {
        let scratch = try Scratch()
        let bundled = try scratch.folder("bin/plugins")
        let other = try scratch.folder("lib")
        var settings = IsolationSettings(stateDirectory: scratch.file("state"))
        settings.bundledDirectory = URL(fileURLWithPath: bundled).resolvingSymlinksInPath().path
        try scratch.write("bin/plugins/a.so", [1])
        try scratch.write("lib/b.so", [1])
        try FileManager.default.createSymbolicLink(atPath: scratch.file("link"), withDestinationPath: bundled)
        #expect(settings.isTrusted("x.y", path: bundled + "/a.so"))
        #expect(settings.isTrusted("x.y", path: scratch.file("link") + "/a.so"))
        #expect(!settings.isTrusted("x.y", path: other + "/b.so"))
        settings.policies["x.y"] = IsolationPolicy(trusted: false)
        #expect(!settings.isTrusted("x.y", path: bundled + "/a.so"))
    }

    @Test func failureRecords_roundTrip_andBlockOnlyTheirFile() throws {
        let scratch = try Scratch()
        let store = FailureStore(stateDirectory: scratch.file("state") + "/")
        let file = FileIdentity(
            device: 2049, inode: UInt64(1) << 60, size: 16144, modified: 1_795_322_275_796_787_731,
            changed: 1_795_322_275_796_787_731)
        let record = FailureRecord(
            serviceID: "test.bad", path: "/lib/bad.so", file: file,
            reason: "was killed by signal 11 (SIGSEGV) while handling didBecomeActive",
            signal: 11, status: nil, event: "didBecomeActive", time: "2025-11-22T04:30:00Z",
            limit: .standard)
        #expect(store.record(for: "test.bad") == nil)
        try store.save(record)
        #expect(store.record(for: "test.bad") == record)
        #expect(store.path(for: "test.bad") == scratch.file("state") + "/failures/test.bad.json")
        let json = try JSONValue(
            parsing: Array(try String(contentsOfFile: store.path(for: "test.bad"), encoding: .utf8).utf8))
        #expect(json["signalName"] == "SIGSEGV")
        #expect(
            record.summary == "crashed 5 times within 60 s; the last time its worker was killed by signal 11 (SIGSEGV)"
                + " while handling didBecomeActive (2025-11-22T04:30:00Z)")
        #expect(record.blocks(file))
        #expect(
            !record.blocks(
                FileIdentity(
                    device: 2049, inode: UInt64(1) << 60, size: 16144, modified: 1_795_322_275_796_787_731, changed: 1))
        )
        #expect(try store.remove("test.bad"))
        #expect(store.record(for: "test.bad") == nil)
        #expect(throws: StorageError.self) {
            try store.save(
                FailureRecord(
                    serviceID: "../escape", path: "", file: file, reason: "", signal: nil, status: nil, event: nil,
                    time: "",
                    limit: .standard))
        }
    }

    @Test func theSentinel_namesTheCallAnUncleanExitInterrupted() throws {
        let scratch = try Scratch()
        let state = scratch.file("state")
        let (sentinel, previous) = try Sentinel.open(stateDirectory: state)
        #expect(previous == nil)
        let tracker = CallTracker()
        tracker.register(ids: ["test.a", "test.b"])
        tracker.attach(sentinel)
        tracker.enter(service: 1, event: .didEnterBackground)
        // What the next run reads if this one dies now.
        var run = try #require(Sentinel.decode(Array(try Data(contentsOf: URL(fileURLWithPath: sentinel.path)))))
        #expect(run.pid == getpid())
        #expect(run.service == "test.b" && run.event == "didEnterBackground")
        #expect(run.description.hasSuffix("did not exit cleanly: service test.b was handling didEnterBackground"))
        tracker.leave()
        sentinel.loading("/lib/x.so")
        run = try #require(Sentinel.decode(Array(try Data(contentsOf: URL(fileURLWithPath: sentinel.path)))))
        #expect(run.service == nil && run.loading == "/lib/x.so")
        tracker.register(ids: ["test.a"])
        run = try #require(Sentinel.decode(Array(try Data(contentsOf: URL(fileURLWithPath: sentinel.path)))))
        #expect(run.loading == nil)
        #expect(run.description.hasSuffix("no service call was in progress"))
        // A second host on the same state directory is refused the sentinel.
        #expect { try Sentinel.open(stateDirectory: state) } throws: {
            if case .inUse = $0 as? Sentinel.OpenError { true } else { false }
        }
        #expect(Sentinel.decode([UInt8](repeating: 0, count: 65536)) == nil)
    }

    /// An attach names its service by writing its id alone after the running ones (not the
    /// whole list again): the sentinel and the watchdog name the same service either way, and a
    /// second attach at the same index (the first failed) replaces the first's id.
    @Test func anAttach_namesItsServiceAfterTheRunningOnes() throws {
        let scratch = try Scratch()
        let (sentinel, _) = try Sentinel.open(stateDirectory: scratch.file("state"))
        let tracker = CallTracker()
        tracker.register(ids: ["test.a", "test.b"])
        tracker.attach(sentinel)
        func written() throws -> Sentinel.PreviousRun {
            try #require(Sentinel.decode(Array(try Data(contentsOf: URL(fileURLWithPath: sentinel.path)))))
        }
        sentinel.loading("/lib/c.so")
        tracker.register(attaching: "test.c", at: 2)
        tracker.enter(service: 2, event: .willFinishLaunching)
        #expect(try written().service == "test.c" && tracker.id(at: 2) == "test.c")
        #expect(try written().loading == nil)
        tracker.leave()
        tracker.register(attaching: "test.longer-name", at: 2)
        tracker.enter(service: 2, event: .willFinishLaunching)
        #expect(try written().service == "test.longer-name" && tracker.id(at: 2) == "test.longer-name")
        tracker.enter(service: 1, event: .willFinishLaunching)
        #expect(try written().service == "test.b" && tracker.id(at: 1) == "test.b")
        tracker.leave()
        // The list, once the load ends, is the running services again.
        tracker.register(ids: ["test.a", "test.b", "test.longer-name"])
        tracker.register(attaching: "test.d", at: 1)
        tracker.enter(service: 1, event: .willFinishLaunching)
        #expect(try written().service == "test.d" && tracker.id(at: 2) == "service #2")
    }

    /// A new run clears only the sentinel's header and lengths (not all 64 KiB): nothing of the
    /// previous run's call, loading path or ids is read back from what it left past them.
    @Test func theSentinel_ofANewRunKeepsNothingOfThePreviousRun() throws {
        let scratch = try Scratch()
        let (old, _) = try Sentinel.open(stateDirectory: scratch.file("old"))
        let tracker = CallTracker()
        tracker.register(ids: ["test.a", "test.b"])
        tracker.attach(old)
        old.loading("/lib/x.so")
        tracker.enter(service: 1, event: .didEnterBackground)
        // What that run leaves if it dies now, found by the next run in its state directory.
        let state = try scratch.folder("state", mode: 0o700)
        try scratch.copy(old.path, to: "state/" + Sentinel.fileName, mode: 0o600)
        let (sentinel, previous) = try Sentinel.open(stateDirectory: state)
        #expect(
            previous?.service == "test.b" && previous?.event == "didEnterBackground" && previous?.loading == "/lib/x.so"
        )
        var run = try #require(Sentinel.decode(Array(try Data(contentsOf: URL(fileURLWithPath: sentinel.path)))))
        #expect(run.pid == getpid() && run.service == nil && run.event == nil && run.loading == nil)
        // A call recorded before any ids are: the previous run's ids, still in the file past
        // the cleared lengths, are not taken for this run's.
        sentinel.page.storeBytes(of: Int64(0), toByteOffset: Sentinel.serviceOffset, as: Int64.self)
        run = try #require(Sentinel.decode(Array(try Data(contentsOf: URL(fileURLWithPath: sentinel.path)))))
        #expect(run.service == "service #0")
    }

    @Test func workerExits_areWorded() {
        #expect(WorkerExit(waitStatus: 11).description == "was killed by signal 11 (SIGSEGV)")
        #expect(WorkerExit(waitStatus: 3 << 8).description == "exited with status 3")
        #expect(
            WorkerDeath(exit: .signaled(9), cause: .protocolError("bad magic")).description
                == "broke the worker protocol (bad magic) and was killed")
        #expect(
            WorkerDeath(exit: .exited(WorkerMain.lostChannelStatus), cause: nil).description.contains(
                "lost its channel"))
        #expect(
            CrashReport(hungIn: "didEnterBackground", deadline: 1).reason
                == "did not answer didEnterBackground within 1 s and was killed")
    }
}
