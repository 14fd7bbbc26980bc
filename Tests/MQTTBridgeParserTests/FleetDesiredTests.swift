import Foundation
import TestSupport
import Testing

@testable import MQTTBridge

/// A fleet's desired state and the bridge's fleet record (issue 41), from the `bridge` fuzz
/// target's seeds (`desired-*.json`, `fleet-record.json`) and by hand.
@Suite struct FleetDesiredTests {
    typealias Replay = FuzzCorpusReplayTests
    static let digest = String(repeating: "a", count: 64)

    @Test func theSeeds_readEveryMember() throws {
        let desired = try FleetDesired.parse(try Replay.seed("desired-chunks.json"))
        #expect(desired.digest == Self.digest && desired.size == 4_263_936 && desired.chunks == 9)
        #expect(desired.probation == 30 && desired.signature.hasPrefix("untrusted comment: x\n"))
        #expect(desired.source == "servicehost/bundles/" + Self.digest)
        #expect(desired.filters == ["servicehost/bundles/\(Self.digest)/+"])
        #expect(desired.chunkIndex("servicehost/bundles/\(Self.digest)/8") == 8)
        for outside in ["/9", "/08", "/-1", "/x", "", "/1/2"] {
            #expect(desired.chunkIndex("servicehost/bundles/\(Self.digest)" + outside) == nil, "\(outside)")
        }
        let one = try FleetDesired.parse(try Replay.seed("desired-source.json"))
        #expect(one.source == "servicehost/bundles/x" && one.chunks == 1 && one.filters == [one.source])
        #expect(one.chunkIndex("servicehost/bundles/x") == 0 && one.chunkIndex("servicehost/bundles/x/0") == nil)
        let record = FleetRecord(stored: try Replay.seed("fleet-record.json"))
        #expect(record.status == "probation" && record.generation == 3 && record.runningGeneration == 2)
        #expect(FleetRecord(stored: Array(record.json.serialized.utf8)) == record)
        #expect(FleetRecord(stored: Array("not json".utf8)) == FleetRecord())
    }

    @Test func aBadDesiredState_isRefused_namingTheMember() {
        func problem(_ text: String) -> String? {
            do {
                _ = try FleetDesired.parse(Array(text.utf8))
                return nil
            } catch { return error.description }
        }
        let base = #""digest":"\#(Self.digest)","size":10,"signature":"s""#
        #expect(problem("{\(base)}") == nil)
        #expect(problem(#"{"digest":"AB","size":10,"signature":"s"}"#)?.contains("desired.digest") == true)
        #expect(problem("{\(base),\"chunks\":11}")?.contains("desired.chunks") == true)
        #expect(problem("{\(base),\"source\":\"elsewhere/x\"}")?.contains("desired.source") == true)
        #expect(problem("{\(base),\"source\":\"servicehost/bundles/#\"}")?.contains("desired.source") == true)
        #expect(problem("{\(base),\"probation\":0}")?.contains("desired.probation") == true)
        #expect(problem("{\(base),\"url\":\"x\"}")?.contains("\"url\"") == true)
        #expect(problem(#"{"digest":"\#(Self.digest)","size":0,"signature":"s"}"#)?.contains("desired.size") == true)
        #expect(problem("[]") != nil && problem("") != nil)
    }
}
