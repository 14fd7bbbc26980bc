import Foundation
import TestSupport
import Testing

/// `host ctl service start ID` for a service the host never loaded (issue 14): a service
/// the configuration disabled (or left out) is loaded and caught up; any other file
/// `list --all` names is refused with the reason it gives.
@Suite(.timeLimit(.minutes(10))) struct ServiceStartTests {
    @Test func start_loadsADisabledService_andCatchesItUp() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("off", ["PROBE_ID=\"test.off\""])
        let config = try host.file("services.json", #"{"services":{"test.off":{"enabled":false}}}"#)
        try host.start(["--config", config])
        try host.ctl("background")
        #expect(!host.events.contains { $0.hasSuffix(" test.off") })
        let start = try host.ctlJSON("service", "start", "test.off")
        #expect(start.status == 0, "\(start.reply)")
        #expect(
            (start.reply["services"] as? [[String: Any]])?.first?["state"] as? String == "running", "\(start.reply)")
        // Caught up to the background through the one catch-up, as a late service.
        #expect(
            host.events.filter { $0.hasSuffix(" test.off") } == [
                "willFinishLaunching test.off", "didFinishLaunching test.off", "didEnterBackground test.off",
            ])
        let all = try host.ctlJSON("list", "--all").reply
        #expect((all["services"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["test.a", "test.off"])
        #expect(
            !((all["skipped"] as? [[String: Any]]) ?? []).contains { ($0["services"] as? [String]) == ["test.off"] })
        // It then receives what the others do.
        try host.ctl("activate")
        #expect(host.events.contains("didBecomeActive test.off"))
        let again = try host.ctlJSON("service", "start", "test.off")
        #expect(again.status == 1 && again.reply["error"] as? String == "service test.off is already running")
        host.stop()
        #expect(host.records.named(.serviceLoadedByRequest).first?.string("service") == "test.off")
    }

    @Test func start_refusesAFileThatIsNotLoadable_withTheReasonListAllGives() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let open = try Plugins.probe(host.lib + "/open.so", ["PROBE_ID=\"test.open\""])
        chmod(open, 0o666)
        try Plugins.probe(host.lib + "/twin.so", ["PROBE_ID=\"test.a\""])
        try host.start()
        let refused = try host.ctlJSON("service", "start", "test.a")
        #expect(refused.status == 1 && refused.reply["error"] as? String == "service test.a is already running")
        // The insecure file's service id is not known (its metadata is not read): unknown.
        let insecure = try host.ctlJSON("service", "start", "test.open")
        #expect(
            insecure.status == 1
                && (insecure.reply["error"] as? String ?? "").hasPrefix("cannot start unknown service test.open"),
            "\(insecure.reply)")
        // A service left out because its requirement failed is refused with that reason.
        let other = try RunningHost()
        try other.probe("b", ["PROBE_ID=\"test.b\""])
        try other.probe("c", ["PROBE_ID=\"test.c\"", "PROBE_UNDEFINED"])
        let config = try other.file("services.json", #"{"services":{"test.b":{"requires":["test.c"]}}}"#)
        try other.start(["--config", config])
        let skipped = try other.ctlJSON("list", "--all").reply["skipped"] as? [[String: Any]] ?? []
        #expect(
            skipped.contains {
                $0["reason"] as? String == "requirement-failed" && $0["services"] as? [String] == ["test.b"]
            }, "\(skipped)")
        let blocked = try other.ctlJSON("service", "start", "test.b")
        #expect(
            blocked.status == 1
                && blocked.reply["error"] as? String
                    == "service test.b is not loaded (requirement-failed): requires test.c, which failed to load (fix that, then host ctl reload)",
            "\(blocked.reply)")
    }
}
