import Foundation
import TestSupport
import Testing

/// Dependents follow their requirements (issue 42 item 2): a service that requires another is
/// told dependencyWillStop before it stops and dependencyDidStart once it runs again; a
/// `bindsTo` dependent stops with its provider and starts again after it; a `partOf` one
/// follows its restarts. In the host's process and in workers.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct DependentsTests {
    @Test(arguments: ["in-process", "process"])
    func dependents_areTold_andBindsToAndPartOf_followTheProvider(_ isolation: String) throws {
        let host = try IsolatedHost()
        let told =
            "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DEPENDENCY_WILL_STOP)"
            + "|SH_EVENT_BIT(SH_EVENT_DEPENDENCY_DID_START))"
        try host.probe("provider", ["PROBE_ID=\"test.provider\"", "PROBE_VERSION=\"1.2.0\""])
        try host.probe("user", ["PROBE_ID=\"test.user\"", told])
        try host.probe("bound", ["PROBE_ID=\"test.bound\"", told])
        try host.probe("part", ["PROBE_ID=\"test.part\""])
        try host.probe("other", ["PROBE_ID=\"test.other\"", told])  // requires nothing: never told
        let config = try host.file(
            "services.json",
            #"""
            {"services": {
              "test.user": {"requires": ["test.provider"]},
              "test.bound": {"bindsTo": ["test.provider"]},
              "test.part": {"partOf": ["test.provider"]}
            }}
            """#)
        try host.start(["--isolation", isolation, "--config", config])
        try host.ctl("service", "restart", "test.provider")
        func state(_ id: String) -> String? { (try? host.service(id))?["state"] as? String }
        #expect(eventually { state("test.bound") == "running" && state("test.part") == "running" })
        #expect(try host.ctl("service", "stop", "test.provider").status == 0)
        if isolation == "in-process" {
            // (A stopped service in a worker lists its worker's state.)
            #expect(state("test.bound") == "stopped with test.provider (bindsTo)")
        }
        #expect(state("test.user") == "running")
        #expect(try host.ctl("service", "start", "test.provider").status == 0)
        #expect(eventually { state("test.bound") == "running" })
        let result = host.stop()
        #expect(result.status == 0)
        let records = result.records

        // test.user: told of each stop and each start, with the provider's id and version.
        let user = records.probe(46, 47).filter { $0.source == "test.user" }.map(\.message)
        #expect(user.count == 4, "\(records.text)")
        #expect(
            user.map { $0.hasPrefix("probe test.user: event 46 ") } == [true, false, true, false], "\(user)")
        #expect(user.allSatisfy { $0.hasSuffix(" dependency=test.provider version=1.2.0") }, "\(user)")
        #expect(records.probe(46, 47).filter { $0.source == "test.other" }.isEmpty)
        let stopped = records.named(.serviceStoppedByRequest).compactMap { $0.string("service") }
        // Bound: stopped before its provider, at the restart and at the stop.
        #expect(
            stopped.filter { $0 == "test.bound" }.count == 2 && stopped.suffix(2) == ["test.bound", "test.provider"])
        // test.bound: stopped with it and started again, twice (restart, stop/start); test.part
        // restarted with it once (a stop is not a restart).
        let launches = records.probe(1)
        #expect(launches.filter { $0.source == "test.provider" }.count == 3)
        #expect(launches.filter { $0.source == "test.bound" }.count == 3, "\(records.text)")
        #expect(launches.filter { $0.source == "test.part" }.count == 2, "\(records.text)")
        if isolation == "in-process" {
            // In order: the provider's launch before its bound dependent's, each time.
            let order = launches.compactMap { ["test.provider", "test.bound"].contains($0.source) ? $0.source : nil }
            #expect(
                order == ["test.provider", "test.bound", "test.provider", "test.bound", "test.provider", "test.bound"],
                "\(order)")
        }
    }

    /// A required service's worker crashes (told after the fact) and comes back (told once it is
    /// caught up); a reload that replaces it tells its dependents both.
    @Test func aCrashAndAReload_ofARequiredService_areToldToItsDependents() throws {
        let host = try IsolatedHost()
        try host.bad(
            "provider",
            [
                "BAD_ID=\"test.provider\"", "BAD_ON_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "BAD_ACTION=1",
                "BAD_ONCE_MARKER=" + host.marker("provider.crashed"),
            ])
        try host.probe(
            "user",
            [
                "PROBE_ID=\"test.user\"", "PROBE_REQUIRES=\"test.provider\"",
                "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DEPENDENCY_WILL_STOP)"
                    + "|SH_EVENT_BIT(SH_EVENT_DEPENDENCY_DID_START))",
            ])
        try host.start(["--isolation", "process"])
        try host.ctl("background")
        #expect(eventually { (try? host.service("test.provider"))?["restarts"] as? Int == 1 })
        #expect(eventually { host.events(of: "test.user").filter { $0 == "dependencyDidStart" }.count == 1 })
        // A new file of the provider: a reload replaces it.
        try host.bad(
            "provider", ["BAD_ID=\"test.provider\"", "BAD_ON_KIND=SH_EVENT_DID_RECEIVE_MEMORY_WARNING"])
        #expect(try host.reply("reload")["replaced"] as? [String] == ["test.provider"])
        let result = host.stop()
        #expect(result.status == 0)
        let told = host.events(of: "test.user").filter { $0.hasPrefix("dependency") }
        #expect(
            told == ["dependencyWillStop", "dependencyDidStart", "dependencyWillStop", "dependencyDidStart"],
            "\(told)")
    }
}
