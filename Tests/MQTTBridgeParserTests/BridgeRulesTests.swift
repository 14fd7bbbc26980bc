import Testing

@testable import MQTTBridge

/// The bridge's rules against hostile broker clients (issue 36): where replies may go, when the
/// reconnect backoff resets (driven by the test's own clock), what retained messages are
/// remembered, and how a topic is written as a log field.
@Suite struct BridgeRulesTests {
    @Test(arguments: [
        "replies/h1", "servicehost/h1/reply", "servicehost/h1/reply/dashboard-3", "servicehost/h2/reply",
        "a", String(repeating: "r", count: ReplyTopic.maxBytes), "ops/réponse",
    ])
    func replyTopicsTheRuleAllows(topic: String) {
        #expect(ReplyTopic.refusal(topic, prefix: "servicehost/h1") == nil)
    }

    @Test(
        arguments: [
            ("", "empty"),
            (String(repeating: "r", count: ReplyTopic.maxBytes + 1), "over the limit"),
            ("x/#", "wildcard"), ("a/+/b", "wildcard"), ("#", "wildcard"),
            ("$SYS/broker", "starts with $"),
            ("/a", "empty level"), ("a/", "empty level"), ("a//b", "empty level"),
            ("a\u{1}b", "control character"), ("a\u{7F}", "control character"),
            ("servicehost/h1", "this host's topics"), ("servicehost/h1/push", "this host's topics"),
            ("servicehost/h1/post/queue.flush", "this host's topics"), ("servicehost/h1/ctl", "this host's topics"),
            ("servicehost/h1/state", "this host's topics"), ("servicehost/h1/replyx", "this host's topics"),
            ("servicehost/all/push", "fleet's topics"), ("servicehost/all/reply", "fleet's topics"),
            ("servicehost/h2/push", "fleet's topics"), ("servicehost/h2/post/x", "fleet's topics"),
            ("servicehost/h2/ctl", "fleet's topics"), ("servicehost", "fleet's topics"),
        ] as [(String, String)])
    func replyTopicsTheRuleRefuses(topic: String, reason: String) {
        let refusal = ReplyTopic.refusal(topic, prefix: "servicehost/h1")
        #expect(refusal?.contains(reason) == true, "\(topic): \(refusal ?? "allowed")")
    }

    @Test func aCustomPrefix_allowsOnlyItsReplyTopicsUnderIt() {
        #expect(ReplyTopic.refusal("fleet/k17/reply/x", prefix: "fleet/k17") == nil)
        #expect(ReplyTopic.refusal("fleet/k17/push", prefix: "fleet/k17") != nil)
        #expect(ReplyTopic.refusal("fleet/k17/ctl", prefix: "fleet/k17") != nil)
        // The fleet's namespace is refused whatever the host's prefix.
        #expect(ReplyTopic.refusal("servicehost/all/url", prefix: "fleet/k17") != nil)
        #expect(ReplyTopic.refusal("fleet/k18/anything", prefix: "fleet/k17") == nil)
    }

    /// The test's clock: sessions at the times it says.
    @Test func sessionsThatFailBeforeUsefulWork_keepDoublingTheBackoff() {
        var backoff = ReconnectBackoff()
        var clock = 1000.0
        var delays: [Double] = []
        for _ in 0..<8 {
            let accepted = clock
            clock += 0.01  // the broker drops the session at once, before anything is acknowledged
            backoff.ended(useful: ReconnectBackoff.isUseful(acceptedAt: accepted, endedAt: clock, acknowledged: 0))
            delays.append(backoff.delay(unit: 1))
            clock += delays.last!
        }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30, 30])
        #expect(backoff.failures == 8)
        #expect(backoff.delay(unit: 0.5) == 15)
        // Never accepted (unreachable, refused) is not useful either.
        backoff.ended(useful: ReconnectBackoff.isUseful(acceptedAt: nil, endedAt: clock, acknowledged: 5))
        #expect(backoff.failures == 9)
    }

    @Test func aSessionThatAcknowledgedOrStayedUp_resetsTheBackoff() {
        let start = 50.0
        #expect(ReconnectBackoff.isUseful(acceptedAt: start, endedAt: start + 0.01, acknowledged: 1))
        #expect(
            ReconnectBackoff.isUseful(acceptedAt: start, endedAt: start + ReconnectBackoff.stableAfter, acknowledged: 0)
        )
        #expect(
            !ReconnectBackoff.isUseful(
                acceptedAt: start, endedAt: start + ReconnectBackoff.stableAfter - 0.001, acknowledged: 0))
        var backoff = ReconnectBackoff()
        backoff.ended(useful: false)
        backoff.ended(useful: false)
        #expect(backoff.delay(unit: 1) == 2)
        backoff.ended(useful: true)
        #expect(backoff.failures == 0 && backoff.delay(unit: 1) == 0.5 && backoff.delay(unit: 0.5) == 0.25)
    }

    @Test func retainedDigests_surviveTheStore_andStayBounded() {
        let retained = RetainedMessages()
        var bytes: [UInt8] = []
        for digest in 0..<UInt64(RetainedMessages.capacity + 10) { bytes = retained.insert(digest) }
        #expect(bytes.count == RetainedMessages.capacity * 8)
        let restored = RetainedMessages()
        restored.restore(bytes + [1, 2, 3])  // a damaged tail is ignored
        #expect(
            !restored.contains(9) && restored.contains(10) && restored.contains(UInt64(RetainedMessages.capacity + 9)))
        // Inserting one already there moves it to the newest place, without a second copy.
        #expect(restored.insert(10).count == RetainedMessages.capacity * 8)
    }

    @Test func aTopicIsOneLogField() {
        #expect(Bridge.field("servicehost/all/push") == "servicehost/all/push")
        #expect(Bridge.field("a b:c=d%\n") == "a%20b%3Ac%3Dd%25%0A")
        #expect(Bridge.field("é") == "%C3%A9")
    }
}
