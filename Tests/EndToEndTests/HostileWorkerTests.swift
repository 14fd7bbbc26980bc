import Foundation
import TestSupport
import Testing

/// A service that breaks the host table's rules (issue 11): whatever it passes or writes,
/// the host answers or kills the worker, and keeps serving.
@Suite struct HostileWorkerTests {
    private func hostile(_ host: RunningHost, action: Int) throws {
        try Command.compileC(
            Repository.fixture("HostileWorker/hostile.c"), to: host.lib + "/hostile.so",
            defines: ["HOSTILE_ACTION=\(action)"])
    }

    @Test(arguments: ["in-process", "process"])
    func storeSetOfNullWithALength_answersInvalid(isolation: String) throws {
        let host = try RunningHost()
        try hostile(host, action: 1)
        try host.start(["--isolation", isolation])
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        // -3: SH_INVALID.
        #expect(stopped.stderr.contains("hostile: store_set(key, NULL, 5) answered -3"), "\(stopped.stderr)")
    }

    /// A `size_t` past INT64_MAX reads as a negative Int in Swift: the worker's table trapped
    /// on it (`UInt64(_:)`), killing the service's worker. Both tables now answer as one.
    @Test(arguments: ["in-process", "process"])
    func sizesPastInt64Max_areAnswered_inProcessAndInAWorker(isolation: String) throws {
        let host = try RunningHost()
        try hostile(host, action: 3)
        try host.start(["--isolation", isolation])
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        // SH_INVALID for the set; SH_OK and the value's one byte for the get (a buffer that large holds it).
        #expect(
            stopped.stderr.contains(
                "hostile: store_set(key, v, SIZE_MAX) answered -3; store_get(key, SIZE_MAX) answered 0, length 1"),
            "\(stopped.stderr)")
    }

    @Test func callFrameWithALengthOf2To63_killsTheWorker_notTheHost() throws {
        let host = try IsolatedHost()
        try hostile(host, action: 2)
        try host.start(["--isolation", "process"])
        #expect(
            eventually {
                let service = try? host.service("test.hostile")
                return (service?["restarts"] as? Int ?? 0) >= 1 || service?["state"] as? String == "failed"
            })
        #expect(try host.ctl("state").stdout.contains("state: active"))
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(
            stopped.stderr.contains(
                "broke the worker protocol (malformed frame: store_set of 9223372036854775808 bytes)"),
            "\(stopped.stderr)")
    }

    /// Issue 36 item 1: a worker that sends a burst of requests and then stops reading its
    /// channel (it stops itself with SIGSTOP right after the burst, on its main thread in a
    /// reply's callback, so no reply is read and no event is pending) must not block the host's main
    /// thread on the replies. Past the bound (bytes waiting, or seconds without the worker
    /// reading) the worker is logged, killed and restarted, `state` is answered, and SIGTERM
    /// runs willTerminate for every service. On a host whose replies are blocking sends, the
    /// main thread waits out the send timeout for each reply and never kills the worker.
    @Test(arguments: [
        // 700 replies of 60 000 bytes: 42 MB, past the 32 MiB bound long before the 30 s deadline.
        (burst: 700, eventTimeout: 30, bound: "bytes"),
        // 40 replies, 2.4 MB: more than the socket holds, less than the bytes bound; 0.5 s
        // unread (half the deadline, at least 0.5 s).
        (burst: 40, eventTimeout: 1, bound: "time"),
    ])
    func aWorkerThatStopsReadingItsChannel_isKilledAtTheBound_andTheHostKeepsServing(
        burst: Int, eventTimeout: Int, bound: String
    ) throws {
        let host = try IsolatedHost()
        let fixture = Repository.fixture("HostileWorker/hostile.c")
        try Command.compileC(
            fixture, to: host.lib + "/asker.so",
            defines: [
                "HOSTILE_ACTION=4", "HOSTILE_BURST=\(burst)", "HOSTILE_MARKER=\"\(host.scratch.file("burst-sent"))\"",
            ])
        try Command.compileC(
            fixture, to: host.lib + "/echo.so", defines: ["HOSTILE_ACTION=5", "HOSTILE_REPLY_BYTES=60000"])
        let config = try host.file(
            "services.json",
            #"{"services": {"test.hostile": {"isolation": "process", "eventTimeout": \#(eventTimeout)}}}"#)
        try host.start(["--config", config])
        #expect(
            eventually(within: 30) {
                let service = try? host.service("test.hostile")
                return service?["restarts"] as? Int == 1 && service?["state"] as? String == "running"
            })
        #expect(try host.ctl("state").stdout.contains("state: active"))
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let stalled = host.records.filter { $0.event == LogEvent.workerStalled.name }
        #expect(stalled.count == 1, "\(stopped.stderr)")
        #expect(stalled.first?.fields["bound"] as? String == bound)
        #expect(stalled.first?.fields["services"] as? [String] == ["test.hostile"])
        let crashed = host.records.filter { $0.event == LogEvent.workerCrashed.name }
        #expect(crashed.map { $0.fields["cause"] as? String } == ["killed"], "\(stopped.stderr)")
        #expect(host.records.contains { $0.event == LogEvent.workerRestarted.name })
        // Both services were terminated in order, the restarted worker's too.
        #expect(host.events(of: "test.hostile").last == "willTerminate")
        #expect(host.events(of: "test.echo").last == "willTerminate")
    }

    /// Issue 37: a worker reads its channel on its main thread, but a plugin thread waiting for
    /// its host call's answer while the main thread waits for that thread (pthread_join in an
    /// event) reads the answer itself: no deadlock, in the host or in a worker.
    @Test(arguments: ["in-process", "process"])
    func aThreadsHostCall_isAnswered_whileTheMainThreadWaitsForIt(isolation: String) throws {
        let host = try RunningHost()
        try hostile(host, action: 6)
        try host.start(["--isolation", isolation])
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        // 2: SH_APP_ACTIVE; 0: SH_OK, the value's one byte.
        let lines = host.records.filter { $0.source == "test.hostile" }.map(\.message)
        #expect(lines.contains("hostile: from a thread, app_state 2, store_get 0 length 1"), "\(stopped.stderr)")
    }
}
