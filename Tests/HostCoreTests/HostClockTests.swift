import Foundation
import ServiceABI
import Synchronization
import TestSupport
import Testing

@testable import HostCore

/// Deadlines driven by a test's own clock: nothing here sleeps.
@MainActor
@Suite struct HostClockTests {
    @Test func manualClock_runsDueWorkInDeadlineOrder_andNeverCancelledWork() {
        let clock = ManualClock()
        var ran: [String] = []
        clock.schedule(after: 2) { ran.append("b") }
        clock.schedule(after: 1) {
            ran.append("a")
            clock.schedule(after: 0.5) { ran.append("a+0.5") }
        }
        clock.schedule(after: 1.2) { ran.append("cancelled") }.cancel()
        clock.advance(by: 0.9)
        #expect(ran.isEmpty)
        clock.advance(by: 1.1)
        #expect(ran == ["a", "a+0.5", "b"])
        #expect(clock.now == 2 && clock.pendingCount == 0)
    }

    @Test func aCompletionThatNeverComes_timesOutWhenTheClockSaysSo() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Command.compileC(
            Repository.fixture("CPlugins/probe.c"), to: lib + "/never.so",
            defines: [
                "PROBE_ID=\"test.never\"", "PROBE_COMPLETE=1",
                "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION))",
            ])
        let clock = ManualClock()
        let host = Host(log: Log(level: .error, descriptor: open("/dev/null", O_WRONLY)), clock: clock)
        host.answerTimeout = 30
        #expect(try host.load(LoadSettings(directories: [lib])).failures.isEmpty)
        try host.launch()
        var outcome: EventOutcome?
        host.push(try PushPayload(parsing: Array(#"{"aps": {"content-available": 1}}"#.utf8)), tap: nil) {
            outcome = $0
        }
        clock.advance(by: 29.9)
        #expect(outcome == nil)
        clock.advance(by: 0.2)
        let answered = try #require(outcome)
        #expect(answered.answers["test.never"] == "timeout")
        #expect(answered.merged == .string("failed"))
        #expect(clock.pendingCount == 0)
    }

    @Test func aRequestWhoseAnswerNeverComes_getsAnErrorReplyWhenTheClockSaysSo() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Command.compileC(
            Repository.fixture("CPlugins/probe.c"), to: lib + "/geo.so",
            defines: [
                "PROBE_ID=\"test.geo\"", "PROBE_COMPLETE=1", "PROBE_ANSWERS=\"geo.locate\"",
                "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_REQUEST))",
            ])
        let clock = ManualClock()
        let host = Host(log: Log(level: .error, descriptor: open("/dev/null", O_WRONLY)), clock: clock)
        #expect(host.requestTimeout == 5)
        #expect(try host.load(LoadSettings(directories: [lib])).failures.isEmpty)
        try host.launch()
        var reply: RequestReply?
        host.request("geo.locate", json: nil) { reply = $0 }
        clock.advance(by: 4.9)
        #expect(reply == nil)
        clock.advance(by: 0.2)
        let answered = try #require(reply)
        #expect(answered.result == SH_ERROR)
        #expect(answered.error == "test.geo did not answer geo.locate within 5 s")
        #expect(clock.pendingCount == 0)
    }

    @Test func theHangWatchdog_namesACallPastItsDeadlineOnce_andClearsItWhenItReturns() {
        let tracker = CallTracker()
        tracker.register(ids: ["test.a", "test.b"])
        let time = Locked<Double>(0)
        let watchdog = HangWatchdog(
            tracker: tracker, log: Log(level: .error, descriptor: open("/dev/null", O_WRONLY)),
            shortestDeadline: 10, deadline: { _ in 10 }, isIsolated: { _ in false },
            now: { time.withLock { $0 } })
        func at(_ seconds: Double) {
            time.withLock { $0 = seconds }
            watchdog.check()
        }

        // Two services of one delivery, 6 s each: neither is past its own 10 s deadline.
        let sentinel = tracker.begin(.didBecomeActive)
        tracker.enter(0, sentinel)
        at(0)
        at(6)
        tracker.enter(1, sentinel)
        at(6)
        at(12)
        #expect(tracker.stuck == nil)
        // test.b stays: past its deadline 10 s after it was first seen.
        at(16.5)
        #expect(
            tracker.stuck == CallTracker.StuckCall(service: "test.b", event: "didBecomeActive", since: 6, deadline: 10))
        tracker.leave(sentinel)
        at(17)
        #expect(tracker.stuck == nil)
    }
}
