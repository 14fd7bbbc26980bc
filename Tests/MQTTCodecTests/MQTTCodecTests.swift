import Testing

@testable import MQTTCodec

/// The bridge's MQTT 3.1.1 codec: every packet it sends and receives round-trips, and what a
/// hostile broker can send is refused with a reason naming the packet.
@Suite struct MQTTCodecTests {
    static let packets: [MQTTPacket] = [
        .connect(
            MQTTConnect(
                clientID: "kiosk-17", cleanSession: false, keepAlive: 30,
                will: MQTTPublish(
                    topic: "servicehost/kiosk-17/state", payload: Array("offline".utf8), qos: 1, retain: true),
                username: "fleet", password: Array("secret".utf8))),
        .connect(MQTTConnect(clientID: "a", cleanSession: true, keepAlive: 0)),
        .connack(sessionPresent: true, returnCode: 0),
        .connack(sessionPresent: false, returnCode: 5),
        .publish(
            MQTTPublish(
                topic: "servicehost/all/push", payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8), qos: 1, dup: true, id: 7
            )),
        .publish(MQTTPublish(topic: "t", payload: [], qos: 0, retain: true)),
        .publish(MQTTPublish(topic: "big", payload: [UInt8](repeating: 0xAB, count: 20_000), qos: 1, id: 65535)),
        .puback(id: 1), .pubrec(id: 2), .pubrel(id: 3), .pubcomp(id: 4),
        .subscribe(
            id: 9,
            filters: [
                MQTTSubscription("servicehost/x/push", qos: 1), MQTTSubscription("servicehost/all/post/+", qos: 1),
            ]),
        .suback(id: 9, codes: [1, 0x80]),
        .unsubscribe(id: 10, filters: ["a/b"]), .unsuback(id: 10),
        .pingreq, .pingresp, .disconnect(),
    ]

    @Test func aLargePacketsBuffer_isGivenBackOnceRead() throws {
        var reader = MQTTFrameReader(maxPacket: 1 << 20)
        let piece = MQTTPacket.publish(
            MQTTPublish(
                topic: "servicehost/bundles/x/0", payload: [UInt8](repeating: 7, count: 400_000), qos: 0, retain: true))
        reader.append(piece.encoded())
        #expect(try reader.next() == piece)
        #expect(reader.bufferCapacity == 0, "an emptied buffer over \(MQTTFrameReader.keptCapacity) bytes is freed")
        // A usual packet's buffer is kept for the next.
        reader.append(MQTTPacket.pingresp.encoded())
        #expect(try reader.next() == .pingresp)
        #expect(reader.bufferCapacity > 0 && reader.bufferCapacity <= MQTTFrameReader.keptCapacity)
    }

    /// A long PUBLISH read in pieces (a bundle's piece off the socket, 64 KiB at a time, MQTT 5
    /// properties and the next packet's start in the last read) is collected into its payload
    /// as it comes: the buffer never holds it, and the packet is the one sent.
    @Test func aLongPublishReadInPieces_isCollected_notBuffered() throws {
        let properties = MQTTProperties([(0x26, .pair("trace", "t-1")), (0x02, .fourByte(60))])
        let piece = MQTTPacket.publish(
            MQTTPublish(
                topic: "servicehost/bundles/x/0", payload: (0..<400_000).map { UInt8(truncatingIfNeeded: $0) },
                qos: 1, retain: true, id: 9, properties: properties))
        let stream = piece.encoded(version: .v5) + MQTTPacket.pingresp.encoded(version: .v5)
        var reader = MQTTFrameReader(maxPacket: 1 << 20, version: .v5)
        var decoded: [MQTTPacket] = []
        var largest = 0
        for start in stride(from: 0, to: stream.count, by: 65536) {
            reader.append(stream[start..<min(start + 65536, stream.count)])
            while let packet = try reader.next() { decoded.append(packet) }
            largest = max(largest, reader.bufferCapacity)
        }
        #expect(decoded == [piece, .pingresp])
        #expect(largest <= MQTTFrameReader.keptCapacity, "\(largest) bytes buffered")
        #expect(reader.pending == 0 && !reader.isReadingPast)
    }

    @Test func everyPacketRoundTrips() throws {
        for packet in Self.packets {
            var reader = MQTTFrameReader(maxPacket: 1 << 20)
            reader.append(packet.encoded())
            #expect(try reader.next() == packet, "\(packet.name)")
            #expect(reader.pending == 0)
        }
    }

    @Test func packetsSplitAcrossReadsAreReassembled() throws {
        let stream = Self.packets.flatMap { $0.encoded() }
        var reader = MQTTFrameReader(maxPacket: 1 << 20)
        var decoded: [MQTTPacket] = []
        for byte in stream {
            reader.append([byte])
            while let packet = try reader.next() { decoded.append(packet) }
        }
        #expect(decoded == Self.packets)
    }

    @Test func remainingLengthUsesTheSpecificationsExamples() {
        // 3.1.1 section 2.2.3: 127 is one byte, 128 two, 16 383 two, 16 384 three.
        #expect(
            MQTTPacket.publish(MQTTPublish(topic: "t", payload: [UInt8](repeating: 0, count: 124))).encoded()[1...1]
                == [127])
        #expect(
            MQTTPacket.publish(MQTTPublish(topic: "t", payload: [UInt8](repeating: 0, count: 125))).encoded()[1...2]
                == [0x80, 0x01])
        #expect(
            MQTTPacket.publish(MQTTPublish(topic: "t", payload: [UInt8](repeating: 0, count: 16_381))).encoded()[1...3]
                == [0x80, 0x80, 0x01])
    }

    @Test func a256MiBRemainingLengthIsRefusedFromItsHeaderAlone() {
        var reader = MQTTFrameReader(maxPacket: 1 << 20)
        reader.append([0x30, 0x80, 0x80, 0x80, 0x80 | 0x01])  // 5 length bytes: malformed
        #expect(throws: MQTTError.self) { try reader.next() }
        var large = MQTTFrameReader(maxPacket: 1 << 20)
        large.append([0x90, 0xFF, 0xFF, 0xFF, 0x7F])  // a SUBACK of 268 435 455 bytes announced, none sent
        do {
            _ = try large.next()
            Issue.record("a 256 MiB packet was not refused")
        } catch {
            #expect(error.code == .tooLarge)
            #expect(error.description.contains("268435455"))
        }
    }

    /// Issue 36, item 2: a PUBLISH over the limit is read past, its payload never buffered,
    /// and given as skipped (topic, id, size) so the client acknowledges it; the stream goes on.
    @Test(arguments: [1, 7, 100, 4096])
    func anOversizedPublishIsReadPast_withoutBufferingIt(step: Int) throws {
        let big = MQTTPublish(
            topic: "servicehost/all/push", payload: [UInt8](repeating: 0x78, count: 50_000), qos: 1, dup: true, id: 9)
        let bytes = MQTTPacket.publish(big).encoded() + MQTTPacket.pingresp.encoded()
        var reader = MQTTFrameReader(maxPacket: 1024)
        var frames: [MQTTFrame] = []
        var most = 0
        var offset = 0
        while offset < bytes.count {
            reader.append(bytes[offset..<min(offset + step, bytes.count)])
            offset += step
            while let frame = try reader.nextFrame() { frames.append(frame) }
            most = max(most, reader.pending)
        }
        let size = 2 + big.topic.utf8.count + 2 + big.payload.count
        let skipped = MQTTSkippedPublish(
            topic: big.topic, qos: 1, retain: false, dup: true, id: 9, size: size)
        #expect(frames == [.skipped(skipped), .packet(.pingresp)])
        // At most one read, or the fixed and variable headers, are ever held.
        #expect(most <= max(step, 4 + 2 + big.topic.utf8.count + 2))
        #expect(reader.pending == 0)
    }

    @Test func nextPassesOverAnOversizedPublish_andA256MiBOneCostsNothing() throws {
        var reader = MQTTFrameReader(maxPacket: 1024)
        reader.append(
            MQTTPacket.publish(MQTTPublish(topic: "t", payload: [UInt8](repeating: 1, count: 2000))).encoded()
                + MQTTPacket.puback(id: 3).encoded())
        #expect(try reader.next() == .puback(id: 3))
        var huge = MQTTFrameReader(maxPacket: 1024)
        huge.append([0x32, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x01, 0x61, 0x00, 0x05])  // topic "a", id 5
        #expect(try huge.nextFrame() == nil)
        for _ in 0..<16 {
            huge.append([UInt8](repeating: 0, count: 65536))
            #expect(try huge.nextFrame() == nil)
            #expect(huge.pending == 0)
        }
    }

    @Test func anOversizedPublishWithABadHeader_isRefusedWithItsReason() {
        for (bytes, reason) in [
            ([0x32, 0x80, 0x10, 0xFF, 0xFF], "topic in a 2048-byte packet"),
            ([0x32, 0x80, 0x10, 0x00, 0x01, 0x23, 0x00, 0x01], "wildcard"),
            ([0x32, 0x80, 0x10, 0x00, 0x01, 0x61, 0x00, 0x00], "packet identifier 0"),
            ([0x36, 0x80, 0x10, 0x00, 0x01, 0x61, 0x00, 0x01], "QoS 3"),
        ] as [([UInt8], String)] {
            var reader = MQTTFrameReader(maxPacket: 1024)
            reader.append(bytes)
            do {
                let frame = try reader.nextFrame()
                Issue.record("accepted \(String(describing: frame))")
            } catch {
                #expect(error.packet == "PUBLISH" && error.description.contains(reason), "\(error)")
            }
        }
    }

    @Test(
        arguments: [
            ([0x20, 0x02, 0x02, 0x00], "reserved acknowledge flags"),  // CONNACK with flag bit 1
            ([0x20, 0x03, 0x00, 0x00, 0x00], "after the packet's last field"),
            ([0x32, 0x03, 0x00, 0x01, 0x61], "ends early"),  // QoS 1 PUBLISH without its id
            ([0x36, 0x05, 0x00, 0x01, 0x61, 0x00, 0x01], "QoS 3"),
            ([0x30, 0x03, 0x00, 0x01, 0x23], "wildcard"),  // topic "#"
            ([0x30, 0x04, 0x00, 0x02, 0xC3, 0x28], "not valid UTF-8"),
            ([0x38, 0x03, 0x00, 0x01, 0x61], "DUP set on a QoS 0"),
            ([0x41, 0x02, 0x00, 0x01], "fixed-header flags"),  // PUBACK with flags 1
            ([0x00, 0x00], "unknown packet type 0"),
            ([0xF0, 0x00], "unknown packet type 15"),
        ] as [([UInt8], String)])
    func malformedPacketsAreRefusedWithTheirReason(bytes: [UInt8], reason: String) {
        var reader = MQTTFrameReader(maxPacket: 1 << 20)
        reader.append(bytes)
        do {
            let packet = try reader.next()
            Issue.record("accepted \(String(describing: packet))")
        } catch {
            #expect(error.description.contains(reason), "\(error.description)")
        }
    }

    @Test func connackRefusalsAreNamed() {
        #expect(MQTTConnectReturn.describe(4) == "bad user name or password")
        #expect(MQTTConnectReturn.describe(5) == "not authorized")
        #expect(MQTTConnectReturn.describe(77).contains("77"))
    }
}
