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
}
