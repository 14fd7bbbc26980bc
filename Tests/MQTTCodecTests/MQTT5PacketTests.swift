import MQTTCodec
import Testing

/// MQTT 5 packets (issue 41): every packet the bridge sends and receives round-trips with its
/// reason codes and properties, the bytes are those of the specification, and a hostile
/// MQTT 5 packet is refused with a reason naming it.
@Suite struct MQTT5PacketTests {
    static let request = MQTTProperties([
        (0x02, .fourByte(60)), (0x08, .string("servicehost/h1/reply/a")), (0x09, .binary([0xC0, 0x01])),
        (0x26, .pair("traceId", "t-17")),
    ])

    static let packets: [MQTTPacket] = [
        .connect(
            MQTTConnect(
                clientID: "kiosk-17", cleanSession: false, keepAlive: 30,
                will: MQTTPublish(
                    topic: "servicehost/kiosk-17/state", payload: Array("offline".utf8), qos: 1, retain: true,
                    properties: MQTTProperties([(0x18, .fourByte(5))])),
                username: "fleet", password: Array("secret".utf8),
                properties: MQTTProperties([(0x11, .fourByte(604_800))]))),
        .connect(MQTTConnect(clientID: "a", cleanSession: true, keepAlive: 0)),
        .connack(sessionPresent: true, returnCode: 0, properties: MQTTProperties([(0x21, .twoByte(20))])),
        .connack(sessionPresent: false, returnCode: 0x87, properties: MQTTProperties([(0x1F, .string("acl"))])),
        .publish(
            MQTTPublish(topic: "servicehost/h1/ctl", payload: Array("{}".utf8), qos: 1, id: 7, properties: request)),
        .publish(MQTTPublish(topic: "t", payload: [], qos: 0, retain: true)),
        .puback(id: 1), .puback(id: 2, reason: 0x10), .puback(id: 3, reason: 0x87),
        .pubrec(id: 2), .pubrel(id: 3), .pubcomp(id: 4),
        .subscribe(id: 9, filters: [MQTTSubscription("servicehost/x/push", qos: 1)]),
        .suback(id: 9, codes: [1, 0x87]),
        .unsubscribe(id: 10, filters: ["a/b"]), .unsuback(id: 10),
        .pingreq, .pingresp, .disconnect(),
        .disconnect(reason: 0x8E, properties: MQTTProperties([(0x1F, .string("taken over"))])),
        .disconnect(reason: 0x8B),
    ]

    @Test func everyPacketRoundTrips() throws {
        for packet in Self.packets {
            var reader = MQTTFrameReader(maxPacket: 1 << 20, version: .v5)
            reader.append(packet.encoded(version: .v5))
            #expect(try reader.next() == packet, "\(packet.name)")
            #expect(reader.pending == 0)
        }
    }

    @Test func theBytesAreTheSpecifications() {
        // CONNECT: protocol level 5, the properties after the keep-alive, before the client id.
        let connect = MQTTPacket.connect(
            MQTTConnect(
                clientID: "c", cleanSession: false, keepAlive: 30, properties: MQTTProperties([(0x11, .fourByte(60))]))
        ).encoded(version: .v5)
        #expect(
            connect == [0x10, 19, 0, 4] + Array("MQTT".utf8) + [5, 0, 0, 30, 5, 0x11, 0, 0, 0, 60, 0, 1]
                + Array("c".utf8))
        // PUBLISH: the properties between the packet id and the payload.
        #expect(
            MQTTPacket.publish(
                MQTTPublish(topic: "t", payload: [9], qos: 1, id: 1, properties: MQTTProperties([(0x02, .fourByte(0))]))
            ).encoded(version: .v5) == [0x32, 12, 0, 1, 0x74, 0, 1, 5, 0x02, 0, 0, 0, 0, 9])
        // A successful PUBACK without properties is the packet id alone (3.4.2.1).
        #expect(MQTTPacket.puback(id: 5).encoded(version: .v5) == [0x40, 2, 0, 5])
        // SUBSCRIBE: an empty property list, then the filter and its options.
        #expect(
            MQTTPacket.subscribe(id: 1, filters: [MQTTSubscription("a", qos: 1)]).encoded(version: .v5)
                == [0x82, 7, 0, 1, 0, 0, 1, 0x61, 1])
        // A normal DISCONNECT is an empty body.
        #expect(MQTTPacket.disconnect().encoded(version: .v5) == [0xE0, 0])
    }

    @Test func whatABrokerSends_isRead() throws {
        // A PUBACK with a reason code and no property length (3.4.2.1 allows leaving it out).
        var reader = MQTTFrameReader(maxPacket: 1024, version: .v5)
        reader.append([0x40, 3, 0, 7, 0x87, 0x90, 4, 0, 1, 0, 0x80, 0xE0, 1, 0x8B])
        #expect(try reader.next() == .puback(id: 7, reason: 0x87))
        #expect(try reader.next() == .suback(id: 1, codes: [0x80]))
        #expect(try reader.next() == .disconnect(reason: 0x8B))
        #expect(MQTTReasonCode.name(0x87, packet: "PUBACK") == "notAuthorized")
    }

    /// A 3.1.1 broker answers a version 5 CONNECT with its own CONNACK: two bytes, return code 1
    /// (unacceptable protocol version), no properties. It is the refusal, not a broken packet.
    @Test func aVersion311Refusal_isReadUnderVersion5() throws {
        var reader = MQTTFrameReader(maxPacket: 1024, version: .v5)
        reader.append([0x20, 2, 0, 1])
        #expect(try reader.next() == .connack(sessionPresent: false, returnCode: 1, properties: MQTTProperties()))
    }

    /// Server Keep Alive (0x13), read from a CONNACK.
    @Test func theServerKeepAlive_isReadFromTheConnack() throws {
        var reader = MQTTFrameReader(maxPacket: 1024, version: .v5)
        reader.append([0x20, 6, 0, 0, 3, 0x13, 0, 20])
        guard case .connack(_, 0, let properties)? = try reader.next() else {
            Issue.record("not an accepting CONNACK")
            return
        }
        #expect(properties.serverKeepAlive == 20)
    }

    /// Each hostile MQTT 5 packet is an error naming the packet, never a trap.
    @Test(arguments: [
        ([0x20, 3, 0, 0, 5] as [UInt8], "CONNACK"),  // 5 bytes of properties announced, none there
        ([0x30, 7, 0, 1, 0x74, 3, 0x02, 0, 0], "PUBLISH"),  // a property cut short
        ([0x30, 6, 0, 1, 0x74, 2, 0x7F, 0], "PUBLISH"),  // an unknown property
        ([0x30, 8, 0, 1, 0x74, 4, 0x01, 1, 0x01, 1], "PUBLISH"),  // a property given twice
        ([0x90, 3, 0, 1, 0], "SUBACK"),  // no reason codes after the properties
        ([0x82, 7, 0, 1, 0, 0, 1, 0x61, 0xC1], "SUBSCRIBE"),  // reserved option bits
        ([0xE0, 2, 0x8E, 9], "DISCONNECT"),  // a property length past the end
        ([0x40, 4, 0, 1, 0x87, 1], "PUBACK"),  // one byte of properties announced, none there
    ])
    func hostilePackets_areRefusedWithTheirName(bytes: [UInt8], packet: String) {
        var reader = MQTTFrameReader(maxPacket: 1024, version: .v5)
        reader.append(bytes)
        do {
            let read = try reader.next()
            Issue.record("accepted: \(String(describing: read))")
        } catch { #expect(error.packet == packet, "\(error)") }
    }
}
