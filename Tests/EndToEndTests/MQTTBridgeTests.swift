import Foundation
import TestSupport
import Testing

/// The MQTT bridge (issue 17) against a real Mosquitto: pushes to one host and to the fleet,
/// a host killed while QoS 1 pushes are published, a broker restarted under a host, and a
/// hostile broker. Each host runs the bridge and a C probe that logs every push it receives.
@Suite(.timeLimit(.minutes(10)), .enabled(if: Mosquitto.installed != nil, "needs mosquitto (see the SKIPPED banner)"))
struct MQTTBridgeTests {
    static let bridge = "dev.servicehost.mqtt-bridge"

    /// A host with the bridge (clientId and hostId `id`) on `port` and the probe.
    static func fleetHost(
        _ id: String, port: Int, requests: String = "events", extra: String = "", probeEvents: String = ""
    ) throws -> RunningHost {
        let host = try RunningHost()
        try host.scratch.copy(try Repository.product("libMQTTBridge.so"), to: "lib/libMQTTBridge.so")
        try host.probe(
            "probe",
            [
                "PROBE_ID=\"test.probe\"",
                "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION)\(probeEvents)",
                "PROBE_SUBSCRIBE=\"hello\"",
            ])
        _ = try host.file(
            "lib/services.json",
            """
            {"services": {"\(bridge)": {"requests": "\(requests)", "settings":
              {"broker": "tcp://127.0.0.1:\(port)", "hostId": "\(id)", "keepAlive": 5\(extra)}}}}
            """)
        return host
    }

