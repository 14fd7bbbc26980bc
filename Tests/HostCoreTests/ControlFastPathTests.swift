import ServiceJSON
import Testing

@testable import HostCore

/// The control requests' fast path (``PlainRequest``) against the full parser: the same
/// request, the same reply bytes and the same refusals, on lines it takes and lines it leaves.
@Suite struct ControlFastPathTests {
    /// Each line, and whether the fast path reads it itself (nil: it leaves it to the full parser).
    static let table: [(line: String, fast: Bool)] = [
        (#"{"command":"memory-warning"}"#, true),
        (#"{"command":"state","id":1}"#, true),
        (#"{"id":"x-1","command":"list"}"#, true),
        (" { \"command\" : \"reload\" ,\t\"id\" : -42 }\r", true),
        (#"{"command":"terminate","id":null}"#, true),
        (#"{"command":"activate","id":true}"#, true),
        (#"{"command":"background","id":false}"#, true),
        (#"{"command":"resign","id":0}"#, true),
        (#"{"command":"foreground","id":123456789012345}"#, true),
        (#"{"command":"state","id":""}"#, true),
        // Left to the full parser: escapes, duplicates, other keys, other values, non-ASCII.
        (#"{"comm\u0061nd":"state"}"#, false),
        (#"{"command":"st\u0061te"}"#, false),
        (#"{"command":"state","id":"a\"b"}"#, false),
        (#"{"command":"state","command":"list"}"#, false),
        (#"{"command":"state","id":1,"id":2}"#, false),
        (#"{"command":"list","all":true}"#, false),
        (#"{"command":"list","all":false}"#, false),
        (#"{"command":"state","extra":1}"#, false),
        (#"{"command":"push","payload":{}}"#, false),
        (#"{"command":"memory-warning","id":1.5}"#, false),
        (#"{"command":"state","id":1e3}"#, false),
        (#"{"command":"state","id":-0}"#, false),
        (#"{"command":"state","id":01}"#, false),
        (#"{"command":"state","id":1234567890123456}"#, false),
        (#"{"command":"state","id":[1]}"#, false),
        (#"{"command":"state","id":"é"}"#, false),
        (#"{"command":"fly"}"#, false),
        (#"{"command":1}"#, false),
        (#"{"command":null}"#, false),
        (#"{"id":1}"#, false),
        ("{}", false),
        (#"["command","state"]"#, false),
        (#""state""#, false),
        ("42", false),
        (#"{"command":"state"} x"#, false),
        (#"{"command":"state",}"#, false),
        (#"{"command":"state""#, false),
        (#"{"command":"state}"#, false),
        (#"{"command":"stat"#, false),
        (#"{"command""state"}"#, false),
        (#"{"command":"state","id":tru}"#, false),
        (#"{"command":"state","id":-}"#, false),
        ("{\"command\":\"state\u{7F}\"}", false),
        ("{\"command\":\"sta\tte\"}", false),
        ("", false),
        ("{", false),
    ]

    @Test func everyLine_getsTheSameRequestOrRefusal_fromBothParsers() {
        for (line, fast) in Self.table {
            let bytes = Array(line.utf8)
            let plain = bytes.withUnsafeBytes { PlainRequest.parse($0) }
            #expect((plain != nil) == fast, "fast path on \(line)")
            let full = bytes.withUnsafeBytes { ControlRequest.parseFully($0, maxPayload: 65536) }
            let parsed = ControlRequest.parse(bytes, maxPayload: 65536)
            #expect(Self.reply(to: parsed) == Self.reply(to: full), "\(line)")
            #expect(Self.shape(parsed) == Self.shape(full), "\(line)")
        }
    }

    /// Every command without members, by the protocol's own list of names, takes the fast path
    /// to the same command; every other name is left to the full parser.
    @Test func everyPlainCommandName_takesTheFastPath_toTheSameCommand() {
        for spec in ControlCommands.rows {
            let name = spec.name
            let bytes = Array(#"{"command":"\#(name)"}"#.utf8)
            let plain = bytes.withUnsafeBytes { PlainRequest.parse($0) }
            #expect((plain != nil) == (spec.plain != nil), "\(name)")
            let full = bytes.withUnsafeBytes { ControlRequest.parseFully($0, maxPayload: 65536) }
            #expect(Self.shape(ControlRequest.parse(bytes, maxPayload: 65536)) == Self.shape(full), "\(name)")
        }
    }

    /// The `control` fuzz target's seeds (requests of every command, good and bad) too.
    @Test func everySeedOfTheControlCorpus_getsTheSameRequestOrRefusal_fromBothParsers() throws {
        let seeds = FuzzCorpusTests.corpus("control")
        #expect(seeds.count >= 20)
        var fast = 0
        for path in seeds {
            let bytes = try FuzzCorpusTests.bytes(path)
            if bytes.withUnsafeBytes({ PlainRequest.parse($0) }) != nil { fast += 1 }
            let full = bytes.withUnsafeBytes { ControlRequest.parseFully($0, maxPayload: 65536) }
            let parsed = ControlRequest.parse(bytes, maxPayload: 65536)
            #expect(Self.reply(to: parsed) == Self.reply(to: full), "\(path)")
            #expect(Self.shape(parsed) == Self.shape(full), "\(path)")
        }
        // Some seeds take the fast path (else this compares the full parser with itself).
        #expect(fast >= 3)
    }

    /// Invalid UTF-8 never takes the fast path, and gets the full parser's refusal.
    @Test func invalidUTF8_isLeftToTheFullParser() {
        let bytes = Array(#"{"command":"state","id":""#.utf8) + [0xFF] + Array(#""}"#.utf8)
        #expect(bytes.withUnsafeBytes { PlainRequest.parse($0) } == nil)
        #expect(Self.reply(to: ControlRequest.parse(bytes, maxPayload: 65536)).contains("not valid UTF-8"))
    }

    /// What the host would write back, as far as the request decides it: the refusal's line,
    /// or the id echoed in an empty success reply.
    static func reply(to result: Result<ControlRequest, ControlRefusal>) -> String {
        var out: [UInt8] = []
        switch result {
        case .failure(let refusal): ControlReply(refusal).write(to: &out)
        case .success(let request): ControlReply(ok: true, id: request.id).write(to: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The command carried out and the id's exact value (a reply writes -0 and 0 alike).
    static func shape(_ result: Result<ControlRequest, ControlRefusal>) -> String {
        switch result {
        case .failure(let refusal): "refused \(String(describing: refusal.id))"
        case .success(let request): "\(request.command) \(String(describing: request.id))"
        }
    }
}
