import Foundation
import TestSupport
import Testing

/// Desired and reported state (issue 41 item 2) with a real Mosquitto, real hosts and real
/// minisign: a bundle published retained on `servicehost/bundles/<sha256>` (in pieces: the
/// debug bridge alone is 4 MiB, the bridge's packet limit 1 MiB) reaches the host named by
/// `servicehost/<id>/desired`, which reports `applied`; a tampered bundle, one with a `../`
/// path and one with a symbolic link are refused with their reason; a host that was away
/// catches up from the retained desired state, and does not retry one it refused.
@Suite(
    .timeLimit(.minutes(10)),
    .enabled(if: Mosquitto.installed != nil && Minisign.installed != nil, "needs mosquitto and minisign"))
struct FleetDesiredStateTests {
    static let bridge = "dev.servicehost.mqtt-bridge"

    /// A scratch folder, a broker, a release key and host `h1` trusting it, started and
    /// subscribed: what most of these tests begin with.
    static func startedHost() throws -> (Scratch, Mosquitto, Minisign.KeyPair, RunningHost) {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let key = try Minisign.generate("release", in: scratch.path)
        let host = try fleetHost("h1", port: broker.port, key: key)
        try host.start()
        #expect(MQTTBridgeTests.subscribed(broker, "h1"))
        return (scratch, broker, key, host)
    }

