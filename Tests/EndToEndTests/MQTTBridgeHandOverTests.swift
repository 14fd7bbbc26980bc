import Foundation
import TestSupport
import Testing

/// MQTTBridge across a reload (issue 42 item 4) against a real Mosquitto: a reload to a new
/// version of its file and a restart by request each hand the live connection to the
/// replacement in the host's process (willReload), which goes on without a new CONNECT, while
/// pushes keep arriving; each is delivered exactly once, and no descriptor is left behind.
@Suite(.timeLimit(.minutes(10)), .enabled(if: Mosquitto.installed != nil, "needs mosquitto (see the SKIPPED banner)"))
struct MQTTBridgeHandOverTests {
    static func sockets(_ host: RunningHost) -> Int {
        let folder = "/proc/\(host.process!.pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter {
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)) ?? "").hasPrefix("socket:")
        }.count
    }

    /// The connections the broker accepted from `client` (Mosquitto logs a CONNECT as `New
    /// client connected from ADDRESS as CLIENT (p5, c0, k5).`, not as a received packet).
    static func connections(_ broker: Mosquitto, _ client: String) -> Int {
        broker.log.split(separator: "\n").filter {
            $0.contains("New client connected from ") && $0.contains(" as \(client) (")
        }
        .count
    }

    @Test func aReloadAndARestart_goOnWithTheConnection_andEveryPushIsDeliveredOnce() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try MQTTBridgeTests.fleetHost("h1", port: broker.port)
        try host.start()
        #expect(MQTTBridgeTests.subscribed(broker, "h1"))
        try broker.publish("servicehost/h1/push", MQTTBridgeTests.push(1))
        #expect(eventually { broker.acknowledgements(from: "h1") >= 1 })
        let before = Self.sockets(host)
        // 150 pushes, one every 10 ms, all through the reload and the restart.
        let publisher = try Command.start(
            "/usr/bin/mosquitto_pub",
            [
                "-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-t", "servicehost/h1/push",
                "-m", MQTTBridgeTests.push(2), "--repeat", "150", "--repeat-delay", "0.01",
            ])
        #expect(eventually { broker.acknowledgements(from: "h1") >= 10 })
        // A new version of the bridge's file: its bytes and one more (a loader reads what the
        // ELF headers name, not what follows).
        var bytes = try Data(contentsOf: URL(fileURLWithPath: try Repository.product("libMQTTBridge.so")))
        bytes.append(0)
        try bytes.write(to: URL(fileURLWithPath: host.lib + "/.libMQTTBridge.so.new"))
        #expect(rename(host.lib + "/.libMQTTBridge.so.new", host.lib + "/libMQTTBridge.so") == 0)
        let reload = try host.ctlJSON("reload")
        #expect(reload.reply["replaced"] as? [String] == [MQTTBridgeTests.bridge], "\(reload.reply)")
        #expect(eventually { broker.acknowledgements(from: "h1") >= 50 })
        #expect(try host.ctl("service", "restart", MQTTBridgeTests.bridge).status == 0)
        #expect(publisher.wait().status == 0)
        #expect(eventually { broker.acknowledgements(from: "h1") >= 151 })
        // What the old copies held is closed: the same sockets as before the reload.
        #expect(eventually { Self.sockets(host) == before }, "\(Self.sockets(host)) sockets, \(before) before")
        let state = try broker.retained("servicehost/h1/state") ?? ""
        #expect(state.contains(#""status":"online""#), "\(state)")
        let records = host.stop().records

        // One CONNECT for the whole run: the replacements went on with the connection.
        #expect(Self.connections(broker, "h1") == 1, "\(broker.log)")
        let lines = MQTTBridgeTests.bridgeLines(records)
        #expect(lines.named("mqtt.connected").count == 1, "\(records.text)")
        #expect(lines.named("mqtt.handedOver").count == 2, "\(records.text)")
        // In the host's process the main loop reads the socket, before and after each hand-over.
        #expect(lines.named("mqtt.adopted").map { $0.fields["reader"] } == ["mainLoop", "mainLoop"], "\(records.text)")
        #expect(lines.named("mqtt.connected").map { $0.fields["reader"] } == ["mainLoop"], "\(records.text)")
        #expect(lines.named("mqtt.handOverRefused").isEmpty, "\(records.text)")
        #expect(lines.named("mqtt.disconnected").isEmpty, "\(records.text)")
        let handed = records.named(.reloadStateHandedOver).filter { $0.string("service") == MQTTBridgeTests.bridge }
        #expect(handed.count == 2, "\(records.text)")
        // Every push once: none lost in the hand-overs, none delivered twice.
        #expect(MQTTBridgeTests.deliveries(of: 1, in: records) == 1)
        #expect(MQTTBridgeTests.deliveries(of: 2, in: records) == 150, "\(records.text)")
        #expect(broker.acknowledgements(from: "h1") == 151)
    }

    /// A replacement that does not take the connection (here: new settings without a broker):
    /// the old copy ends it as a stop does once the reload is over, `offline` and DISCONNECT,
    /// and no descriptor is left open.
    @Test func aConnectionNobodyTakes_isDisconnectedAfterTheReload_andNothingLeaks() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try MQTTBridgeTests.fleetHost("h1", port: broker.port)
        try host.start()
        #expect(MQTTBridgeTests.subscribed(broker, "h1"))
        let connected = Self.sockets(host)
        _ = try host.file("lib/services.json", #"{"services": {"\#(MQTTBridgeTests.bridge)": {"requests": "events"}}}"#)
        let reload = try host.ctlJSON("reload")
        #expect(reload.status == 0, "\(reload.reply)")
        #expect(eventually { broker.count(.received, "DISCONNECT", client: "h1") == 1 }, "\(broker.log)")
        #expect(
            eventually { Self.sockets(host) == connected - 1 }, "\(Self.sockets(host)) sockets, \(connected) before")
        #expect(try broker.retained("servicehost/h1/state") == "offline")
        let records = host.stop().records
        let lines = MQTTBridgeTests.bridgeLines(records)
        #expect(lines.named("mqtt.handedOver").count == 1, "\(records.text)")
        #expect(lines.named("mqtt.handOverUnclaimed").count == 1, "\(records.text)")
        #expect(lines.named("mqtt.off").count == 1, "\(records.text)")
    }

    /// In a worker the replacement is another process: no descriptor crosses. The old copy
    /// stops as before (DISCONNECT, so no will) and the new worker's copy connects anew, the
    /// broker keeping the session (clean session 0, `sessionExpiry`).
    @Test func inAWorker_aRestartDisconnectsAndConnectsAnew_withTheSessionKept() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try MQTTBridgeTests.fleetHost("h1", port: broker.port)
        try host.start(["--isolation", "process"])
        #expect(MQTTBridgeTests.subscribed(broker, "h1"))
        #expect(try host.ctl("service", "restart", MQTTBridgeTests.bridge).status == 0)
        #expect(MQTTBridgeTests.subscribed(broker, "h1", times: 2))
        let records = host.stop().records
        #expect(Self.connections(broker, "h1") == 2, "\(broker.log)")
        let lines = MQTTBridgeTests.bridgeLines(records)
        #expect(
            lines.named("mqtt.connected").map { $0.fields["sessionPresent"] } == ["false", "true"], "\(records.text)")
        // A worker's service cannot watch the host's main loop (sources/1 answers SH_UNSUPPORTED):
        // the connection thread reads the socket.
        #expect(lines.named("mqtt.connected").map { $0.fields["reader"] } == ["thread", "thread"], "\(records.text)")
        #expect(lines.named("mqtt.handedOver").isEmpty && lines.named("mqtt.adopted").isEmpty, "\(records.text)")
        #expect(broker.count(.received, "DISCONNECT", client: "h1") == 2, "\(broker.log)\n\(records.text)")
    }

    /// New connection settings (here the keep-alive): the replacement does not go on with a
    /// connection made with others; it disconnects it (no will) and connects anew.
    @Test func newConnectionSettings_disconnectTheHandedOverConnection_andConnectAnew() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let host = try MQTTBridgeTests.fleetHost("h1", port: broker.port)
        try host.start()
        #expect(MQTTBridgeTests.subscribed(broker, "h1"))
        _ = try host.file(
            "lib/services.json",
            """
            {"services": {"\(MQTTBridgeTests.bridge)": {"requests": "events", "settings":
              {"broker": "tcp://127.0.0.1:\(broker.port)", "hostId": "h1", "keepAlive": 6}}}}
            """)
        #expect(try host.ctlJSON("reload").status == 0)
        #expect(MQTTBridgeTests.subscribed(broker, "h1", times: 2))
        try broker.publish("servicehost/h1/push", MQTTBridgeTests.push(1))
        #expect(eventually { broker.acknowledgements(from: "h1") >= 1 })
        #expect(try broker.retained("servicehost/h1/state")?.contains(#""status":"online""#) == true)
        let records = host.stop().records
        #expect(Self.connections(broker, "h1") == 2, "\(broker.log)")
        #expect(broker.count(.received, "DISCONNECT", client: "h1") == 2, "\(broker.log)")
        let lines = MQTTBridgeTests.bridgeLines(records)
        #expect(lines.named("mqtt.handOverRefused").map { $0.fields["reason"] } == ["settings"], "\(records.text)")
        #expect(lines.named("mqtt.handOverUnclaimed").isEmpty && lines.named("mqtt.adopted").isEmpty)
        #expect(MQTTBridgeTests.deliveries(of: 1, in: records) == 1)
    }
}
