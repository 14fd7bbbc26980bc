import Foundation
import MQTTCodec
import ServiceJSON
import Testing

@testable import HostCore

/// `host fleet rollout`'s plan and record (issue 41), without a broker: the waves a `--waves`
/// list makes, the rollout's record as the broker retains it (read back, and refused when
/// damaged: it comes from any client of the broker), and the fleet as read from retained
/// messages.
@Suite struct FleetRolloutPlanTests {
    @Test func waves_areCountsOrPercentagesRoundedUp_andAWaveThatAddsNobodyIsLeftOut() throws {
        #expect(try FleetRollout.waves("1,25%,100%", hosts: 20) == [1, 5, 20])
        #expect(try FleetRollout.waves("1,10%,50%,100%", hosts: 3) == [1, 2, 3])
        #expect(try FleetRollout.waves("1,10%,50%,100%", hosts: 1) == [1])
        #expect(try FleetRollout.waves("5,100%", hosts: 4) == [4])
        #expect(try FleetRollout.waves("50%", hosts: 20) == [10])
        for bad in ["", "0", "1,,2", "-1", "1,x", "0%", "101%", "50%,10%"] {
            #expect(throws: UsageError.self, "\(bad)") { try FleetRollout.waves(bad, hosts: 20) }
        }
    }

    @Test func theRecord_readsBack_andADamagedOneIsNone() throws {
        var record = FleetRolloutRecord(
            id: "0123456789abcdef", digest: String(repeating: "a", count: 64), desired: #"{"digest":"…"}"#,
            hosts: ["h1", "h2", "h3"], waves: [1, 3], maxFailures: 1, wait: 90, startedAt: 1_800_000_000)
        record.wave = 1
        record.applied = ["h1"]
        record.failures = [.init(host: "h2", status: "rolledBack", reason: "signal", service: "test.b")]
        record.previous = ["h1": "", "h2": #"{"digest":"b"}"#, "h3": ""]
        let text = record.json().serialized
        #expect(FleetRolloutRecord(text) == record)
        #expect(record.members(0) == ["h1"] && record.members(1) == ["h2", "h3"])
        // Waves past the hosts, not increasing, a wave out of range, not JSON: none.
        for damaged in [
            text.replacingOccurrences(of: #""waves":[1,3]"#, with: #""waves":[1,4]"#),
            text.replacingOccurrences(of: #""waves":[1,3]"#, with: #""waves":[3,1]"#),
            text.replacingOccurrences(of: #""wave":2"#, with: #""wave":3"#), "{", "[]", "",
        ] {
            #expect(FleetRolloutRecord(damaged) == nil, "\(damaged)")
        }
    }

    @Test func theFleet_isReadFromRetainedMessages() {
        func message(_ topic: String, _ text: String) -> MQTTPublish {
            MQTTPublish(topic: topic, payload: Array(text.utf8), retain: true)
        }
        let digest = String(repeating: "c", count: 64)
        let view = FleetView([
            message("servicehost/h1/state", #"{"status":"online"}"#), message("servicehost/h2/state", "offline"),
            message(
                "servicehost/h1/reported",
                #"{"status":"rolledBack","deploy":{"digest":"\#(digest)","reason":"signal","culprit":"test.b"},"#
                    + #""services":[{"id":"test.c","state":"running","health":{"status":"degraded","reason":"slow"}}]}"#
            ),
            message("servicehost/all/state", #"{"status":"online"}"#),
            message("servicehost/h3/desired", "x"), message("servicehost/h3/desired", ""),
        ])
        #expect(view.hosts == ["h1", "h2"])
        #expect(view.online == ["h1": true, "h2": false])
        #expect(view.desired.isEmpty)
        #expect(view.outcome("h1", digest: digest)?.service == "test.b")
        #expect(view.outcome("h1", digest: String(repeating: "d", count: 64)) == nil)
        #expect(
            view.failing("h1").map { [$0.service, $0.reason] } == [["test.b", "signal"], ["test.c", "degraded"]])
    }

    /// `--prefix ROOT`: the hosts are `ROOT/<id>/…`; other topics, deeper ones and the default
    /// root's are not; `servicehost/`'s own names are hosts under another root.
    @Test func hostsUnderAnotherRoot_areReadThere() {
        func message(_ topic: String, _ text: String) -> MQTTPublish {
            MQTTPublish(topic: topic, payload: Array(text.utf8), retain: true)
        }
        let online = #"{"status":"online"}"#
        let view = FleetView(
            [
                message("site/a/k1/state", online), message("site/a/bundles/state", online),
                message("servicehost/h1/state", online), message("site/a/k2/x/state", online),
                message("site/a//state", online), message("site/ab/k3/state", online),
                message("site/a/k1/desired", "x"),
            ], root: "site/a")
        #expect(view.hosts == ["bundles", "k1"])
        #expect(view.desired == ["k1": "x"])
        #expect(FleetView.filters(root: "site/a").contains("site/a/+/reported"))
    }

    /// The `fleet` fuzz target's seeds: the record reads (and reads back), the damaged ones are
    /// none, the report gives its failing services.
    @Test func theFuzzSeeds_readAsTheTargetReadsThem() throws {
        let record = try #require(
            FleetRolloutRecord(
                String(decoding: try FuzzCorpusTests.seed("fleet", "record-stopped.json"), as: UTF8.self)))
        #expect(record.status == "stopped" && record.wave == 1 && record.failures.first?.service == "test.b")
        #expect(FleetRolloutRecord(record.json().serialized) == record)
        for damaged in ["record-waves-past-hosts.json", "record-wave-zero.json"] {
            #expect(
                FleetRolloutRecord(String(decoding: try FuzzCorpusTests.seed("fleet", damaged), as: UTF8.self)) == nil)
        }
        let report = try FuzzCorpusTests.seed("fleet", "reported-rolled-back.json")
        let view = FleetView([MQTTPublish(topic: "servicehost/h1/reported", payload: report, retain: true)])
        #expect(view.failing("h1").map { $0.service } == ["test.b", "test.c", "test.d"])
        let offline = try FuzzCorpusTests.seed("fleet", "state-offline.txt")
        #expect(FleetView([MQTTPublish(topic: "servicehost/h1/state", payload: offline)]).online == ["h1": false])
    }
}
