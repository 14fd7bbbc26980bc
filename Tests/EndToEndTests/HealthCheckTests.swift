import Foundation
import TestSupport
import Testing

/// Health checks (issue 42 item 1): a service asked `healthCheck` on its interval that answers
/// unhealthy `unhealthyAfter` times in a row is restarted (`onUnhealthy: restart`) or reported;
/// its health is in `ctl list`, the log and the trace. In the host's process and in a worker.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct HealthCheckTests {
    @Test(arguments: ["in-process", "process"])
    func anUnhealthyService_isRestartedAfterNChecks_orReported(_ isolation: String) throws {
        let host = try IsolatedHost()
        let sick = host.scratch.file("sick")
        let watched = host.scratch.file("watched")
        let events = "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_HEALTH_CHECK))"
        try host.probe("sick", ["PROBE_ID=\"test.sick\"", events, "PROBE_HEALTH_MARKER=\"\(sick)\""])
        try host.probe("watched", ["PROBE_ID=\"test.watched\"", events, "PROBE_HEALTH_MARKER=\"\(watched)\""])
        // Handles the event but has no healthCheck in the configuration: never asked.
        try host.probe("unchecked", ["PROBE_ID=\"test.unchecked\"", events])
        let config = try host.file(
            "services.json",
            #"""
            {"services": {
              "test.sick": {"healthCheck": {"interval": 0.1, "unhealthyAfter": 2, "onUnhealthy": "restart"}},
              "test.watched": {"healthCheck": {"interval": 0.1, "timeout": 2, "unhealthyAfter": 3}}
            }}
            """#)
        try host.start(["--isolation", isolation, "--config", config])
        func health(_ id: String) -> [String: Any]? { (try? host.service(id))?["health"] as? [String: Any] }
        #expect(eventually { health("test.sick")?["status"] as? String == "healthy" })
        #expect(eventually { health("test.watched")?["status"] as? String == "healthy" })
        #expect(health("test.unchecked") == nil)

        #expect(FileManager.default.createFile(atPath: sick, contents: nil))
        #expect(FileManager.default.createFile(atPath: watched, contents: nil))
        #expect(eventually { (health("test.sick")?["restarts"] as? Int ?? 0) >= 1 })
        #expect(eventually { (health("test.watched")?["unhealthyChecks"] as? Int ?? 0) >= 4 })
        let reported = try #require(health("test.watched"))
        #expect(reported["status"] as? String == "unhealthy" && reported["reason"] as? String == "marker present")
        #expect(reported["restarts"] as? Int == 0)
        #expect(try host.ctl("list").stdout.contains("health: unhealthy (marker present)"))
        try FileManager.default.removeItem(atPath: sick)
        try FileManager.default.removeItem(atPath: watched)
        #expect(eventually { health("test.sick")?["status"] as? String == "healthy" })
        #expect(eventually { health("test.watched")?["status"] as? String == "healthy" })
        #expect(try host.service("test.sick")?["state"] as? String ?? "running" == "running")
        let result = host.stop()
        #expect(result.status == 0)
        let records = result.records

        let acted = records.named(.healthUnhealthy)
        let sickActions = acted.filter { $0.string("service") == "test.sick" }
        #expect(
            !sickActions.isEmpty && sickActions.allSatisfy { $0.string("action") == "restart" && $0.int("checks") == 2 }
        )
        // Reported once for the run, not at every check after it.
        #expect(
            acted.filter { $0.string("service") == "test.watched" }.map { [$0.string("action"), $0.string("reason")] }
                == [["report", "marker present"]], "\(records.text)")
        let changes = records.named(.healthChanged).filter { $0.string("service") == "test.watched" }
        #expect(
            changes.map { [$0.level, $0.string("was"), $0.string("status")] } == [
                ["info", "unknown", "healthy"], ["warn", "healthy", "unhealthy"], ["info", "unhealthy", "healthy"],
            ], "\(records.text)")
        // Restarted: launched again; the reported one never.
        let launches = records.probe(1)
        #expect(launches.filter { $0.source == "test.sick" }.count == 1 + sickActions.count, "\(records.text)")
        #expect(launches.filter { $0.source == "test.watched" }.count == 1)
        // The checks are in the trace, to the checked services only.
        let checks = host.events.filter { $0.hasPrefix("healthCheck ") }
        #expect(checks.contains("healthCheck test.sick") && checks.contains("healthCheck test.watched"))
        #expect(!checks.contains("healthCheck test.unchecked"))
    }

    /// A service that does not answer in time is unhealthy, for a reason the host gives.
    @Test func aCheckNotAnsweredInTime_countsAsUnhealthy() throws {
        let host = try IsolatedHost()
        try host.probe(
            "mute",
            [
                "PROBE_ID=\"test.mute\"", "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_HEALTH_CHECK))",
                "PROBE_COMPLETE=1",
            ])
        let config = try host.file(
            "services.json", #"{"services": {"test.mute": {"healthCheck": {"interval": 0.1, "timeout": 0.2}}}}"#)
        try host.start(["--config", config])
        #expect(
            eventually {
                let health = (try? host.service("test.mute"))?["health"] as? [String: Any]
                return health?["status"] as? String == "unhealthy"
                    && health?["reason"] as? String == "no answer within 0.2 s"
            })
        #expect(host.stop().records.named(.completionTimeout).first?.string("event") == "healthCheck")
    }
}

/// The health extension (`dev.servicehost.health/1`): a service reports its health from any
/// thread, whenever it knows; a report counts as a check's answer, so `unhealthyAfter` unhealthy
/// reports in a row restart it. In the host's process and in a worker.
@Suite(.timeLimit(.minutes(10))) struct HealthReportTests {
    @Test(arguments: ["in-process", "process"])
    func unhealthyReports_restartTheServiceAfterN_andAHealthyOneClearsThem(_ isolation: String) throws {
        let host = try IsolatedHost()
        let marker = host.scratch.file("sick")
        try host.probe(
            "reporter",
            [
                "PROBE_ID=\"test.reporter\"", "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_NOTIFICATION))",
                "PROBE_SUBSCRIBE=\"health.poke\"", "PROBE_REPORT_HEALTH=\"\(marker)\"",
            ])
        let config = try host.file(
            "services.json",
            #"{"services": {"test.reporter": {"healthCheck": {"interval": 3600, "unhealthyAfter": 2, "onUnhealthy": "restart"}}}}"#
        )
        try host.start(["--isolation", isolation, "--config", config])
        func health() -> [String: Any]? { (try? host.service("test.reporter"))?["health"] as? [String: Any] }
        try host.ctl("post", "health.poke")
        #expect(eventually { health()?["status"] as? String == "healthy" })
        #expect(FileManager.default.createFile(atPath: marker, contents: nil))
        try host.ctl("post", "health.poke")
        #expect(eventually { health()?["unhealthyChecks"] as? Int == 1 })
        #expect(health()?["reason"] as? String == "reported unhealthy")
        try host.ctl("post", "health.poke")
        #expect(eventually { health()?["restarts"] as? Int == 1 })
        try FileManager.default.removeItem(atPath: marker)
        try host.ctl("post", "health.poke")
        #expect(eventually { health()?["status"] as? String == "healthy" && health()?["checks"] as? Int == 4 })
        let result = host.stop()
        #expect(result.status == 0)
        let records = result.records
        let acted = records.named(.healthUnhealthy)
        #expect(
            acted.map { [$0.string("service"), $0.string("action"), $0.string("reason")] } == [
                ["test.reporter", "restart", "reported unhealthy"]
            ], "\(records.text)")
        #expect(records.probe(1).filter { $0.source == "test.reporter" }.count == 2, "\(records.text)")
    }
}
