import Foundation
import TestSupport
import Testing

/// Limits the host must survive: a thread it cannot start (EAGAIN: `ulimit -u`, a cgroup's
/// pids.max) is an error that names the thread and keeps errno, never a trap; a control
/// connection the main loop cannot watch (ENOSPC past fs.epoll.max_user_watches) is closed
/// and the host serves on. The real binary, its own calls made to fail by an `LD_PRELOAD`
/// library (Tests/Fixtures/Faults): root is exempt from the real thread limit, and the epoll
/// limit is the whole machine's.
// Not under a sanitizer: its runtime, linked into the sanitized host and exported, defines
// pthread_create itself, which comes before any preloaded library's.
@Suite(
    .timeLimit(.minutes(10)),
    .disabled(if: Sanitizer.isActive, "the sanitizer's own pthread_create in the host comes before the preloaded one"))
struct ResourceLimitTests {
    /// The environment that preloads the fault library (built into the host's scratch folder) with `settings`.
    private func faults(_ host: RunningHost, _ settings: [String: String]) throws -> [String: String] {
        let library = try Command.compileC(Repository.fixture("Faults/faults.c"), to: host.scratch.file("faults.so"))
        return settings.merging(["LD_PRELOAD": library]) { $1 }
    }

    /// Threads: the host's first `allow` fail-free, in the host or its workers.
    private func limit(_ host: RunningHost, allow: Int, in process: String) throws -> [String: String] {
        try faults(host, ["FAULT_THREADS_ALLOW": "\(allow)", "FAULT_THREADS_IN": process])
    }

    @Test func withoutItsSignalThread_theHostSaysWhy_andStopsBeforeAnyServiceRuns() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start(wait: false, environment: try limit(host, allow: 0, in: "host"))
        let result = host.wait()
        #expect(result.status == 2, "\(result.stderr)")
        let failed = result.records.named(.hostThreadFailed)
        #expect(failed.map { [$0.level, $0.source] } == [["error", "host"]], "\(result.records.text)")
        #expect(failed.first?.string("thread") == "signal thread")
        #expect(failed.first?.int("errno") == Int(EAGAIN))
        // Started before plugins load: no service was loaded, none saw an event.
        #expect(result.records.named(.hostReady).isEmpty)
        #expect(host.events.isEmpty, "\(host.events)")
    }

    /// Neither the host nor a worker starts a thread per worker (issue 37: both read the channel
    /// on their main thread's loop), so where no further thread can start — the host past its
    /// signal thread, a worker at all — a process-isolated service serves as any other.
    @Test(arguments: [(process: "host", allow: 1), (process: "worker", allow: 0)])
    func withNoThreadToSpare_aWorkerServes(process: String, allow: Int) throws {
        let host = try IsolatedHost()
        try host.probe("x", ["PROBE_ID=\"test.x\""])
        let config = try host.file("services.json", #"{"services": {"test.x": {"isolation": "process"}}}"#)
        try host.start(["--config", config], environment: try limit(host, allow: allow, in: process))
        #expect(try host.service("test.x")?["state"] as? String == "running")
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            host.events(of: "test.x") == [
                "willFinishLaunching", "didFinishLaunching", "didBecomeActive", "willResignActive",
                "didEnterBackground", "willTerminate",
            ], "\(host.events)")
        #expect(result.records.named(.loadFailed).isEmpty, "\(result.records.text)")
    }

    @Test func aControlConnectionTheMainLoopCannotWatch_isClosed_andTheHostServesTheNext() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        // The first control connection cannot join the main loop's epoll set.
        try host.start(environment: try faults(host, ["FAULT_WATCH_FAILS": "1"]))
        #expect(try host.ctl("state").stdout.contains("state: active"))
        #expect(try host.ctl("background").status == 0)
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let unwatched = result.records.named(.controlUnwatched)
        #expect(unwatched.map { [$0.level, $0.source] } == [["warn", "control"]], "\(result.records.text)")
        #expect(unwatched.first?.string("operation") == "epoll_ctl(ADD)")
        #expect(unwatched.first?.int("errno") == Int(ENOSPC))
        #expect(host.events.contains("didEnterBackground test.a"), "\(host.events)")
    }
}