    /// A host `id` on the broker: the bridge (granted deploys) and the probe test.probe, trusting `key`.
    static func fleetHost(
        _ id: String, port: Int, key: Minisign.KeyPair, isolateB: Bool = false, prefix: String? = nil,
        reportInterval: Double? = nil
    ) throws -> RunningHost {
        let host = try RunningHost()
        try host.scratch.copy(try Repository.product("libMQTTBridge.so"), to: "lib/libMQTTBridge.so", mode: 0o644)
        try host.probe("probe", ["PROBE_ID=\"test.probe\""])
        let prefixSetting =
            (prefix.map { #", "prefix": "\#($0)""# } ?? "")
            + (reportInterval.map { #", "reportInterval": \#($0)"# } ?? "")
        _ = try host.file(
            "lib/services.json",
            """
            {"trustedKeys": ["\(try key.publicKey)"],
             "services": {\(isolateB ? #""test.b": {"isolation": "process"},"# : "")
              "\(bridge)": {"requests": "all", "settings":
              {"broker": "tcp://127.0.0.1:\(port)", "hostId": "\(id)", "keepAlive": 5\(prefixSetting)}}}}
            """)
        return host
    }

    /// A bundle of `host`'s plugins plus test.b 0.2.0, and `extra` entries (name, type, target):
    /// written by Python's tarfile in ustar format (GNU tar would strip a `../`).
    /// `crashing`: test.b crashes on didBecomeActive. `anotherBridge`: the bridge's file with a
    /// byte more at its end (still loadable: other bytes, so the deploy replaces the bridge).
    static func bundle(
        for host: RunningHost, in scratch: Scratch, extra: [(String, String, String)] = [], crashing: Bool = false,
        version: String = "0.2.0", anotherBridge: Bool = false
    ) throws -> String {
        let set = try scratch.folder("set-\(UUID().uuidString.prefix(8))")
        if crashing {
            try Command.compileC(
                Repository.fixture("BadPlugins/bad.c"), to: set + "/b.so",
                defines: ["BAD_ID=\"test.b\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=1"])
        } else {
            try Plugins.probe(set + "/b.so", ["PROBE_ID=\"test.b\"", "PROBE_VERSION=\"\(version)\""])
        }
        for name in ["libMQTTBridge.so", "probe.so"] {
            try FileManager.default.copyItem(atPath: host.lib + "/" + name, toPath: set + "/" + name)
        }
        if anotherBridge {
            let file = try FileHandle(forWritingTo: URL(fileURLWithPath: set + "/libMQTTBridge.so"))
            try file.seekToEnd()
            try file.write(contentsOf: Data([0]))
            try file.close()
        }
        let output = set + ".tar"
        let members =
            ["libMQTTBridge.so", "probe.so", "b.so"].map { "('\($0)', 'file', '\(set)/\($0)')" }
            + extra.map { "('\($0.0)', '\($0.1)', '\($0.2)')" }
        let script = """
            import tarfile, sys
            with tarfile.open('\(output)', 'w', format=tarfile.USTAR_FORMAT) as t:
                for name, kind, target in [\(members.joined(separator: ", "))]:
                    if kind == 'file':
                        info = t.gettarinfo(target, arcname=name)
                        with open(target, 'rb') as f: t.addfile(info, f)
                    else:
                        info = tarfile.TarInfo(name)
                        info.type = tarfile.SYMTYPE
                        info.linkname = target
                        t.addfile(info)
            """
        let result = try Command.run("/usr/bin/python3", ["-c", script])
        guard result.status == 0 else { throw TestFailure("python3 tarfile: \(result.stderr)") }
        return output
    }

    /// Signs `bundle`, publishes it retained in pieces of `piece` bytes (with one byte changed
    /// when `tamper`) and the desired state on each host's topic; returns the digest.
    @discardableResult
    static func publish(
        _ bundle: String, signedBy key: Minisign.KeyPair, on broker: Mosquitto, to hosts: [String],
        piece: Int = 512 << 10, tamper: Bool = false, probation: Double = 1, holdingBack: Int = 0
    ) throws -> String {
        try Minisign.sign(bundle, with: key)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: bundle)))
        let sum = try Command.run("/usr/bin/sha256sum", [bundle])
        let digest = String(sum.stdout.prefix(64))
        let signature = try String(contentsOfFile: bundle + ".minisig", encoding: .utf8)
        if tamper { bytes[bytes.count / 2] ^= 0x01 }
        let chunks = (bytes.count + piece - 1) / piece
        for index in 0..<chunks {
            try Data(bytes[(index * piece)..<min(bytes.count, (index + 1) * piece)]).write(
                to: URL(fileURLWithPath: bundle + ".\(index)"))
            if index < chunks - holdingBack { try publishPiece(bundle, index, digest, on: broker) }
        }
        let desired: [String: Any] = [
            "digest": digest, "size": bytes.count, "signature": signature, "chunks": chunks, "probation": probation,
        ]
        let text = String(decoding: try JSONSerialization.data(withJSONObject: desired), as: UTF8.self)
        for host in hosts { try broker.publish("servicehost/\(host)/desired", text, retain: true) }
        return digest
    }

    /// Publishes piece `index` of `bundle` (written by `publish`), retained.
    static func publishPiece(_ bundle: String, _ index: Int, _ digest: String, on broker: Mosquitto) throws {
        let result = try Command.run(
            "/usr/bin/mosquitto_pub",
            [
                "-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-r",
                "-t", "servicehost/bundles/\(digest)/\(index)", "-f", bundle + ".\(index)",
            ])
        guard result.status == 0 else { throw TestFailure("mosquitto_pub: \(result.stderr)") }
    }

    /// The retained `servicehost/<id>/reported`, parsed.
    static func reported(_ broker: Mosquitto, _ id: String) -> [String: Any] {
        guard let text = try? broker.retained("servicehost/\(id)/reported") else { return [:] }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// Waits for the report of `digest` to reach `status`; the report.
    static func report(_ broker: Mosquitto, _ id: String, _ digest: String, _ status: String) -> [String: Any] {
        var last: [String: Any] = [:]
        _ = eventually(within: 90) {
            last = reported(broker, id)
            let deploy = last["deploy"] as? [String: Any]
            return deploy?["digest"] as? String == digest && last["status"] as? String == status
        }
        return last
    }

    /// The host's current generation (`ctl deploy status`), nil when none.
    static func current(_ host: RunningHost) throws -> Int? {
        let deploy = try host.ctlJSON("deploy", "status").reply["deploy"] as? [String: Any]
        return deploy?["current"] as? Int
    }

    static func services(_ report: [String: Any]) -> [String: String] {
        var versions: [String: String] = [:]
        for service in report["services"] as? [[String: Any]] ?? [] {
            if let id = service["id"] as? String { versions[id] = service["version"] as? String }
        }
        return versions
    }

    @Test func aGoodBundle_reachesTheHost_whichReportsApplied_andAHostThatWasAwayCatchesUp() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let key = try Minisign.generate("release", in: scratch.path)
        let h1 = try Self.fleetHost("h1", port: broker.port, key: key)
        let h2 = try Self.fleetHost("h2", port: broker.port, key: key)
        try h1.start()
        #expect(MQTTBridgeTests.subscribed(broker, "h1"))
        // h2 is away while the desired state is published.
        let bundle = try Self.bundle(for: h1, in: scratch)
        let digest = try Self.publish(bundle, signedBy: key, on: broker, to: ["h1", "h2"])
        let report = Self.report(broker, "h1", digest, "applied")
        #expect(report["status"] as? String == "applied", "\(report)")
        let generation = report["generation"] as? [String: Any]
        #expect(generation?["digest"] as? String == digest && generation?["number"] as? Int == 1, "\(report)")
        #expect(Self.services(report)["test.b"] == "0.2.0", "\(report)")
        // Each service's file digest: test.b's is the one of the bundle's b.so.
        let fileDigest = try Command.run("/usr/bin/sha256sum", [String(bundle.dropLast(4)) + "/b.so"]).stdout.prefix(64)
        let listed = report["services"] as? [[String: Any]] ?? []
        #expect(
            listed.first { $0["id"] as? String == "test.b" }?["digest"] as? String == String(fileDigest), "\(report)")
        #expect((report["services"] as? [[String: Any]])?.allSatisfy { $0["state"] as? String == "running" } == true)
        // The host runs the bundle's set, the bridge kept running through the switch.
        #expect(try Self.current(h1) == 1)
        try h2.start()
        let caughtUp = Self.report(broker, "h2", digest, "applied")
        #expect(caughtUp["status"] as? String == "applied", "\(caughtUp)")
        #expect(Self.services(caughtUp)["test.b"] == "0.2.0", "\(caughtUp)")
        let records = h1.stop().records
        let lines = MQTTBridgeTests.bridgeLines(records)
        #expect(lines.named("mqtt.fleetApplied").first?.fields["digest"] == digest, "\(records.text)")
        #expect(lines.named("mqtt.fleetRolledBack").isEmpty && lines.named("mqtt.fleetRefused").isEmpty)
        #expect(Int(lines.named("mqtt.fleetDownloading").first?.fields["chunks"] ?? "") ?? 0 > 1, "\(records.text)")
        h2.stop()
    }

