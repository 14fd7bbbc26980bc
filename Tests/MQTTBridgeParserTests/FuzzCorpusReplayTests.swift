import Foundation
import MQTTCodec
import ServiceKit
import TestSupport
import Testing

@testable import MQTTBridge

/// Replays the `bridge` fuzz target's seeds (Tests/Fuzz/Corpus/bridge) through MQTTBridge's
/// own readers, so every committed input runs in `swift test` without libFuzzer: settings
/// (`settings-*.json`), broker addresses (`address-*.txt`) and the delivered-pairs store
/// (`delivered-*.bin`) and the hand-over state and its channel (`handover-*.bin`).
@Suite struct FuzzCorpusReplayTests {
    static func seed(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Repository.root.appendingPathComponent("Tests/Fuzz/Corpus/bridge/\(name)")))
    }

    static func settings(_ name: String) throws -> MQTTBridgeSettings? {
        try MQTTBridgeSettings.read(try JSONValue(parsing: try seed(name)))
    }

    @Test func theSettingsSeeds_readEveryField() throws {
        let full = try #require(try Self.settings("settings-full.json"))
        #expect(full.broker == .tcp(host: "127.0.0.1", port: 1883))
        #expect(full.hostID == "kiosk-17")
        #expect(full.clientID == "k17")
        #expect(full.prefix == "fleet/kiosk-17")
        #expect(full.username == "u")
        #expect(full.keepAlive == 60)
        #expect(full.qos == 0)
        #expect(full.commands)
        #expect(full.maxPacket == 65536)
        #expect(full.protocolVersion == .v3_1_1)

        let unix = try #require(try Self.settings("settings-unix.json"))
        #expect(unix.broker == .unix(path: "/run/mosquitto/mqtt.sock"))
        #expect(unix.hostID == MQTTBridgeSettings.machineName())
        #expect(unix.clientID == unix.hostID)
        #expect(unix.prefix == "servicehost/\(unix.hostID)")
        #expect(unix.keepAlive == 30 && unix.qos == 1 && !unix.commands && unix.maxPacket == 1 << 20)
        #expect(unix.protocolVersion == .v5 && unix.sessionExpiry == 604_800)
    }

    /// Each refusal names the setting it refuses (the key is the message's subject).
    @Test(arguments: [
        ("settings-port-zero.json", "settings.broker"),
        ("settings-other-scheme.json", "settings.broker"),
        ("settings-keepalive-huge.json", "settings.keepAlive"),
        ("settings-maxpacket-negative.json", "settings.maxPacket"),
        ("settings-hostid-slash.json", "settings.hostId"),
        ("settings-unknown-key.json", "\"brokr\""),
        ("settings-protocol-4.json", "settings.protocol"),
    ])
    func theRefusedSettingsSeeds_nameTheirKey(name: String, key: String) throws {
        let value = try JSONValue(parsing: try Self.seed(name))
        #expect {
            _ = try MQTTBridgeSettings.read(value)
        } throws: { error in
            (error as? MQTTBridgeSettings.Problem)?.description.contains(key) == true
        }
    }

    @Test func theAddressSeeds_areReadOrRefused() throws {
        func parse(_ name: String) throws -> Result<BrokerAddress, MQTTBridgeSettings.Problem> {
            let text = String(decoding: try Self.seed(name), as: UTF8.self)
            return Result { () throws(MQTTBridgeSettings.Problem) in try BrokerAddress.parse(text) }
        }
        // Brackets are taken off once: what is left is a name for the resolver to refuse.
        #expect(try parse("address-brackets.txt").get() == .tcp(host: "[]", port: 1883))
        #expect(throws: MQTTBridgeSettings.Problem.self) { try parse("address-unix-relative.txt").get() }
        #expect(throws: MQTTBridgeSettings.Problem.self) { try parse("address-port-too-large.txt").get() }
    }

    @Test func theDeliveredSeeds_keepTheLastPairs_andReadBack() throws {
        let key = DeliveredMessages.Key(id: 7, digest: 0x0123_4567_89AB_CDEF)
        // 1030 whole pairs and a 3-byte tail: the last 1024 kept (pairs 6 to 1029), four of
        // them with id 7 (pairs 7, 263, 519, 775) replaced by the new one.
        let over = DeliveredMessages()
        over.restore(try Self.seed("delivered-over-capacity.bin"))
        let written = over.insert(key)
        #expect(written.count == (1024 - 4 + 1) * 10)
        #expect(Array(written.prefix(10)) == [0, 6, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(written.suffix(10)) == [0, 7, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF])
        let again = DeliveredMessages()
        again.restore(written)
        #expect(again.insert(key) == written)

        // The same id twice: both copies go, the new pair stays.
        let twice = DeliveredMessages()
        twice.restore(try Self.seed("delivered-id-7-twice.bin"))
        #expect(twice.contains(.init(id: 7, digest: 0xFFFF_FFFF_FFFF_FFFF)))
        #expect(twice.insert(key) == [0, 7, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF])
    }

    /// The hand-over seeds (issue 42): a full state and one with the windows alone read back as
    /// written; the channel's records come out in order.
    @Test func theHandOverSeeds_readBack() throws {
        #expect(try BridgeHandOver.parse(try Self.seed("handover-full.bin")) == BridgeHandOverTests.full)
        let windowsSeed = try Self.seed("handover-windows.bin")
        let windows = try BridgeHandOver.parse(windowsSeed)
        #expect(windows == BridgeHandOver(pid: 1) && windows.encoded == windowsSeed)
        var buffer = try Self.seed("handover-channel.bin")
        var records: [ChannelRecord] = []
        while let record = try ChannelRecord.next(from: &buffer) { records.append(record) }
        #expect(records == [.delivered(id: 5, digest: 77), .write([0x40, 2, 0, 5]), .retained(3)] && buffer.isEmpty)
    }
}
