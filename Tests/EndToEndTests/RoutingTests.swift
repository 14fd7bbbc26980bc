import Foundation
import TestSupport
import Testing

/// openURL and continueUserActivity: first claim in priority order, ownership by claims.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct RoutingTests {
    private let urlEvents = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_OPEN_URL)"

    @Test func firstClaimWins_inPriorityOrder_andLaterServicesAreNeverAsked() throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            ["PROBE_ID=\"test.passes\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_PRIORITY=10", "PROBE_ANSWER=SH_FALSE"])
        try host.probe("b", ["PROBE_ID=\"test.claims\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_PRIORITY=5"])
        try host.probe("c", ["PROBE_ID=\"test.later\"", "PROBE_EVENTS=\(urlEvents)"])
        try host.start()
        let (status, reply) = try host.ctlJSON("open", "https://example.com/a")
        #expect(status == 0)
        #expect(reply["handledBy"] as? String == "test.claims")
        #expect(reply["receivers"] as? [String] == ["test.passes", "test.claims"])
        let opened = host.stop().records.probe(15)
        #expect(!opened.contains { $0.source == "test.later" })
        // The answer combination bug of PluggableApplicationDelegate: a false never stops the asking.
        #expect(opened.filter { $0.source == "test.claims" }.count == 1)
    }

    @Test func claimedSchemes_goOnlyToTheirOwners_andHostClaimsBeatSchemeClaims() throws {
        let host = try RunningHost()
        try host.probe("general", ["PROBE_ID=\"test.general\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_PRIORITY=100"])
        try host.probe(
            "scheme", ["PROBE_ID=\"test.scheme\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_URL_CLAIM=\"myapp\""])
        try host.probe(
            "exact", ["PROBE_ID=\"test.exact\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_URL_CLAIM=\"myapp://drive\""])
        try host.start()
        #expect(try host.ctlJSON("open", "myapp://item/1").reply["handledBy"] as? String == "test.scheme")
        #expect(try host.ctlJSON("open", "MyApp://DRIVE/home").reply["handledBy"] as? String == "test.exact")
        #expect(try host.ctlJSON("open", "other://x").reply["handledBy"] as? String == "test.general")
        let opened = host.stop().records.probe(15)
        #expect(opened.filter { $0.source == "test.general" }.count == 1)
        #expect(opened.first { $0.source == "test.exact" }?.message.contains("scheme=myapp host=drive") == true)
    }

    @Test func unclaimedURL_exitsThreeWithALogLine() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_ANSWER=SH_FALSE"])
        try host.start()
        let result = try host.ctl("open", "myapp://nowhere")
        #expect(result.status == 3)
        #expect(result.stdout.contains("no service claimed the URL myapp://nowhere"))
        let unclaimed = host.stop().records.named(.routeUnclaimed)
        #expect(unclaimed.map { [$0.level, $0.source, $0.string("event")] } == [["info", "host", "openURL"]])
        #expect(unclaimed.first?.string("what")?.hasSuffix("myapp://nowhere") == true)
    }

    @Test func activities_routeByClaimedType() throws {
        let host = try RunningHost()
        let events = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_CONTINUE_USER_ACTIVITY)"
        try host.probe("a", ["PROBE_ID=\"test.any\"", "PROBE_EVENTS=\(events)", "PROBE_PRIORITY=5"])
        try host.probe(
            "b", ["PROBE_ID=\"test.owner\"", "PROBE_EVENTS=\(events)", "PROBE_ACTIVITY_CLAIM=\"com.example.view\""])
        try host.start()
        let owned = try host.ctlJSON(
            "activity", "com.example.view", "--url", "https://example.com/1", "--user-info", #"{"item":1}"#)
        #expect(owned.reply["handledBy"] as? String == "test.owner")
        #expect(try host.ctlJSON("activity", "com.example.other").reply["handledBy"] as? String == "test.any")
        let continued = host.stop().records.probe(16)
        #expect(continued.first { $0.source == "test.owner" }?.message.contains(#"info={"item":1}"#) == true)
    }
}
