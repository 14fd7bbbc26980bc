import Foundation
import TestSupport
import Testing

/// The main thread's own event loop (issue 13): control connections and the main queue
/// (timers, MainActor work) are served by one epoll loop on the thread that dispatches.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct MainLoopTests {
    /// A request waits for its answerer's deadline, a timer on the main queue; meanwhile another
    /// connection is served (its memory warning delivered and answered), then the timer fires
    /// on the same thread and the first connection gets its timeout reply.
    @Test func aConnectionIsServed_whileAMainQueueTimerIsPending_andTheTimerFires() throws {
        let host = try RunningHost()
        let asked = host.scratch.file("asked")
        try host.probe(
            "geo",
            [
                "PROBE_ID=\"test.geo\"", "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_REQUEST))",
                "PROBE_ANSWERS=\"geo.locate\"", "PROBE_COMPLETE=1", "PROBE_MARK_KIND=SH_EVENT_REQUEST",
                "PROBE_MARK_FILE=\"\(asked)\"",
            ])
        try host.probe(
            "b",
            [
                "PROBE_ID=\"test.b\"",
                "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_MEMORY_WARNING)",
            ])
        try host.start(["--request-timeout", "2"])
        let waiting = try ControlSocket(path: host.control)
        waiting.send(#"{"id":"asked","command":"request","name":"geo.locate"}"# + "\n")
        try #require(eventually { FileManager.default.fileExists(atPath: asked) }, "the request never reached test.geo")
        // Served while the deadline's timer is pending (it fires 2 s after the request).
        let other = try ControlSocket(path: host.control)
        let warned = other.readReplyAfter(#"{"id":"warn","command":"memory-warning"}"#)
        #expect(warned?["id"] as? String == "warn", "\(String(describing: warned))")
        #expect(warned?["ok"] as? Bool == true, "\(String(describing: warned))")
        let timedOut = waiting.readReply()
        #expect(timedOut?["id"] as? String == "asked", "\(String(describing: timedOut))")
        #expect(
            timedOut?["error"] as? String == "test.geo did not answer geo.locate within 2 s",
            "\(String(describing: timedOut))")
        let records = host.stop().records
        let memoryWarning = 9
        let delivered = records.firstIndex {
            $0.source == "test.b" && $0.message.hasPrefix("probe test.b: event \(memoryWarning) ")
        }
        let failed = records.firstIndex { $0.event == LogEvent.requestFailed.name && $0.string("reason") == "timeout" }
        #expect(records.named(.requestFailed).map { [$0.source, $0.string("reason")] } == [["test.geo", "timeout"]])
        #expect(records.named(.completionTimeout).map { $0.string("event") } == ["request"])
        // The memory warning was carried out before the timer fired, not after it.
        let order = try #require(
            delivered.flatMap { delivered in failed.map { (delivered, $0) } }, "\(records.text.suffix(3000))")
        #expect(order.0 < order.1, "\(records.text.suffix(3000))")
    }
}
