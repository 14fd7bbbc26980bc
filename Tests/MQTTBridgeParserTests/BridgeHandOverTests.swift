import Testing

@testable import MQTTBridge

/// The state one copy of the bridge hands the next across a reload (issue 42): it reads back
/// as written, and any damage is refused naming the field, never a trap (fuzz target `bridge`).
@Suite struct BridgeHandOverTests {
    static let full = BridgeHandOver(
        pid: 4242, delivered: Array(repeating: 7, count: 20), retained: Array(repeating: 9, count: 8),
        connection: BridgeHandOver.Connection(
            socket: 11, socketInode: 0x1234_5678_9ABC, channel: 12, channelInode: 99, identity: 0xFEED,
            keepAliveMS: 5000, nextID: 65_535, lastPingNS: 1_000_000_000, pingOutstandingNS: 0, held: [0x30, 0x7F]))

    @Test func aHandOver_readsBackAsWritten_withAndWithoutAConnection() throws {
        #expect(try BridgeHandOver.parse(Self.full.encoded) == Self.full)
        let windowsOnly = BridgeHandOver(pid: 1, delivered: [], retained: [])
        #expect(try BridgeHandOver.parse(windowsOnly.encoded) == windowsOnly)
    }

    @Test func everyCutAndAnExtraByte_areRefusedWithAReason() {
        let bytes = Self.full.encoded
        for length in 0..<bytes.count {
            #expect(throws: BridgeHandOver.Problem.self) { try BridgeHandOver.parse(Array(bytes[..<length])) }
        }
        #expect(throws: BridgeHandOver.Problem("1 bytes after the end")) { try BridgeHandOver.parse(bytes + [0]) }
    }

    @Test func damagedFields_areRefusedNamingThem() {
        var bytes = Self.full.encoded
        bytes[8] = 2
        #expect(throws: BridgeHandOver.Problem("version 2, not 1")) { try BridgeHandOver.parse(bytes) }
        var same = Self.full
        same.connection?.channel = 11
        #expect(throws: BridgeHandOver.Problem("descriptors 11 and 11: not two descriptors")) {
            try BridgeHandOver.parse(same.encoded)
        }
        var odd = Self.full
        odd.delivered = [1, 2, 3]
        #expect(throws: BridgeHandOver.Problem("delivered: not whole pairs")) { try BridgeHandOver.parse(odd.encoded) }
        var huge = Self.full.encoded
        // The delivered length (after magic, version and pid) says 4 GiB.
        for index in 13..<17 { huge[index] = 0xFF }
        #expect(throws: BridgeHandOver.Problem("delivered: 4294967295 bytes, over 10240")) {
            try BridgeHandOver.parse(huge)
        }
    }

    @Test func channelRecords_readBackInOrder_acrossCuts_andAStrangeOneIsRefused() throws {
        let records: [ChannelRecord] = [.delivered(id: 5, digest: 77), .write([0x40, 2, 0, 5]), .retained(3)]
        let bytes = records.flatMap(\.encoded)
        var buffer: [UInt8] = []
        var read: [ChannelRecord] = []
        for byte in bytes {
            buffer.append(byte)
            while let record = try ChannelRecord.next(from: &buffer) { read.append(record) }
        }
        #expect(read == records && buffer.isEmpty)
        var strange: [UInt8] = [UInt8(ascii: "D"), 0, 0, 0, 3, 1, 2, 3]
        #expect(throws: BridgeHandOver.Problem("a record of type 68 and 3 bytes")) {
            try ChannelRecord.next(from: &strange)
        }
    }
}
