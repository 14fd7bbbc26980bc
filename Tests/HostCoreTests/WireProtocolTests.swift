import Foundation
import Testing

@testable import HostCore

/// The worker protocol's framing: what a frame is on the wire, and what breaks it.
@Suite struct WireProtocolTests {
    private func frame(_ type: FrameType, sequence: UInt32, _ fill: (inout WireWriter) -> Void) -> [UInt8] {
        var writer = WireWriter()
        fill(&writer)
        return writer.finish(type, sequence: sequence)
    }

    private func decode(_ bytes: [UInt8]) throws(WireError) -> [Frame] {
        var decoder = FrameDecoder()
        bytes.withUnsafeBytes { decoder.append($0) }
        var frames: [Frame] = []
        while let frame = try decoder.next() { frames.append(frame) }
        return frames
    }

    @Test func header_isMagicVersionTypeSequenceLength_littleEndian() {
        let bytes = frame(.event, sequence: 0x0102_0304) { $0.u32(0xAABB_CCDD) }
        #expect(Array(bytes[0..<4]) == Array("SHWP".utf8))
        #expect(Array(bytes[4..<16]) == [1, 0, 3, 0, 0x04, 0x03, 0x02, 0x01, 4, 0, 0, 0])
        #expect(Array(bytes[16...]) == [0xDD, 0xCC, 0xBB, 0xAA])
    }

    @Test func framesSplitAnywhere_comeOutWhole_andInOrder() throws {
        let stream =
            frame(.log, sequence: 0) {
                $0.u32(1)
                $0.i32(2)
                $0.string("hello")
            }
            + frame(.result, sequence: 7) { $0.i32(-1) }
        var decoder = FrameDecoder()
        var frames: [Frame] = []
        for byte in stream {
            [byte].withUnsafeBytes { decoder.append($0) }
            while let frame = try decoder.next() { frames.append(frame) }
        }
        #expect(frames.map(\.type) == [.log, .result])
        #expect(frames.map(\.sequence) == [0, 7])
        var reader = frames[0].reader
        #expect(try reader.u32("service") == 1)
        #expect(try reader.i32("level") == 2)
        #expect(try reader.string("message") == "hello")
        try reader.finish("log")
    }

    @Test func badMagic_otherVersion_unknownType_andOversizeFrames_areErrors() {
        var bytes = frame(.result, sequence: 1) { $0.i32(0) }
        bytes[0] = UInt8(ascii: "X")
        #expect(throws: WireError.self) { try decode(bytes) }

        bytes = frame(.result, sequence: 1) { $0.i32(0) }
        bytes[4] = 2
        #expect { try decode(bytes) } throws: { ($0 as? WireError)?.code == .badVersion(2) }

        bytes = frame(.result, sequence: 1) { $0.i32(0) }
        bytes[6] = 99
        #expect { try decode(bytes) } throws: { ($0 as? WireError)?.code == .unknownType(99) }

        bytes = frame(.result, sequence: 1) { _ in }
        bytes[15] = 0x7F  // a length of 2 GiB
        #expect { try decode(bytes) } throws: { if case .tooLarge = ($0 as? WireError)?.code { true } else { false } }
    }

    @Test func aPartialFrame_waitsForTheRest() throws {
        let bytes = frame(.result, sequence: 1) { $0.i32(5) }
        #expect(try decode(Array(bytes.dropLast())).isEmpty)
        #expect(try decode(Array(bytes.prefix(10))).isEmpty)
    }

    @Test func readingPastThePayload_orLeavingBytes_isAnError() {
        var reader = WireReader([1, 0])
        #expect { try reader.u32("count") } throws: { ($0 as? WireError)?.code == .truncated(what: "count") }
        let left = WireReader([1])
        #expect(throws: WireError.self) { try left.finish("frame") }
        var flag = WireReader([2])
        #expect(throws: WireError.self) { try flag.bool("flag") }
    }

    @Test func everyLoadFailureReason_crossesUnchanged() throws {
        let reasons: [LoadFailure.Reason] = [
            .notRegularFile(kind: "FIFO"), .insecure("mode 0666"),
            .system(SystemError(operation: "open", path: "/x", errno: ENOENT)),
            .notELF(detail: "the file is empty"), .wrongArchitecture(found: "aarch64", host: "x86_64"),
            .notSharedObject(type: "executable"), .corrupt("truncated"), .noEntrySymbol, .noMetadata,
            .invalidMetadata("bad id"), .abiMismatch(pluginMin: 7, pluginMax: 9, hostMin: 1, hostMax: 1),
            .duplicateServiceID(id: "a.b", otherPath: "/y"), .dlopen("undefined symbol: f"), .entry("returned NULL"),
            .attachFailed(id: "a.b", result: -1), .worker("killed"),
        ]
        for reason in reasons {
            var writer = WireWriter()
            LoadFailureCodec.encode(reason, into: &writer)
            let bytes = writer.finish(.openFailed, sequence: 1)
            var reader = WireReader(Array(bytes[Wire.headerSize...]))
            #expect(try LoadFailureCodec.decode(&reader) == reason)
        }
    }
}
