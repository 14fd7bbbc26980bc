import Foundation
import TestSupport
import Testing

/// `host ctl deploy DIR` (issue 40 item 3) with the real host: a set is staged and verified as
/// a generation, switched to as a reload switches (an unchanged service keeps running), recorded
/// as current, and run again by the next start.
@Suite(.timeLimit(.minutes(10))) struct DeployTests {
    /// A host on `lib` (test.a and test.b 0.1.0) and a set of test.a's same file and test.b 0.2.0.
    private func hostAndSet() throws -> (IsolatedHost, String) {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        let set = try host.scratch.folder("set")
        try FileManager.default.copyItem(atPath: host.lib + "/a.so", toPath: set + "/a.so")
        try Plugins.probe(set + "/b.so", ["PROBE_ID=\"test.b\"", "PROBE_VERSION=\"0.2.0\""])
        return (host, set)
    }

    private func generation(_ host: RunningHost) -> String? {
        try? String(contentsOfFile: host.stateDirectory + "/generations/current", encoding: .utf8)
    }

    /// `ctl deploy status --json`'s `deploy` object.
    private func status(_ host: IsolatedHost) throws -> [String: Any] {
        try host.reply("deploy", "status")["deploy"] as? [String: Any] ?? [:]
    }

    @Test func aGoodSet_isApplied_keepingWhatDidNotChange_andSurvivesARestart() throws {
        let (host, set) = try hostAndSet()
        try host.start()
        let (status, reply) = try host.ctlJSON("deploy", set, "--probation", "1")
        #expect(status == 0, "\(reply)")
        #expect(reply["generation"] as? Int == 1 && reply["replaced"] as? [String] == ["test.b"], "\(reply)")
        #expect(reply["kept"] as? [String] == ["test.a"] && reply["added"] as? [String] == [], "\(reply)")
        #expect(try host.service("test.b")?["version"] as? String == "0.2.0")
        // Current only once the probation ended well.
        #expect(eventually { (try? self.status(host))?["current"] as? Int == 1 }, "\((try? self.status(host)) ?? [:])")
        #expect(generation(host) == "1\n")
        let generations = try self.status(host)["generations"] as? [[String: Any]]
        #expect(generations?.map { $0["outcome"] as? String } == ["applied"], "\(generations ?? [])")
        // test.a was not restarted: one launch only; test.b was launched again.
        #expect(host.events(of: "test.a").filter { $0 == "willFinishLaunching" }.count == 1, "\(host.events)")
        #expect(host.events(of: "test.b").filter { $0 == "willFinishLaunching" }.count == 2, "\(host.events)")
        let first = host.stop()
        #expect(first.status == 0, "\(first.stderr)")
        let applied = host.records.named(.deployApplied)
        #expect(applied.count == 1 && applied.first?.int("generation") == 1, "\(host.records.text)")
        #expect(applied.first?.string("directory") == host.stateDirectory + "/generations/1")
        #expect(host.records.named(.deployRolledBack).isEmpty)

        // Started again on the same plugin folder, the host runs generation 1, and says so.
        try host.start()
        #expect(try host.service("test.b")?["version"] as? String == "0.2.0")
        let path = try host.service("test.a")?["path"] as? String
        #expect(path?.hasPrefix(host.stateDirectory + "/generations/1/") == true, "\(path ?? "")")
        // By hand back to the plugin directories: test.a keeps running, test.b is 0.1.0 again.
        let back = try host.reply("rollback")
        #expect(back["generation"] as? Int == 1 && back["to"] is NSNull, "\(back)")
        #expect(try host.service("test.b")?["version"] as? String == "0.1.0")
        #expect(generation(host) == nil)
        host.stop()
        let resumed = host.records.named(.deployResumed)
        #expect(resumed.count == 1 && resumed.first?.int("generation") == 1, "\(host.records.text)")
        #expect(resumed.first?.string("reason") == "current")
        let byHand = host.records.named(.deployRolledBack)
        #expect(byHand.count == 1 && byHand.first?.string("reason") == "byHand" && byHand.first?.int("to") == nil)
    }

    @Test func aSetWhoseNewVersionCrashesInAWorker_isRolledBack_andTheOldVersionRunsAgain() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        let set = try host.scratch.folder("set")
        try FileManager.default.copyItem(atPath: host.lib + "/a.so", toPath: set + "/a.so")
        try Command.compileC(
            Repository.fixture("BadPlugins/bad.c"), to: set + "/b.so",
            defines: ["BAD_ID=\"test.b\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=1"])
        try host.start(["--isolation", "process"])
        let (status, reply) = try host.ctlJSON("deploy", set)
        #expect(status == 0 && reply["generation"] as? Int == 1 && reply["seconds"] as? Int == 30, "\(reply)")
        // Rolled back at the crash, long before the 30 s probation ends.
        let outcome = { (try? self.status(host))?["generations"] as? [[String: Any]] ?? [] }
        #expect(eventually(within: 20) { outcome().first?["outcome"] as? String == "rolledBack" }, "\(outcome())")
        #expect(outcome().first?["culprit"] as? String == "test.b" && outcome().first?["reason"] as? String == "signal")
        #expect(try self.status(host)["current"] is NSNull && self.status(host)["probation"] == nil)
        #expect(generation(host) == nil)
        // The old version runs again, from the plugin folder, and takes events.
        #expect(eventually { (try? host.service("test.b"))?["state"] as? String == "running" })
        #expect(try host.service("test.b")?["path"] as? String == host.lib + "/b.so")
        #expect(try host.ctl("background").status == 0)
        #expect(host.events.last { $0.hasSuffix(" test.b") } == "didEnterBackground test.b", "\(host.events)")
        #expect(host.events(of: "test.a").filter { $0 == "willFinishLaunching" }.count == 1, "\(host.events)")
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let rolledBack = host.records.named(.deployRolledBack)
        #expect(rolledBack.count == 1, "\(host.records.text)")
        #expect(rolledBack.first?.string("service") == "test.b" && rolledBack.first?.string("reason") == "signal")
        #expect(rolledBack.first?.int("generation") == 1 && rolledBack.first?.int("to") == nil)
        #expect(host.records.named(.deployApplied).isEmpty)
    }

    @Test func aSetThatHangsInAWorker_isRolledBackAfterTheHangKill() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        let set = try host.scratch.folder("set")
        try FileManager.default.copyItem(atPath: host.lib + "/a.so", toPath: set + "/a.so")
        try Command.compileC(
            Repository.fixture("BadPlugins/bad.c"), to: set + "/b.so",
            defines: ["BAD_ID=\"test.b\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=4"])
        // test.b's 1 s deadline is the point; test.a keeps one no loaded machine can miss.
        let configuration = try host.file("services.json", #"{"services": {"test.a": {"eventTimeout": 300}}}"#)
        try host.start(["--isolation", "process", "--event-timeout", "1", "--config", configuration])
        #expect(try host.ctlJSON("deploy", set).status == 0)
        let outcome = { (try? self.status(host))?["generations"] as? [[String: Any]] ?? [] }
        #expect(eventually(within: 30) { outcome().first?["outcome"] as? String == "rolledBack" }, "\(outcome())")
        #expect(outcome().first?["culprit"] as? String == "test.b" && outcome().first?["reason"] as? String == "hang")
        #expect(eventually { (try? host.service("test.b"))?["path"] as? String == host.lib + "/b.so" })
        host.stop()
        let rolledBack = host.records.named(.deployRolledBack)
        #expect(rolledBack.map { $0.string("reason") } == ["hang"], "\(host.records.text)")
    }

    @Test func aRequiredServiceThatFailsToLaunch_rollsTheSetBack() throws {
        let (host, set) = try hostAndSet()
        try Plugins.probe(
            set + "/b.so",
            ["PROBE_ID=\"test.b\"", "PROBE_FAIL_KIND=SH_EVENT_WILL_FINISH_LAUNCHING", "PROBE_FAIL_RESULT=12345"])
        let configuration = try host.file("services.json", #"{"services": {"test.b": {"policy": "required"}}}"#)
        try host.start(["--config", configuration])
        let deployed = try host.ctlJSON("deploy", set)
        #expect(deployed.status == 0)
        #expect(deployed.reply["rolledBack"] as? String == "test.b", "\(deployed.reply)")
        let generations = try self.status(host)["generations"] as? [[String: Any]] ?? []
        #expect(generations.first?["culprit"] as? String == "test.b", "\(generations)")
        #expect(generations.first?["reason"] as? String == "requiredFailed")
        #expect(try host.service("test.b")?["state"] as? String == "running")
        #expect(try host.service("test.b")?["path"] as? String == host.lib + "/b.so")
        host.stop()
        #expect(host.records.named(.deployRolledBack).map { $0.string("service") } == ["test.b"])
    }

    /// README "Deploying safely": its transcript of a deploy that rolls back, run for real.
    @Test func theReadmesRollbackTranscript_isWhatTheHostPrints() throws {
        let blocks = try Documentation.section("Deploying safely").codeBlocks(language: "text")
        let transcript = try #require(blocks.first { $0.first?.hasPrefix("$ host ctl deploy ") == true })
        let host = try IsolatedHost()
        try host.probe("clock", ["PROBE_ID=\"com.example.clock\""])
        try host.probe("greeter", ["PROBE_ID=\"com.example.greeter\""])
        let set = try host.scratch.folder("release-2")
        try FileManager.default.copyItem(atPath: host.lib + "/clock.so", toPath: set + "/clock.so")
        try Command.compileC(
            Repository.fixture("BadPlugins/bad.c"), to: set + "/greeter.so",
            defines: ["BAD_ID=\"com.example.greeter\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=1"])
        try host.start(["--isolation", "process"])
        let shell = try TranscriptShell(host.scratch, control: host.control)
        var printed: [String] = []
        for line in transcript where line.hasPrefix("$ ") {
            if line.contains("deploy status") {
                // The rollback follows the crash, which follows the deploy's reply: wait for it.
                let rolledBack = eventually(within: 20) {
                    let generations = (try? self.status(host))?["generations"] as? [[String: Any]]
                    return generations?.first?["outcome"] as? String == "rolledBack"
                }
                #expect(rolledBack)
            }
            let result = try shell.run(String(line.dropFirst(2)))
            #expect(result.status == 0, "`\(line)`: \(result.stderr)")
            printed += [line] + TranscriptShell.lines(result)
        }
        #expect(printed == transcript)
        #expect(try host.service("com.example.greeter")?["path"] as? String == host.lib + "/greeter.so")
        host.stop()
    }

    @Test func aCancelledDeploy_andOneKilledInProbation_leaveThePreviousSetRunning() throws {
        let (host, set) = try hostAndSet()
        try host.start()
        #expect(try host.ctl("deploy", set, "--probation", "0").status == 2)
        #expect(try host.ctlJSON("deploy", set, "--probation", "600").status == 0)
        #expect(try self.status(host)["probation"] as? [String: Any] != nil)
        #expect(try host.ctlJSON("deploy", set).status == 1, "a second deploy while one is in probation")
        let cancelled = try host.reply("deploy", "--cancel")
        #expect(cancelled["generation"] as? Int == 1, "\(cancelled)")
        #expect(try host.service("test.b")?["version"] as? String == "0.1.0")
        #expect(try host.reply("deploy", "--cancel")["ok"] as? Bool == false)
        // Killed in probation: the next start runs the plugin folder, and says generation 2 was not accepted.
        #expect(try host.ctlJSON("deploy", set, "--probation", "600").reply["generation"] as? Int == 2)
        #expect(try host.service("test.b")?["version"] as? String == "0.2.0")
        host.signal(SIGKILL)
        try host.start()
        #expect(try host.service("test.b")?["version"] as? String == "0.1.0")
        let generations = try self.status(host)["generations"] as? [[String: Any]] ?? []
        #expect(
            generations.map { "\($0["generation"] as? Int ?? 0) \($0["reason"] as? String ?? "")" } == [
                "2 notAccepted", "1 cancelled",
            ], "\(generations)")
        #expect(generations.allSatisfy { $0["outcome"] as? String == "rolledBack" })
        host.stop()
        let resumed = host.records.named(.deployResumed)
        #expect(resumed.count == 1 && resumed.first?.int("rejected") == 2, "\(host.records.text)")
        #expect(resumed.first?.string("reason") == "notAccepted" && resumed.first?.int("generation") == nil)
    }

    @Test func aSetTheHostWouldRefuse_isRefused_andNothingRunningChanges() throws {
        let (host, set) = try hostAndSet()
        let pins = #"{"services": {"test.b": {"sha256": "\#(String(repeating: "0", count: 64))"}}}"#
        try Data(pins.utf8).write(to: URL(fileURLWithPath: set + "/services.json"))
        try host.start()
        let (status, reply) = try host.ctlJSON("deploy", set)
        #expect(status == 1 && reply["ok"] as? Bool == false, "\(reply)")
        #expect(try host.service("test.b")?["version"] as? String == "0.1.0")
        #expect(generation(host) == nil)
        #expect(host.events(of: "test.b").filter { $0 == "willFinishLaunching" }.count == 1)
        host.stop()
        let refused = host.records.named(.deployRefused)
        #expect(refused.count == 1 && refused.first?.string("directory") == set, "\(host.records.text)")
        #expect(refused.first?.string("reason")?.contains("digest-mismatch") == true)
    }

    @Test func acceptedGenerations_arePruned_keepingCurrentPreviousMoreAndThoseInUse_andCheckAndInspectReadTheCurrent()
        throws
    {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.start(["--keep-generations", "1"])
        // Generation 1 brings test.a 0.2.0, which every later set keeps (same bytes): it runs
        // from generation 1's folder throughout. test.b changes in every set.
        let first = try host.scratch.folder("set-1")
        try Plugins.probe(first + "/a.so", ["PROBE_ID=\"test.a\"", "PROBE_VERSION=\"0.2.0\""])
        for generation in 1...5 {
            let set = try host.scratch.folder("set-\(generation)-b")
            try FileManager.default.copyItem(atPath: first + "/a.so", toPath: set + "/a.so")
            try Plugins.probe(set + "/b.so", ["PROBE_ID=\"test.b\"", "PROBE_VERSION=\"0.\(generation + 2).0\""])
            #expect(try host.ctlJSON("deploy", set, "--probation", "1").reply["generation"] as? Int == generation)
            #expect(eventually { (try? self.status(host))?["current"] as? Int == generation })
        }
        #expect(try host.service("test.a")?["path"] as? String == host.stateDirectory + "/generations/1/a.so")
        let folders = try FileManager.default.contentsOfDirectory(atPath: host.stateDirectory + "/generations")
        // 5 current, 4 its rollback target, 3 the one more, 1 test.a's file; 2 removed.
        #expect(folders.compactMap { Int($0) }.sorted() == [1, 3, 4, 5], "\(folders)")
        // A rollback by hand still has its generation.
        #expect(try host.reply("rollback")["to"] as? Int == 4)
        #expect(try host.service("test.b")?["version"] as? String == "0.6.0")

        // host check and host inspect read the generation the host runs, not the plugin folder.
        let product = try Repository.product("host")
        let checked = try Command.run(
            product, ["check", "--plugins", host.lib, "--state-dir", host.stateDirectory, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any] ?? [:]
        let folder = host.stateDirectory + "/generations/4"
        #expect(report["generation"] as? Int == 4 && report["directories"] as? [String] == [folder], "\(report)")
        let order = (report["order"] as? [[String: Any]] ?? []).map { $0["file"] as? String ?? "" }
        #expect(order == [folder + "/a.so", folder + "/b.so"], "\(order)")
        let inspected = try Command.run(product, ["inspect", "--json", "--state-dir", host.stateDirectory])
        #expect(inspected.status == 0, "\(inspected.stderr)")
        let files = (try JSONSerialization.jsonObject(with: Data(inspected.stdout.utf8)) as? [[String: Any]] ?? [])
            .map { $0["path"] as? String ?? "" }
        #expect(files == [folder + "/a.so", folder + "/b.so"], "\(files)")
        host.stop()
        let pruned = host.records.named(.deployPruned)
        #expect(pruned.map { $0.strings("removed") ?? [] } == [["2"]], "\(host.records.text)")
        #expect(pruned.first?.strings("kept") == ["5", "4", "3", "1"])
        // A host that never deployed: check reads its plugin folder, inspect needs a path.
        let empty = try host.scratch.folder("empty-state")
        let plain = try Command.run(product, ["check", "--plugins", host.lib, "--state-dir", empty, "--json"])
        let plainReport = try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(plainReport["generation"] is NSNull && plainReport["directories"] as? [String] == [host.lib])
        #expect(try Command.run(product, ["inspect", "--state-dir", empty]).status == 2)
    }

    /// Issue 41 follow-up: a history an older host let grow past the bound is compacted by the
    /// next deploy's first line, a new generation's number is still above every one used, and
    /// `ctl rollback` still finds the generation to go back to.
    @Test func aLongHistory_isBoundedByTheNextDeploy_andRollbackStillGoesBackToThePreviousGenerations() throws {
        let (host, set) = try hostAndSet()
        // 400 generations deployed and rolled back before (their folders removed): 2 lines each.
        _ = try host.scratch.folder("state", mode: 0o700)
        _ = try host.scratch.folder("state/generations", mode: 0o700)
        var lines = ""
        for generation in 1...400 {
            let from =
                #""from":"/srv/releases/servicehost-bundle-\#(String(repeating: String(generation % 10), count: 64))""#
            let members = #""generation":\#(generation),"previous":\#(generation - 1)"#
            lines += #"{\#(from),\#(members),"outcome":"inProbation"}"# + "\n"
            lines += #"{\#(from),\#(members),"outcome":"rolledBack","culprit":"test.b","reason":"signal"}"# + "\n"
        }
        let path = try host.scratch.write("state/generations/history.jsonl", Array(lines.utf8), mode: 0o600)
        let size = { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1 }
        let seeded = size()
        #expect(seeded > 64 << 10)
        try host.start()
        for expected in 401...403 {
            let reply = try host.ctlJSON("deploy", set, "--probation", "0.2").reply
            #expect(reply["generation"] as? Int == expected, "\(reply)")
            #expect(eventually { (try? self.status(host))?["current"] as? Int == expected })
        }
        let bounded = size()
        #expect(bounded < 64 << 10 && bounded < seeded, "\(seeded) -> \(bounded) bytes")
        // Back from 403 to 402, then from 402 to 401: each applied line names its previous one.
        var back = try host.reply("rollback")
        #expect(back["generation"] as? Int == 403 && back["to"] as? Int == 402, "\(back)")
        back = try host.reply("rollback")
        #expect(back["generation"] as? Int == 402 && back["to"] as? Int == 401, "\(back)")
        #expect(generation(host) == "401\n")
        // The next number is above every one used, 403 included.
        #expect(try host.ctlJSON("deploy", set, "--probation", "0.2").reply["generation"] as? Int == 404)
        host.stop()
    }
}
