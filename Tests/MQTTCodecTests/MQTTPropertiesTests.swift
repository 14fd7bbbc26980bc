import MQTTCodec
import Testing

/// MQTT 5 properties (issue 41, the first step of MQTT 5 in the bridge): every shape round-trips,
/// and a hostile list is refused with the packet and the reason.
@Suite struct MQTTPropertiesTests {
    @Test func everyShapeRoundTrips_andTheNamedOnesRead() throws {
        let properties = MQTTProperties([
            (0x01, .byte(1)), (0x02, .fourByte(3600)), (0x08, .string("servicehost/h1/reply")),
            (0x09, .binary([1, 2, 3])), (0x0B, .variable(268_435_455)), (0x13, .twoByte(30)),
            (0x1F, .string("not authorized")), (0x26, .pair("trace", "abc")), (0x26, .pair("trace", "def")),
        ])
        let bytes = properties.encoded()
        let read = try MQTTProperties.read(bytes[...] + [0xEE], packet: "PUBLISH")
        #expect(read.properties == properties)
        #expect(Array(read.rest) == [0xEE])
        #expect(read.properties.messageExpiry == 3600)
        #expect(read.properties.responseTopic == "servicehost/h1/reply")
        #expect(read.properties.correlationData == [1, 2, 3])
        #expect(read.properties.reasonString == "not authorized")
        #expect(read.properties.userProperties.map { "\($0)=\($1)" } == ["trace=abc", "trace=def"])
        #expect(MQTTProperties().encoded() == [0])
    }

    @Test(
        arguments: [
            ([0x05, 0x02, 0x00, 0x00], "with 3 byte(s) left"),  // length 5, 3 bytes follow
            ([0x02, 0x7F, 0x00], "unknown property 0x7f"),
            ([0x04, 0x01, 0x01, 0x01, 0x01], "given twice"),
            ([0x03, 0x08, 0x00, 0x05], "field with"),  // a 5-byte string with nothing left
            ([0x02, 0x13, 0x00, 0x00], "runs past"),  // length 2, a two-byte value needs 3
            ([0x05, 0x0B, 0x80, 0x80, 0x80, 0x80], "more than 4 bytes"),
            ([0x04, 0x08, 0x00, 0x01, 0x00], "not valid UTF-8"),  // U+0000
        ] as [([UInt8], String)])
    func hostilePropertyListsAreRefusedWithTheirReason(bytes: [UInt8], reason: String) {
        do {
            let read = try MQTTProperties.read(bytes[...], packet: "CONNACK")
            Issue.record("accepted \(read.properties)")
        } catch {
            #expect(error.packet == "CONNACK" && error.description.contains(reason), "\(error)")
        }
    }
}

/// MQTT 5 reason codes by name (issue 41): the log's `reason=` words.
@Suite struct MQTTReasonCodeTests {
    @Test func everyDefinedCodeHasItsOwnWord_andZeroDependsOnThePacket() {
        #expect(MQTTReasonCode.name(0x00, packet: "CONNACK") == "success")
        #expect(MQTTReasonCode.name(0x00, packet: "DISCONNECT") == "normalDisconnection")
        #expect(MQTTReasonCode.name(0x00, packet: "SUBACK") == "grantedQoS0")
        #expect(MQTTReasonCode.name(0x87, packet: "CONNACK") == "notAuthorized")
        #expect(MQTTReasonCode.name(0x8E, packet: "DISCONNECT") == "sessionTakenOver")
        #expect(MQTTReasonCode.name(0x95, packet: "DISCONNECT") == "packetTooLarge")
        #expect(MQTTReasonCode.name(0x05, packet: "PUBACK") == "unknown0x05")
        #expect(MQTTReasonCode.name(0xFF, packet: "PUBACK") == "unknown0xFF")
        let words = (0...255).map { MQTTReasonCode.name(UInt8($0), packet: "PUBACK") }.filter {
            !$0.hasPrefix("unknown")
        }
        #expect(words.count == 43 && Set(words).count == words.count)
        #expect(words.allSatisfy { $0.first!.isLowercase && $0.allSatisfy { $0.isLetter || $0.isNumber } })
        #expect(MQTTReasonCode.isFailure(0x80) && !MQTTReasonCode.isFailure(0x10))
    }
}