    @Test func aTamperedBundle_isRefused_withTheReason_andNotRetriedUntilTheDesiredStateChanges() throws {
        let (scratch, broker, key, host) = try Self.startedHost()
        let bundle = try Self.bundle(for: host, in: scratch)
        let digest = try Self.publish(bundle, signedBy: key, on: broker, to: ["h1"], tamper: true)
        let report = Self.report(broker, "h1", digest, "refused")
        let deploy = report["deploy"] as? [String: Any]
        #expect(deploy?["reason"] as? String == "digestMismatch", "\(report)")
        #expect(report["generation"] is NSNull, "\(report)")
        #expect(try Self.current(host) == nil)
        // Started again, the host sees the same desired state and does not fetch it again: it
        // reports on connecting and again on the desired state it skips.
        var records = host.stop().records
        #expect(MQTTBridgeTests.bridgeLines(records).named("mqtt.fleetDownloading").count == 1)
        let before = broker.topics(publishedBy: "h1").filter { $0 == "servicehost/h1/reported" }.count
        try host.start()
        #expect(
            eventually {
                broker.topics(publishedBy: "h1").filter { $0 == "servicehost/h1/reported" }.count >= before + 2
            })
        records = host.stop().records
        let lines = MQTTBridgeTests.bridgeLines(records)
        #expect(lines.named("mqtt.fleetDownloading").isEmpty, "\(records.text)")
        #expect(lines.named("mqtt.fleetSkipped").first?.fields["status"] == "refused", "\(records.text)")
    }

    @Test func aBundleWhosePluginCrashes_isRolledBack_andReportedWithTheServiceAndTheReason() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let key = try Minisign.generate("release", in: scratch.path)
        let host = try Self.fleetHost("h1", port: broker.port, key: key, isolateB: true)
        try host.start()
        #expect(MQTTBridgeTests.subscribed(broker, "h1"))
        let bundle = try Self.bundle(for: host, in: scratch, crashing: true)
        let digest = try Self.publish(bundle, signedBy: key, on: broker, to: ["h1"])
        let report = Self.report(broker, "h1", digest, "rolledBack")
        let deploy = report["deploy"] as? [String: Any]
        #expect(deploy?["culprit"] as? String == "test.b" && deploy?["reason"] as? String == "signal", "\(report)")
        #expect(deploy?["generation"] as? Int == 1 && report["generation"] is NSNull, "\(report)")
        #expect(Self.services(report)["test.b"] == nil, "\(report)")
        #expect(try Self.current(host) == nil)
        let records = host.stop().records
        let lines = MQTTBridgeTests.bridgeLines(records)
        #expect(lines.named("mqtt.fleetRolledBack").first?.fields["generation"] == "1", "\(records.text)")
    }

    /// A host killed (SIGKILL) while it downloads, the bundle's last piece not on the broker
    /// yet, fetches it again when it is started and the piece is there.
    @Test func aHostKilledDuringItsDownload_catchesUpWhenStartedAgain() throws {
        let (scratch, broker, key, host) = try Self.startedHost()
        let bundle = try Self.bundle(for: host, in: scratch)
        let digest = try Self.publish(bundle, signedBy: key, on: broker, to: ["h1"], holdingBack: 1)
        #expect(Self.report(broker, "h1", digest, "downloading")["status"] as? String == "downloading")
        let killed = host.signal(SIGKILL)
        #expect(killed.status != 0)
        let chunks = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter {
            $0.hasPrefix(URL(fileURLWithPath: bundle).lastPathComponent + ".") && !$0.hasSuffix(".minisig")
        }.count
        try Self.publishPiece(bundle, chunks - 1, digest, on: broker)
        try host.start()
        let report = Self.report(broker, "h1", digest, "applied")
        #expect(Self.services(report)["test.b"] == "0.2.0", "\(report)")
        let records = host.stop().records
        #expect(MQTTBridgeTests.bridgeLines(records).named("mqtt.fleetDownloading").count == 1, "\(records.text)")
    }

    /// An `applied` said by the deploy's `done` is stored when the bridge stops, not at once: a
    /// host stopped after it is not tried again (the store says `applied`), and a host killed
    /// (SIGKILL) right after it reports it again from its deploy status (the store still says
    /// `probation`); neither fetches nor deploys the bundle again.
    @Test func anAppliedBundle_isNotTriedAgain_afterAStop_norAfterAKill() throws {
        let (scratch, broker, key, host) = try Self.startedHost()
        let first = try Self.publish(try Self.bundle(for: host, in: scratch), signedBy: key, on: broker, to: ["h1"])
        #expect(Self.report(broker, "h1", first, "applied")["status"] as? String == "applied")
        _ = host.stop()
        // Cleared, so the report awaited is the restarted bridge's.
        try broker.publish("servicehost/h1/reported", "", retain: true)
        try host.start()
        #expect(Self.report(broker, "h1", first, "applied")["status"] as? String == "applied")
        var lines = MQTTBridgeTests.bridgeLines(host.stop().records)
        #expect(lines.named("mqtt.fleetSkipped").first?.fields["status"] == "applied", "\(lines)")
        #expect(lines.named("mqtt.fleetDownloading").isEmpty && lines.named("mqtt.fleetApplied").isEmpty, "\(lines)")

        try host.start()
        let second = try Self.publish(
            try Self.bundle(for: host, in: scratch, version: "0.3.0"), signedBy: key, on: broker, to: ["h1"])
        #expect(Self.report(broker, "h1", second, "applied")["status"] as? String == "applied")
        #expect(host.signal(SIGKILL).status != 0)
        // Cleared, so the report awaited is the restarted bridge's.
        try broker.publish("servicehost/h1/reported", "", retain: true)
        try host.start()
        let report = Self.report(broker, "h1", second, "applied")
        #expect((report["generation"] as? [String: Any])?["number"] as? Int == 2, "\(report)")
        #expect(Self.services(report)["test.b"] == "0.3.0", "\(report)")
        #expect(try Self.current(host) == 2)
        lines = MQTTBridgeTests.bridgeLines(host.stop().records)
        #expect(lines.named("mqtt.fleetApplied").first?.fields["generation"] == "2", "\(lines)")
        #expect(lines.named("mqtt.fleetDownloading").isEmpty, "\(lines)")
    }

    /// A bundle that brings another bridge: the deploy's switch replaces the bridge, and the new
    /// copy, not the one that fetched the bundle, follows the probation to its end and reports
    /// `applied`, without fetching or deploying the bundle again.
    @Test func aBundleBringingAnotherBridge_isFollowedToItsEndByTheNewCopy() throws {
        let (scratch, broker, key, host) = try Self.startedHost()
        let bundle = try Self.bundle(for: host, in: scratch, anotherBridge: true)
        let digest = try Self.publish(bundle, signedBy: key, on: broker, to: ["h1"])
        let report = Self.report(broker, "h1", digest, "applied")
        #expect(report["status"] as? String == "applied", "\(report)")
        #expect((report["generation"] as? [String: Any])?["number"] as? Int == 1, "\(report)")
        #expect(try Self.current(host) == 1)
        let records = host.stop().records
        #expect(records.named(.reloadDone).first?.strings("replaced")?.contains(Self.bridge) == true, "\(records.text)")
        let lines = MQTTBridgeTests.bridgeLines(records)
        #expect(lines.named("mqtt.fleetDownloading").count == 1, "\(records.text)")
        // The probation followed (by the copy that deployed it, and by the new one): generation 1,
        // the one deploy.
        let probations = lines.named("mqtt.fleetProbation").map { $0.fields["generation"] }
        #expect(!probations.isEmpty && probations.allSatisfy { $0 == "1" }, "\(records.text)")
        #expect(lines.named("mqtt.fleetApplied").first?.fields["generation"] == "1", "\(records.text)")
        #expect(records.named(.deployRefused).isEmpty, "\(records.text)")
    }

    /// One deploy at a time: a desired state published while another is in probation is fetched
    /// when that probation ends, and both are applied in turn.
    @Test func aDesiredStateThatComesDuringAProbation_waitsForIt() throws {
        let (scratch, broker, key, host) = try Self.startedHost()
        let first = try Self.publish(
            try Self.bundle(for: host, in: scratch), signedBy: key, on: broker, to: ["h1"], probation: 4)
        #expect(Self.report(broker, "h1", first, "probation")["status"] as? String == "probation")
        let second = try Self.publish(
            try Self.bundle(for: host, in: scratch, version: "0.3.0"), signedBy: key,
            on: broker, to: ["h1"])
        let report = Self.report(broker, "h1", second, "applied")
        #expect((report["generation"] as? [String: Any])?["number"] as? Int == 2, "\(report)")
        #expect(Self.services(report)["test.b"] == "0.3.0", "\(report)")
        let records = host.stop().records
        let applied = MQTTBridgeTests.bridgeLines(records).named("mqtt.fleetApplied").map { $0.fields["digest"] }
        #expect(applied == [first, second], "\(records.text)")
        // The second was fetched only once the first's probation was over.
        let steps = MQTTBridgeTests.bridgeLines(records).map { "\($0.event) \($0.fields["digest"] ?? "")" }
        let firstApplied = steps.firstIndex(of: "mqtt.fleetApplied \(first)") ?? Int.max
        #expect((steps.firstIndex(of: "mqtt.fleetDownloading \(second)") ?? -1) > firstApplied, "\(steps)")
    }

    /// A `ctl deploy` by hand in probation when the bridge does its first fetch (the store holds
    /// no generation): the bridge does not take that probation for its bundle's (the deploy's
    /// `from` is not a folder of the bundle's), reports it as nothing of the fleet's, waits for
    /// its end, then deploys the desired bundle.
    @Test func aProbationDeployedByHand_isNotReportedAsTheBundles_andTheBundleIsDeployedAfterIt() throws {
        let (scratch, broker, key, host) = try Self.startedHost()
        let byHand = String(try Self.bundle(for: host, in: scratch, version: "0.9.0").dropLast(4))
        #expect(try host.ctlJSON("deploy", byHand, "--probation", "6").reply["generation"] as? Int == 1)
        let digest = try Self.publish(try Self.bundle(for: host, in: scratch), signedBy: key, on: broker, to: ["h1"])
        var during: [String: Any] = [:]
        #expect(
            eventually(within: 30) {
                during = Self.reported(broker, "h1")
                return during["desired"] as? String == digest
            }, "\(during)")
        // Still the hand's probation: the report says nothing of it as the bundle's.
        let status = try host.ctlJSON("deploy", "status").reply["deploy"] as? [String: Any]
        #expect((status?["probation"] as? [String: Any])?["generation"] as? Int == 1, "\(String(describing: status))")
        #expect(during["status"] is NSNull && during["generation"] is NSNull, "\(during)")
        #expect((during["deploy"] as? [String: Any])?["generation"] == nil, "\(during)")
        #expect(Self.services(during)["test.b"] == "0.9.0", "\(during)")
        // After its end, the bundle is deployed: generation 2.
        let report = Self.report(broker, "h1", digest, "applied")
        let generation = report["generation"] as? [String: Any]
        #expect(generation?["digest"] as? String == digest && generation?["number"] as? Int == 2, "\(report)")
        #expect((report["deploy"] as? [String: Any])?["generation"] as? Int == 2, "\(report)")
        #expect(Self.services(report)["test.b"] == "0.2.0", "\(report)")
        let history = try host.ctlJSON("deploy", "status").reply["deploy"] as? [String: Any]
        let generations = history?["generations"] as? [[String: Any]] ?? []
        #expect(history?["current"] as? Int == 2, "\(String(describing: history))")
        #expect(
            generations.first { $0["generation"] as? Int == 1 }?["from"] as? String == byHand
                && generations.first { $0["generation"] as? Int == 1 }?["outcome"] as? String == "applied",
            "\(generations)")
        let lines = MQTTBridgeTests.bridgeLines(host.stop().records)
        #expect(lines.named("mqtt.fleetWaiting").first?.fields["generation"] == "1", "\(lines)")
        let probations = lines.named("mqtt.fleetProbation").map { $0.fields["generation"] }
        #expect(probations == ["2"], "\(lines)")
    }

    /// The same for a bridge that deployed before: a desired state that comes during a probation
    /// by hand is not refused (the host refuses a second deploy), it waits for that probation's
    /// end and is deployed after it.
    @Test func aDesiredStateThatComesDuringAProbationByHand_waitsForIt() throws {
        let (scratch, broker, key, host) = try Self.startedHost()
        let first = try Self.publish(try Self.bundle(for: host, in: scratch), signedBy: key, on: broker, to: ["h1"])
        #expect(Self.report(broker, "h1", first, "applied")["status"] as? String == "applied")
        let byHand = String(try Self.bundle(for: host, in: scratch, version: "0.9.0").dropLast(4))
        #expect(try host.ctlJSON("deploy", byHand, "--probation", "6").reply["generation"] as? Int == 2)
        let second = try Self.publish(
            try Self.bundle(for: host, in: scratch, version: "0.3.0"), signedBy: key, on: broker, to: ["h1"])
        let report = Self.report(broker, "h1", second, "applied")
        #expect((report["generation"] as? [String: Any])?["number"] as? Int == 3, "\(report)")
        #expect(Self.services(report)["test.b"] == "0.3.0", "\(report)")
        let lines = MQTTBridgeTests.bridgeLines(host.stop().records)
        #expect(lines.named("mqtt.fleetWaiting").first?.fields["generation"] == "2", "\(lines)")
        #expect(lines.named("mqtt.fleetRefused").isEmpty, "\(lines)")
        #expect(lines.named("mqtt.fleetApplied").map { $0.fields["generation"] } == ["1", "3"], "\(lines)")
    }

    /// A deploy by hand after the fleet's: within a report interval the report says the host
    /// runs another generation than the fleet applied (drift: its number, the folder it came
    /// from, no digest), and `host fleet status` shows it; rolled back by hand to the fleet's
    /// generation, the report names the fleet's bundle again.
    @Test func aDeployByHandAfterTheFleets_isReportedAsDrift_untilTheFleetsGenerationRunsAgain() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let key = try Minisign.generate("release", in: scratch.path)
        let host = try Self.fleetHost("h1", port: broker.port, key: key, reportInterval: 0.5)
        try host.start()
        #expect(MQTTBridgeTests.subscribed(broker, "h1"))
        let digest = try Self.publish(try Self.bundle(for: host, in: scratch), signedBy: key, on: broker, to: ["h1"])
        let applied = Self.report(broker, "h1", digest, "applied")
        #expect((applied["generation"] as? [String: Any])?["number"] as? Int == 1, "\(applied)")
        #expect((applied["generation"] as? [String: Any])?["drift"] == nil, "\(applied)")

        let byHand = String(try Self.bundle(for: host, in: scratch, version: "0.9.0").dropLast(4))
        #expect(try host.ctlJSON("deploy", byHand, "--probation", "1").reply["generation"] as? Int == 2)
        var report: [String: Any] = [:]
        let drifted = eventually(within: 30) {
            report = Self.reported(broker, "h1")
            return (report["generation"] as? [String: Any])?["drift"] as? Bool == true
        }
        #expect(drifted, "\(report)")
        let generation = report["generation"] as? [String: Any] ?? [:]
        #expect(generation["number"] as? Int == 2 && generation["from"] as? String == byHand, "\(report)")
        #expect(generation["digest"] == nil, "\(report)")
        // What the fleet did is unchanged: it applied its bundle.
        #expect(report["status"] as? String == "applied", "\(report)")
        #expect((report["deploy"] as? [String: Any])?["digest"] as? String == digest, "\(report)")
        #expect(Self.services(report)["test.b"] == "0.9.0", "\(report)")
        let status = try Command.run(
            try Repository.product("host"), ["fleet", "status", "--json", "--broker", "tcp://127.0.0.1:\(broker.port)"])
        let hosts =
            ((try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8))) as? [String: Any])?["hosts"]
            as? [[String: Any]] ?? []
        #expect(hosts.first?["drift"] as? Bool == true && hosts.first?["generation"] as? Int == 2, "\(status.stdout)")

        #expect(try host.ctlJSON("rollback").status == 0)
        let back = eventually(within: 30) {
            report = Self.reported(broker, "h1")
            let generation = report["generation"] as? [String: Any]
            return generation?["drift"] == nil && generation?["number"] as? Int == 1
        }
        #expect(back, "\(report)")
        #expect((report["generation"] as? [String: Any])?["digest"] as? String == digest, "\(report)")
        host.stop()
    }

    @Test func aBundleWithAPathOutOfIt_orASymbolicLink_isRefused() throws {
        let (scratch, broker, key, host) = try Self.startedHost()
        let escape = try Self.bundle(for: host, in: scratch, extra: [("../evil.so", "file", host.lib + "/probe.so")])
        let first = try Self.publish(escape, signedBy: key, on: broker, to: ["h1"])
        let escaped = Self.report(broker, "h1", first, "refused")
        let escapedDeploy = escaped["deploy"] as? [String: Any]
        #expect(escapedDeploy?["reason"] as? String == "pathEscape", "\(escaped)")
        #expect(escapedDeploy?["culprit"] as? String == "../evil.so", "\(escaped)")
        let linked = try Self.bundle(for: host, in: scratch, extra: [("evil.so", "symlink", "/etc/passwd")])
        let second = try Self.publish(linked, signedBy: key, on: broker, to: ["h1"])
        let link = Self.report(broker, "h1", second, "refused")
        let linkDeploy = link["deploy"] as? [String: Any]
        #expect(linkDeploy?["reason"] as? String == "link" && linkDeploy?["culprit"] as? String == "evil.so", "\(link)")
        // Nothing was deployed, and nothing was left behind outside the bundle's folder.
        #expect(try Self.current(host) == nil)
        #expect(!FileManager.default.fileExists(atPath: "/tmp/evil.so"))
        host.stop()
    }
}
