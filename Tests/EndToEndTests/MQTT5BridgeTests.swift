import Foundation
import TestSupport
import Testing

/// MQTT 5 in the bridge (issue 41 item 1) against a real Mosquitto 2 and `mosquitto_pub` /
/// `mosquitto_sub -V mqttv5`: replies on the response topic with the correlation data and
/// trace id given, expired commands, reason codes by name.
@Suite(.timeLimit(.minutes(10)), .enabled(if: Mosquitto.installed != nil, "needs mosquitto (see the SKIPPED banner)"))
struct MQTT5BridgeTests {
    typealias Bridge = MQTTBridgeTests

    static func command(_ number: Int) -> String {
        #"{"command":"push","payload":{"aps":{"alert":"hello"},"n":\#(number)}}"#
    }

    @Test func aReply_goesToTheResponseTopic_withTheCorrelationDataAndTheTraceId() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try Bridge.fleetHost("h1", port: broker.port, requests: "all", extra: #", "commands": true"#)
        try host.start()
        #expect(Bridge.subscribed(broker, "h1"))
        let replies = try broker.subscriber(
            "replies/h1", count: 2, client: "dashboard", options: ["-V", "mqttv5", "-F", "%D|%P|%p"])
        let v5 = ["-V", "mqttv5", "-D", "PUBLISH", "response-topic", "replies/h1"]
        try broker.publish(
            "servicehost/h1/ctl", #"{"command":"state"}"#,
            options: v5 + [
                "-D", "PUBLISH", "correlation-data", "req-1", "-D", "PUBLISH", "user-property", "traceId", "t-42",
            ])
        // The response topic wins over the payload's replyTo.
        try broker.publish(
            "servicehost/h1/ctl", #"{"command":"state","replyTo":"replies/other"}"#,
            options: v5 + ["-D", "PUBLISH", "correlation-data", "req-2"])
        // The reply-topic rule holds for the response topic: the host's own inbound topics are refused.
        try broker.publish(
            "servicehost/h1/ctl", #"{"command":"state"}"#,
            options: ["-V", "mqttv5", "-D", "PUBLISH", "response-topic", "servicehost/h1/post/queue.flush"])
        let lines = replies.wait().stdout.split(separator: "\n").map { $0.split(separator: "|", maxSplits: 2) }
        #expect(eventually { broker.acknowledgements(from: "h1") >= 3 })
        let records = host.stop().records
        let correlations: [String] = lines.compactMap { $0.first.map(String.init) }
        #expect(correlations.sorted() == ["req-1", "req-2"], "\(lines)")
        let traced = lines.first { $0.first == "req-1" }
        #expect(traced?.count == 3 && traced?[1] == "traceId:t-42", "\(lines)")
        let reply = traced.flatMap { try? JSONSerialization.jsonObject(with: Data(($0.last ?? "").utf8)) }
        #expect((reply as? [String: Any])?["state"] as? String == "active", "\(lines)")
        #expect(
            broker.topics(publishedBy: "h1").filter { $0 != "servicehost/h1/state" } == ["replies/h1", "replies/h1"])
        let bridge = Bridge.bridgeLines(records)
        #expect(bridge.named("mqtt.delivered").map { $0.fields["trace"] } == ["t-42"], "\(records.text)")
        #expect(
            bridge.named("mqtt.commandRefused").map { $0.fields["reason"] } == ["replyTopic"], "\(records.text)")
        #expect(bridge.named("mqtt.connected").first?.fields["protocol"] == "5", "\(records.text)")
    }

    /// The broker keeps the host's session while it is away and drops a command whose expiry
    /// passed meanwhile; the one without expiry is carried out when the host is back.
    @Test func aCommandThatExpiredWhileTheHostWasAway_isNotCarriedOut() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try Bridge.fleetHost(
            "h1", port: broker.port, requests: "all", extra: #", "commands": true"#,
            probeEvents: "|SH_EVENT_BIT(SH_EVENT_NOTIFICATION)")
        try host.start()
        #expect(Bridge.subscribed(broker, "h1"))
        let first = host.stop()
        let expiring = ["-V", "mqttv5", "-D", "PUBLISH", "message-expiry-interval", "1"]
        try broker.publish("servicehost/h1/ctl", Self.command(7), options: expiring)
        try broker.publish("servicehost/h1/ctl", Self.command(8))
        // A retained message expiring a second after the command: once the broker dropped it, the
        // command's interval has passed too (the broker's clock, no sleep; Mosquitto 2.0 drops a
        // retained message at its expiry second, a queued one a second later). A
        // new subscriber gets the retained message, if any, before the marker published after
        // it subscribed (`mosquitto_sub -W` cannot be used: its alarm is blocked in children).
        try broker.publish(
            "expiry/witness", "kept", retain: true,
            options: ["-V", "mqttv5", "-D", "PUBLISH", "message-expiry-interval", "2"])
        var polls = 0
        func witnessGone() throws -> Bool {
            polls += 1
            let subscriber = try broker.subscriber("expiry/#", count: 1, client: "witness-\(polls)")
            try broker.publish("expiry/marker", "gone", qos: 0)
            return subscriber.wait().stdout.hasPrefix("gone")
        }
        #expect(eventually(within: 30) { (try? witnessGone()) == true })
        try host.start()
        #expect(eventually { broker.acknowledgements(from: "h1") >= 1 })
        let records = first.records + host.stop().records
        #expect(Bridge.deliveries(of: 7, in: records) == 0, "\(records.text)\n\(broker.log)")
        #expect(Bridge.deliveries(of: 8, in: records) == 1, "\(records.text)")
        let connected = Bridge.bridgeLines(records).named("mqtt.connected").map { $0.fields["sessionPresent"] }
        #expect(connected == ["false", "true"], "\(records.text)")
    }

    /// What only the bridge sees: reason codes in CONNACK, SUBACK, PUBACK and DISCONNECT are
    /// logged by name, and a command the broker forwards with 0 seconds of expiry left is
    /// refused, acknowledged, never carried out.
    @Test func reasonCodesAreLoggedByName_andACommandWithNoTimeLeftIsRefused() throws {
        let done = Flag()
        @Sendable func publish(_ topic: String, _ id: UInt8, _ properties: [UInt8], _ payload: String) -> [UInt8] {
            let name = Array(topic.utf8)
            let body =
                [0, UInt8(name.count)] + name + [0, id, UInt8(properties.count)] + properties + Array(payload.utf8)
            return [0x32, UInt8(body.count)] + body
        }
        @Sendable func waitForPUBACK(_ connection: Int32) {
            var seen = FakeBroker.read(connection)
            while !seen.isEmpty && !seen.contains(0x40) { seen += FakeBroker.read(connection) }
        }
        let fake = try FakeBroker { number, connection in
            _ = FakeBroker.read(connection)  // CONNECT
            switch number {
            case 1: FakeBroker.write(connection, [0x20, 3, 0, 0x87, 0])  // not authorized
            case 2:
                FakeBroker.write(connection, [0x20, 3, 0, 0, 0])
                _ = FakeBroker.read(connection)  // SUBSCRIBE: 7 filters, the sixth servicehost/all/post/+
                FakeBroker.write(connection, [0x90, 10, 0, 1, 0, 1, 1, 1, 1, 1, 0x87, 1])
                FakeBroker.write(connection, [0x40, 3, 0, 1, 0x87])  // the state it published: refused
                FakeBroker.write(connection, publish("servicehost/h1/ctl", 5, [0x02, 0, 0, 0, 0], Self.command(9)))
                waitForPUBACK(connection)
                FakeBroker.write(connection, publish("servicehost/h1/push", 6, [], Bridge.push(2)))
                waitForPUBACK(connection)
                FakeBroker.write(connection, [0xE0, 2, 0x8B, 0])  // server shutting down
                done.set()
                while !FakeBroker.read(connection).isEmpty {}
            default: while !FakeBroker.read(connection).isEmpty {}
            }
        }
        let host = try Bridge.fleetHost(
            "h1", port: fake.port, requests: "all", extra: #", "commands": true"#,
            probeEvents: "|SH_EVENT_BIT(SH_EVENT_NOTIFICATION)")
        try host.start()
        #expect(eventually { done.isSet && fake.connectionCount >= 3 })
        let records = host.stop().records
        let lines = Bridge.bridgeLines(records)
        func reasons(_ event: String) -> [String?] { lines.named(event).map { $0.fields["reason"] } }
        #expect(reasons("mqtt.refused") == ["notAuthorized"], "\(records.text)")
        #expect(lines.named("mqtt.refused").first?.fields["code"] == "135", "\(records.text)")
        #expect(reasons("mqtt.subscribeRefused") == ["notAuthorized"], "\(records.text)")
        #expect(reasons("mqtt.publishRefused") == ["notAuthorized"], "\(records.text)")
        #expect(reasons("mqtt.commandRefused") == ["expired"], "\(records.text)")
        #expect(reasons("mqtt.brokerDisconnected") == ["serverShuttingDown"], "\(records.text)")
        #expect(lines.named("mqtt.protocolError").isEmpty, "\(records.text)")
        #expect(Bridge.deliveries(of: 9, in: records) == 0 && Bridge.deliveries(of: 2, in: records) == 1)
    }

    /// A real broker's refusal by name: an ACL that keeps the host from the reply topic a
    /// command names (MQTT 5's PUBACK says notAuthorized; 3.1.1's said nothing).
    @Test func aRealBrokersRefusals_areLoggedByName() throws {
        let scratch = try Scratch()
        let acl = try scratch.write(
            "acl",
            Array(
                "topic readwrite servicehost/h1/#\ntopic read servicehost/all/push\ntopic read servicehost/all/url\n"
                    .utf8))
        let broker = try Mosquitto(in: scratch, config: "acl_file \(acl)")
        let host = try Bridge.fleetHost("h1", port: broker.port, requests: "all", extra: #", "commands": true"#)
        try host.start()
        #expect(Bridge.subscribed(broker, "h1"))
        try broker.publish(
            "servicehost/h1/ctl", #"{"command":"state"}"#,
            options: ["-V", "mqttv5", "-D", "PUBLISH", "response-topic", "replies/h1"])
        // Mosquitto logs the reply as a denied PUBLISH; every message the bridge published (its
        // states and the reply) was answered.
        #expect(
            eventually {
                broker.log.contains("Denied PUBLISH from h1")
                    && broker.count(.sent, "PUBACK", client: "h1")
                        > broker.count(.received, "PUBLISH", client: "h1")
            }, "\(broker.log)")
        let records = host.stop().records
        let lines = Bridge.bridgeLines(records)
        // Mosquitto 2.0 grants a subscription its ACL forbids (and delivers nothing on it), so
        // SUBACK's codes are covered by the fake broker above.
        #expect(lines.named("mqtt.publishRefused").map { $0.fields["reason"] } == ["notAuthorized"], "\(records.text)")
    }
}