    static func push(_ number: Int) -> String { #"{"aps":{"alert":"hello"},"n":\#(number)}"# }

    /// How many times the probe received push `number` in `records`.
    static func deliveries(of number: Int, in records: [LogRecord]) -> Int {
        records.probe(10).filter { $0.message.contains(#""n":\#(number)}"#) }.count
    }

    static func subscribed(_ broker: Mosquitto, _ client: String, times: Int = 1) -> Bool {
        eventually(within: 30) { broker.count(.sent, "SUBACK", client: client) >= times }
    }

    /// The bridge's own lines in `records`: the stable word and the `key=value` fields before
    /// the colon (`mqtt.refused code=5: …`), as README's "Running a fleet" documents them.
    static func bridgeLines(_ records: [LogRecord]) -> [BridgeLine] {
        records.messages(from: bridge).compactMap(BridgeLine.init)
    }

    @Test func pushToOneHost_andToAll_andTheStateIsRetained() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let h1 = try Self.fleetHost("h1", port: broker.port)
        let h2 = try Self.fleetHost("h2", port: broker.port)
        try h1.start()
        try h2.start()
        #expect(Self.subscribed(broker, "h1") && Self.subscribed(broker, "h2"))
        try broker.publish("servicehost/h1/push", Self.push(1))
        try broker.publish("servicehost/all/push", Self.push(2))
        #expect(eventually { broker.acknowledgements(from: "h1") >= 2 && broker.acknowledgements(from: "h2") >= 1 })
        let state = try broker.retained("servicehost/h1/state") ?? ""
        let object = (try? JSONSerialization.jsonObject(with: Data(state.utf8))) as? [String: Any]
        #expect(object?["status"] as? String == "online" && object?["state"] as? String == "active", "\(state)")
        #expect((object?["services"] as? [String])?.contains("test.probe") == true, "\(state)")
        let one = h1.stop().records
        let two = h2.stop().records
        #expect(Self.deliveries(of: 1, in: one) == 1 && Self.deliveries(of: 2, in: one) == 1)
        #expect(Self.deliveries(of: 1, in: two) == 0 && Self.deliveries(of: 2, in: two) == 1)
        // In the host's process the host's main loop reads the broker's socket (issue 37).
        for records in [one, two] {
            #expect(
                Self.bridgeLines(records).named("mqtt.connected").map { $0.fields["reader"] } == ["mainLoop"],
                "\(records.text)")
        }
        // A clean stop leaves `offline` retained, as the will does for a dead host.
        #expect(try broker.retained("servicehost/h1/state") == "offline")
        // A host that never ran has nothing retained (and asking returns: see Mosquitto.retained).
        #expect(try broker.retained("servicehost/h9/state") == nil)
    }

    @Test func killedWhileQoS1PushesArePublished_everyPushIsDeliveredExactlyOnce() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try Self.fleetHost("h1", port: broker.port)
        try host.start()
        #expect(Self.subscribed(broker, "h1"))
        for number in 1...5 { try broker.publish("servicehost/h1/push", Self.push(number)) }
        #expect(eventually { broker.acknowledgements(from: "h1") >= 5 })
        // Frozen, the host reads nothing: these stay in flight or queued at the broker.
        host.process?.send(SIGSTOP)
        for number in 6...15 { try broker.publish("servicehost/all/push", Self.push(number)) }
        let first = host.signal(SIGKILL)
        #expect(first.status == 128 + SIGKILL)
        try host.start()
        for number in 16...20 { try broker.publish("servicehost/h1/push", Self.push(number)) }
        #expect(eventually { broker.acknowledgements(from: "h1") >= 20 })
        let records = first.records + host.stop().records
        for number in 1...20 { #expect(Self.deliveries(of: number, in: records) == 1, "push \(number)") }
    }

    @Test func brokerRestartedUnderAConnectedHost_theHostReconnects() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try Self.fleetHost("h1", port: broker.port)
        try host.start()
        #expect(Self.subscribed(broker, "h1"))
        try broker.publish("servicehost/h1/push", Self.push(1))
        #expect(eventually { broker.acknowledgements(from: "h1") >= 1 })
        broker.stop()
        try broker.start()
        #expect(Self.subscribed(broker, "h1", times: 2))
        let pings = broker.count(.received, "PINGREQ", client: "h1")
        try broker.publish("servicehost/h1/push", Self.push(2))
        #expect(eventually { broker.acknowledgements(from: "h1") >= 2 })
        // The keep-alive's timer runs for the new socket (keepAlive 5: a PINGREQ within 2.5 s).
        #expect(eventually { broker.count(.received, "PINGREQ", client: "h1") > pings }, "\(broker.log)")
        #expect(try host.ctl("state").status == 0)
        let records = host.stop().records
        let lines = Self.bridgeLines(records)
        // The new socket is watched on the main loop as the first was.
        #expect(
            lines.named("mqtt.connected").map { $0.fields["reader"] } == ["mainLoop", "mainLoop"], "\(records.text)")
        #expect(!lines.named("mqtt.disconnected").isEmpty, "\(records.text)")
        #expect(Self.deliveries(of: 1, in: records) == 1 && Self.deliveries(of: 2, in: records) == 1)
    }

    /// In a worker process the bridge cannot watch the host's main loop (extension sources/1
    /// answers SH_UNSUPPORTED there): its connection thread reads, and reconnects as before.
    @Test func inAWorker_theConnectionThreadReads_andReconnectsAfterTheBrokerRestarts() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try Self.fleetHost("h1", port: broker.port)
        try host.start(["--isolation", "process"])
        #expect(Self.subscribed(broker, "h1"))
        broker.stop()
        try broker.start()
        #expect(Self.subscribed(broker, "h1", times: 2))
        let pings = broker.count(.received, "PINGREQ", client: "h1")
        #expect(eventually { broker.count(.received, "PINGREQ", client: "h1") > pings }, "\(broker.log)")
        let records = host.stop().records
        let lines = Self.bridgeLines(records)
        #expect(lines.named("mqtt.connected").map { $0.fields["reader"] } == ["thread", "thread"], "\(records.text)")
        #expect(!lines.named("mqtt.disconnected").isEmpty, "\(records.text)")
    }

    @Test func hostileBroker_clearErrors_theHostKeepsServing_andARedeliveryIsDeliveredOnce() throws {
        let done = Flag()
        let accepted: [UInt8] = [0x20, 0x02, 0x00, 0x00]
        @Sendable func publish(_ id: UInt8, _ number: Int, dup: Bool) -> [UInt8] {
            let topic = Array("servicehost/h1/push".utf8)
            let payload = Array(Self.push(number).utf8)
            let body = [0, UInt8(topic.count)] + topic + [0, id] + payload
            return [dup ? 0x3A : 0x32, UInt8(body.count)] + body
        }
        let fake = try FakeBroker { number, connection in
            _ = FakeBroker.read(connection)  // CONNECT
            switch number {
            case 1: FakeBroker.write(connection, [0x20, 0x02, 0x00, 0x05])  // not authorized
            case 2:
                FakeBroker.write(connection, accepted)
                _ = FakeBroker.read(connection)  // SUBSCRIBE
                FakeBroker.write(connection, [0x90, 0xFF, 0xFF, 0xFF, 0x7F])  // a 256 MiB SUBACK announced
            case 3:
                FakeBroker.write(connection, accepted)
                _ = FakeBroker.read(connection)
                FakeBroker.write(connection, [0x41, 0x02, 0x00, 0x01])  // PUBACK with reserved flags
            case 4:
                FakeBroker.write(connection, accepted)
                _ = FakeBroker.read(connection)
                FakeBroker.write(connection, [0x90, 0x03, 0x00, 0x01, 0x01] + publish(5, 1, dup: false))
                var seen = FakeBroker.read(connection)
                while !seen.contains(0x40) { seen += FakeBroker.read(connection) }  // its PUBACK
                FakeBroker.write(connection, publish(5, 1, dup: true))  // redelivered: acknowledged only
                seen = FakeBroker.read(connection)
                while !seen.contains(0x40) { seen += FakeBroker.read(connection) }
                FakeBroker.write(connection, publish(6, 2, dup: false))
                seen = FakeBroker.read(connection)
                while !seen.contains(0x40) { seen += FakeBroker.read(connection) }
                done.set()
                while !FakeBroker.read(connection).isEmpty {}
            default: break
            }
        }
        let host = try Self.fleetHost("h1", port: fake.port, extra: #", "protocol": "3.1.1""#)
        try host.start()
        #expect(eventually { done.isSet })
        #expect(try host.ctl("state").status == 0)  // the host kept serving throughout
        let records = host.stop().records
        let lines = Self.bridgeLines(records)
        #expect(lines.named("mqtt.refused").map { $0.fields["code"] } == ["5"], "\(records.text)")
        let errors = lines.named("mqtt.protocolError").map { [$0.fields["error"], $0.fields["packet"]] }
        #expect(errors == [["tooLarge", nil], ["malformed", "PUBACK"]], "\(records.text)")
        #expect(lines.named("mqtt.duplicate").map { $0.fields["packet"] } == ["5"], "\(records.text)")
        #expect(Self.deliveries(of: 1, in: records) == 1 && Self.deliveries(of: 2, in: records) == 1)
    }

    /// The payload's `replyTo` works in both protocols (MQTT 5 also has the response topic).
    @Test(arguments: ["3.1.1", "5"])
    func commandsOnCtl_areAnsweredOnTheirReplyTopic_andWatchIsRefusedToAService(protocol: String) throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try Self.fleetHost(
            "h1", port: broker.port, requests: "all", extra: #", "commands": true, "protocol": "\#(`protocol`)""#)
        try host.start()
        #expect(Self.subscribed(broker, "h1"))
        let replies = try broker.subscriber("replies/h1", count: 2, client: "dashboard")
        try broker.publish("servicehost/h1/ctl", #"{"command":"state","replyTo":"replies/h1"}"#)
        // `watch` would turn a socket connection into a stream; a service's request has none.
        try broker.publish("servicehost/h1/ctl", #"{"command":"watch","replyTo":"replies/h1"}"#)
        let objects = replies.wait().stdout.split(separator: "\n").map {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:]
        }
        #expect(objects.count == 2, "\(objects)")
        #expect(objects.first?["ok"] as? Bool == true && objects.first?["state"] as? String == "active", "\(objects)")
        #expect(objects.last?["ok"] as? Bool == false, "\(objects)")
        let records = host.stop().records
        #expect(records.named(.requestRefused).map(\.source) == [Self.bridge], "\(records.text)")
    }

    /// Issue 36, item 2: one QoS 1 message over `maxPacket` on the fleet's topic no longer cuts
    /// the host off (dropped connection, redelivered first at every reconnection, for ever).
    @Test(arguments: ["3.1.1", "5"])
    func anOversizedMessage_isReadPast_acknowledged_loggedOnce_andLaterMessagesArrive(protocol: String) throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try Self.fleetHost(
            "h1", port: broker.port, extra: #", "maxPacket": 1024, "protocol": "\#(`protocol`)""#)
        try host.start()
        #expect(Self.subscribed(broker, "h1"))
        let big = #"{"aps":{"alert":"\#(String(repeating: "x", count: 4000))"},"n":1}"#
        try broker.publish("servicehost/all/push", big)
        try broker.publish("servicehost/h1/push", Self.push(2))
        try broker.publish("servicehost/all/push", Self.push(3))
        #expect(eventually { broker.acknowledgements(from: "h1") >= 3 })
        #expect(try host.ctl("state").status == 0)
        let records = host.stop().records
        let lines = Self.bridgeLines(records)
        let oversized = lines.named("mqtt.oversized")
        #expect(oversized.count == 1, "\(records.text)")
        // The remaining length: the topic's length field and bytes, the packet id, (MQTT 5) an
        // empty property list's length, the payload.
        let size = 2 + "servicehost/all/push".utf8.count + 2 + (`protocol` == "5" ? 1 : 0) + big.utf8.count
        #expect(oversized.first?.fields["bytes"] == String(size), "\(records.text)")
        #expect(oversized.first?.fields["topic"] == "servicehost/all/push", "\(records.text)")
        #expect(oversized.first?.fields["packet"] != nil, "\(records.text)")
        #expect(lines.named("mqtt.connected").count == 1, "\(records.text)")
        #expect(lines.named("mqtt.protocolError").isEmpty, "\(records.text)")
        #expect(Self.deliveries(of: 1, in: records) == 0)
        #expect(Self.deliveries(of: 2, in: records) == 1 && Self.deliveries(of: 3, in: records) == 1)
    }

    /// Issue 36, item 2: a session the broker accepts and drops at once does not reset the
    /// backoff; one that acknowledged a message does.
    @Test func sessionsThatFailAtOnce_keepTheBackoff_andOneThatAcknowledged_resetsIt() throws {
        let acknowledged = Flag()
        let fake = try FakeBroker { number, connection in
            _ = FakeBroker.read(connection)  // CONNECT
            FakeBroker.write(connection, [0x20, 0x02, 0x00, 0x00])
            _ = FakeBroker.read(connection)  // SUBSCRIBE
            guard number == 3 else { return }  // dropped at once
            let topic = Array("servicehost/h1/push".utf8)
            let payload = Array(Self.push(1).utf8)
            let body = [0, UInt8(topic.count)] + topic + [0, 7] + payload
            FakeBroker.write(connection, [0x32, UInt8(body.count)] + body)
            var seen = FakeBroker.read(connection)
            while !seen.isEmpty && !seen.contains(0x40) { seen += FakeBroker.read(connection) }
            if seen.contains(0x40) { acknowledged.set() }
        }
        let host = try Self.fleetHost("h1", port: fake.port, extra: #", "protocol": "3.1.1""#)
        try host.start()
        #expect(eventually { fake.connectionCount >= 5 })
        let records = host.stop().records
        #expect(acknowledged.isSet)
        let ends = Self.bridgeLines(records).named("mqtt.disconnected").prefix(4)
        #expect(ends.map { $0.fields["failures"] } == ["1", "2", "0", "1"], "\(records.text)")
        #expect(ends.map { $0.fields["acknowledged"] } == ["0", "0", "1", "0"], "\(records.text)")
    }

    /// Issue 36, item 3: with commands off (the default) a `ctl` message is refused,
    /// acknowledged, and nothing is published in reply, whatever its `replyTo`.
    @Test func commandsOff_nothingIsPublishedInReply_andTheRefusalIsAcknowledged() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try Self.fleetHost("h1", port: broker.port)
        try host.start()
        #expect(Self.subscribed(broker, "h1"))
        for replyTo in ["servicehost/h1/post/queue.flush", "x/#", "replies/h1"] {
            try broker.publish("servicehost/h1/ctl", #"{"command":"state","replyTo":"\#(replyTo)"}"#)
        }
        try broker.publish("servicehost/h1/push", Self.push(1))
        #expect(eventually { broker.acknowledgements(from: "h1") >= 4 })
        let records = host.stop().records
        let lines = Self.bridgeLines(records)
        #expect(Set(broker.topics(publishedBy: "h1")) == ["servicehost/h1/state"], "\(broker.log)")
        let refused = lines.named("mqtt.commandRefused").map { $0.fields["reason"] }
        #expect(refused == ["commandsOff", "commandsOff", "commandsOff"], "\(records.text)")
        #expect(lines.named("mqtt.connected").count == 1, "\(records.text)")
        #expect(Self.deliveries(of: 1, in: records) == 1)
    }

    /// Issue 36, item 3: with commands on, replies go only where ReplyTopic's rule allows; a
    /// command with another `replyTo` is refused and acknowledged, and the host stays connected.
    @Test func commandsOn_repliesGoOnlyToAllowedTopics() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try Self.fleetHost("h1", port: broker.port, requests: "all", extra: #", "commands": true"#)
        try host.start()
        #expect(Self.subscribed(broker, "h1"))
        let refused = [
            "servicehost/h1/post/queue.flush", "x/#", "servicehost/all/push", "servicehost/h2/ctl", "$SYS/x",
        ]
        let allowed = ["servicehost/h1/reply", "replies/h1"]
        for replyTo in refused + allowed {
            try broker.publish("servicehost/h1/ctl", #"{"command":"state","replyTo":"\#(replyTo)"}"#)
        }
        let total = refused.count + allowed.count
        #expect(eventually { broker.acknowledgements(from: "h1") >= total })
        let records = host.stop().records
        let lines = Self.bridgeLines(records)
        #expect(broker.topics(publishedBy: "h1").filter { $0 != "servicehost/h1/state" } == allowed, "\(broker.log)")
        let reasons = lines.named("mqtt.commandRefused").map { $0.fields["reason"] }
        #expect(reasons == Array(repeating: "replyTopic", count: refused.count), "\(records.text)")
        #expect(lines.named("mqtt.connected").count == 1, "\(records.text)")
    }

    /// Issue 36, item 4: a retained push or post is delivered once, across a broker restart
    /// (persistent broker) and a host restart; a retained command is never carried out.
    @Test func retainedMessages_areDeliveredOnce_acrossReconnectsAndRestarts_andRetainedCommandsNever() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch, persistent: true)
        try broker.publish("servicehost/all/push", Self.push(1), retain: true)
        try broker.publish("servicehost/h1/push", Self.push(2), retain: true)
        try broker.publish("servicehost/all/post/hello", #"{"n":3}"#, retain: true)
        try broker.publish(
            "servicehost/h1/ctl", #"{"command":"push","payload":{"aps":{"alert":"stale"},"n":9}}"#, retain: true)
        let host = try Self.fleetHost(
            "h1", port: broker.port, requests: "all", extra: #", "commands": true"#,
            probeEvents: "|SH_EVENT_BIT(SH_EVENT_NOTIFICATION)")
        try host.start()
        #expect(eventually { broker.acknowledgements(from: "h1") >= 4 })
        broker.stop()
        try broker.start()
        #expect(Self.subscribed(broker, "h1", times: 2))
        #expect(eventually { broker.acknowledgements(from: "h1") >= 8 })
        let first = host.stop()
        try host.start()
        #expect(Self.subscribed(broker, "h1", times: 3))
        #expect(eventually { broker.acknowledgements(from: "h1") >= 12 })
        try broker.publish("servicehost/h1/push", Self.push(4))
        #expect(eventually { broker.acknowledgements(from: "h1") >= 13 })
        let records = first.records + host.stop().records
        for number in [1, 2, 4] { #expect(Self.deliveries(of: number, in: records) == 1, "push \(number)") }
        #expect(Self.deliveries(of: 9, in: records) == 0, "\(records.text)")
        let posts = records.probe(8).filter { $0.message.contains("name=hello") }
        #expect(posts.count == 1, "\(records.text)")
        let lines = Self.bridgeLines(records)
        #expect(lines.named("mqtt.commandRefused").map { $0.fields["reason"] } == ["retained", "retained", "retained"])
        let seen = lines.named("mqtt.duplicate").filter { $0.fields["retained"] == "true" }
        #expect(seen.count == 6, "\(records.text)")
    }

    @Test func withoutSettings_theBridgeOpensNoSocket() throws {
        func sockets(_ host: RunningHost) throws -> Int {
            let folder = "/proc/\(host.process!.pid)/fd"
            return try FileManager.default.contentsOfDirectory(atPath: folder).filter {
                ((try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)) ?? "").hasPrefix(
                    "socket:")
            }.count
        }
        let plain = try RunningHost()
        try plain.probe("probe", ["PROBE_ID=\"test.probe\""])
        try plain.start()
        let withBridge = try RunningHost()
        try withBridge.probe("probe", ["PROBE_ID=\"test.probe\""])
        try withBridge.scratch.copy(try Repository.product("libMQTTBridge.so"), to: "lib/libMQTTBridge.so")
        try withBridge.start()
        // The same sockets as a host without the bridge (its control socket and what the host itself keeps).
        #expect(try sockets(withBridge) == sockets(plain))
        plain.stop()
        let records = withBridge.stop().records
        #expect(Self.bridgeLines(records).named("mqtt.off").count == 1, "\(records.text)")
    }
}

/// One of the bridge's log lines: `EVENT key=value …: text`.
struct BridgeLine {
    let event: String
    let fields: [String: String]

    init?(_ message: String) {
        guard message.hasPrefix("mqtt."), let colon = message.firstIndex(of: ":") else { return nil }
        let words = message[..<colon].split(separator: " ")
        event = String(words[0])
        fields = Dictionary(
            words.dropFirst().compactMap { word in
                word.firstIndex(of: "=").map { (String(word[..<$0]), String(word[word.index(after: $0)...])) }
            },
            uniquingKeysWith: { _, last in last })
    }
}

extension Array where Element == BridgeLine {
    func named(_ event: String) -> [BridgeLine] { filter { $0.event == event } }
}

/// A flag a fake broker's thread sets and the test polls.
final class Flag: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
