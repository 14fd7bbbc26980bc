import Foundation
import TestSupport
import Testing

/// A deploy a service asks for (issue 40 item 3, extension `dev.servicehost.deploy/1`): the real
/// host and a real C service (Tests/Fixtures/CPlugins/deployer.c) that deploys the folder a
/// notification names and writes the outcome it is given, in process and in a worker.
@Suite(.timeLimit(.minutes(10))) struct DeployExtensionTests {
    /// `ctl deploy status --json`'s `deploy` object.
    private func status(_ host: IsolatedHost) throws -> [String: Any] {
        try host.reply("deploy", "status")["deploy"] as? [String: Any] ?? [:]
    }

    /// The outcome the deployer wrote: its code and JSON object, once it is there.
    private func outcome(_ path: String) -> (code: Int, json: [String: Any])? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let space = text.firstIndex(of: " "),
            let code = Int(text[..<space]),
            let json = try? JSONSerialization.jsonObject(with: Data(text[text.index(after: space)...].utf8))
                as? [String: Any]
        else { return nil }
        return (code, json)
    }

    @Test(arguments: ["in-process", "process"])
    func aServiceDeploysASet_learnsItWasApplied_thenThatABadOneWasRolledBack(isolation: String) throws {
        let host = try IsolatedHost()
        let written = host.scratch.file("outcome")
        let deployer = [#"DEPLOYER_OUTCOME="\#(written)""#, "DEPLOYER_PROBATION_MS=5000u"]
        try Command.compileC(
            Repository.fixture("CPlugins/deployer.c"), to: host.lib + "/deployer.so", defines: deployer)
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        // Two staged sets, each with the deployer unchanged (it keeps running, so it hears back).
        let good = try host.scratch.folder("good")
        let bad = try host.scratch.folder("bad")
        for set in [good, bad] {
            try FileManager.default.copyItem(atPath: host.lib + "/deployer.so", toPath: set + "/deployer.so")
        }
        try Plugins.probe(good + "/b.so", ["PROBE_ID=\"test.b\"", "PROBE_VERSION=\"0.2.0\""])
        // The bad set's test.b fails: in a worker it crashes in probation; in process (where a
        // crash would take the host down) it is a required service that fails to launch.
        var services = #""test.deployer": {"requests": "all"}"#
        if isolation == "process" {
            try Command.compileC(
                Repository.fixture("BadPlugins/bad.c"), to: bad + "/b.so",
                defines: ["BAD_ID=\"test.b\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=1"])
        } else {
            try Plugins.probe(
                bad + "/b.so",
                ["PROBE_ID=\"test.b\"", "PROBE_FAIL_KIND=SH_EVENT_WILL_FINISH_LAUNCHING", "PROBE_FAIL_RESULT=12345"])
            services += #", "test.b": {"policy": "required"}"#
        }
        let configuration = try host.file("services.json", #"{"services": {\#(services)}}"#)
        try host.start(["--isolation", isolation, "--config", configuration])

        // Applied: the probation (5 s) passed.
        #expect(try host.ctl("post", "deploy.now", "\"\(good)\"").status == 0)
        #expect(eventually(within: 20) { outcome(written) != nil }, "\(host.records.text)")
        let applied = outcome(written)
        #expect(applied?.code == 0 && applied?.json["outcome"] as? String == "applied", "\(applied?.json ?? [:])")
        #expect(applied?.json["generation"] as? Int == 1)
        #expect(try self.status(host)["current"] as? Int == 1)
        #expect(try host.service("test.b")?["version"] as? String == "0.2.0")
        // The deployer was kept (same bytes): launched once.
        #expect(host.events(of: "test.deployer").filter { $0 == "willFinishLaunching" }.count == 1)

        // Rolled back, and the deployer is told why.
        try FileManager.default.removeItem(atPath: written)
        #expect(try host.ctl("post", "deploy.now", "\"\(bad)\"").status == 0)
        #expect(eventually(within: 20) { outcome(written) != nil }, "\(host.records.text)")
        let rolledBack = outcome(written)
        #expect(rolledBack?.code == 1 && rolledBack?.json["outcome"] as? String == "rolledBack")
        #expect(rolledBack?.json["generation"] as? Int == 2, "\(rolledBack?.json ?? [:])")
        #expect(rolledBack?.json["culprit"] as? String == "test.b")
        #expect(rolledBack?.json["reason"] as? String == (isolation == "process" ? "signal" : "requiredFailed"))
        #expect(eventually { (try? host.service("test.b"))?["version"] as? String == "0.2.0" })
        // Nothing returns to a generation rolled back: its folder is gone.
        #expect(!FileManager.default.fileExists(atPath: host.stateDirectory + "/generations/2"))
        #expect(try self.status(host)["current"] as? Int == 1)
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(host.records.named(.deployApplied).map { $0.int("generation") } == [1], "\(host.records.text)")
    }

    /// A service that deploys a new version of itself in the host's process hears how it ended:
    /// the instance that asked, replaced by the deploy, is called after its stop (its library
    /// stays mapped), so what it kept for the deploy (ServiceKit's box) is freed.
    @Test func aServiceThatDeploysItsOwnNewVersion_inProcess_hearsThatItWasApplied() throws {
        let host = try IsolatedHost()
        let written = host.scratch.file("outcome")
        let writtenByTheNewVersion = host.scratch.file("outcome-new")
        try Command.compileC(
            Repository.fixture("CPlugins/deployer.c"), to: host.lib + "/deployer.so",
            defines: [#"DEPLOYER_OUTCOME="\#(written)""#, "DEPLOYER_PROBATION_MS=1000u"])
        // The new version writes elsewhere: what `written` gets comes from the instance that asked.
        let set = try host.scratch.folder("set")
        try Command.compileC(
            Repository.fixture("CPlugins/deployer.c"), to: set + "/deployer.so",
            defines: [#"DEPLOYER_OUTCOME="\#(writtenByTheNewVersion)""#, "DEPLOYER_PROBATION_MS=1000u"])
        let configuration = try host.file("services.json", #"{"services": {"test.deployer": {"requests": "all"}}}"#)
        try host.start(["--isolation", "in-process", "--config", configuration])

        #expect(try host.ctl("post", "deploy.now", "\"\(set)\"").status == 0)
        #expect(eventually(within: 20) { outcome(written) != nil }, "\(host.records.text)")
        let applied = outcome(written)
        #expect(applied?.code == 0 && applied?.json["outcome"] as? String == "applied", "\(applied?.json ?? [:])")
        #expect(applied?.json["generation"] as? Int == 1)
        #expect(try self.status(host)["current"] as? Int == 1)
        // The set's version replaced it (launched after the first) and asked nothing.
        #expect(host.events(of: "test.deployer").filter { $0 == "willFinishLaunching" }.count == 2)
        #expect(!FileManager.default.fileExists(atPath: writtenByTheNewVersion))
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func aServiceNotGrantedRequests_isRefused_andNothingChanges() throws {
        let host = try IsolatedHost()
        let written = host.scratch.file("outcome")
        try Command.compileC(
            Repository.fixture("CPlugins/deployer.c"), to: host.lib + "/deployer.so",
            defines: [#"DEPLOYER_OUTCOME="\#(written)""#])
        let set = try host.scratch.folder("set")
        try FileManager.default.copyItem(atPath: host.lib + "/deployer.so", toPath: set + "/deployer.so")
        try host.start()
        #expect(try host.ctl("post", "deploy.now", "\"\(set)\"").status == 0)
        #expect(eventually(within: 20) { outcome(written) != nil }, "\(host.records.text)")
        let refused = outcome(written)
        #expect(refused?.code == 2 && (refused?.json["error"] as? String)?.contains("\"requests\": \"all\"") == true)
        #expect(try self.status(host)["current"] is NSNull)
        host.stop()
        #expect(host.records.named(.requestRefused).map { $0.source } == ["test.deployer"], "\(host.records.text)")
    }
}
