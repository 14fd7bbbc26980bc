import Foundation
import TestSupport
import Testing

/// A settings edit picked up by a reload (issue 42 item 3): a service that handles
/// didChangeSettings is told, old and new, and keeps running; one that does not is restarted
/// with the new settings, as before. In the host's process and in a worker.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct LiveSettingsTests {
    @Test(arguments: ["in-process", "process"])
    func aSettingsEdit_reachesAServiceThatHandlesIt_withoutARestart_andRestartsOneThatDoesNot(_ isolation: String)
        throws
    {
        let host = try IsolatedHost()
        try host.probe(
            "live",
            ["PROBE_ID=\"test.live\"", "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_CHANGE_SETTINGS))"])
        try host.probe("plain", ["PROBE_ID=\"test.plain\""])
        func configure(_ live: String, _ plain: String) throws -> String {
            try host.file(
                "services.json",
                #"{"services": {"test.live": {\#(live)}, "test.plain": {"settings": {"n": \#(plain)}}}}"#)
        }
        let config = try configure(#""settings": {"n": 0}"#, "0")
        try host.start(["--isolation", isolation, "--config", config])
        _ = try configure(#""settings": {"n": 1}"#, "1")
        let reply = try host.reply("reload")
        #expect(reply["reconfigured"] as? [String] == ["test.live"], "\(reply)")
        #expect(reply["replaced"] as? [String] == ["test.plain"], "\(reply)")
        // Settings dropped: told too (new: none); the text reply names it.
        _ = try configure("", "1")
        #expect(try host.ctl("reload").stdout.contains("settings delivered live: test.live"))
        // Another key changed with them: a restart, as before.
        _ = try configure(#""settings": {"n": 2}, "priority": 5"#, "1")
        #expect(try host.reply("reload")["replaced"] as? [String] == ["test.live"])
        _ = try configure(#""settings": {"n": 3}, "priority": 5"#, "1")
        #expect(try host.reply("reload")["reconfigured"] as? [String] == ["test.live"])
        // A restart later launches it with the settings it was told of.
        try host.ctl("service", "restart", "test.live")
        let result = host.stop()
        #expect(result.status == 0)
        let records = result.records

        let changes = records.probe(40).filter { $0.source == "test.live" }.map(\.message)
        #expect(changes.count == 3, "\(records.text)")
        #expect(changes.first?.hasSuffix(#" old={"n":0} new={"n":1}"#) == true, "\(changes)")
        #expect(changes.dropFirst().first?.hasSuffix(#" old={"n":1} new=-"#) == true, "\(changes)")
        #expect(changes.last?.hasSuffix(#" old={"n":2} new={"n":3}"#) == true, "\(changes)")
        let liveLaunches = records.probe(1).filter { $0.source == "test.live" }.map(\.message)
        // The start, the priority change and the restart: never for a settings edit alone.
        #expect(liveLaunches.count == 3, "\(liveLaunches)")
        #expect(liveLaunches.last?.contains(#"settings={"n":3}"#) == true, "\(liveLaunches)")
        let plainLaunches = records.probe(1).filter { $0.source == "test.plain" }.map(\.message)
        #expect(plainLaunches.count == 2 && plainLaunches.last?.contains(#"settings={"n":1}"#) == true)
        #expect(records.probe(40).filter { $0.source == "test.plain" }.isEmpty)

        let done = records.named(.reloadDone)
        #expect(done.map { $0.strings("reconfigured") ?? [] } == [["test.live"], ["test.live"], [], ["test.live"]])
        #expect(done.first?.strings("replaced") == ["test.plain"])
        let told = records.named(.serviceSettingsChanged)
        #expect(
            told.map { [$0.level, $0.source, $0.string("service")] }
                == Array(
                    repeating: ["info", "host", "test.live"], count: 3), "\(records.text)")
        #expect(told.allSatisfy { $0.int("result") == 0 })
    }

    /// `host ctl configure ID JSON`: live to a service that handles didChangeSettings, a restart
    /// with the new settings for one that does not; the reply says which.
    @Test(arguments: ["in-process", "process"])
    func ctlConfigure_deliversLive_orRestarts_andSaysWhich(_ isolation: String) throws {
        let host = try IsolatedHost()
        try host.probe(
            "live",
            ["PROBE_ID=\"test.live\"", "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_CHANGE_SETTINGS))"])
        try host.probe("plain", ["PROBE_ID=\"test.plain\""])
        let config = try host.file("services.json", #"{"services": {"test.live": {"settings": {"n": 0}}}}"#)
        try host.start(["--isolation", isolation, "--config", config])
        let live = try host.reply("configure", "test.live", #"{"n": 1}"#)
        #expect(live["reconfigured"] as? [String] == ["test.live"] && live["restarted"] == nil, "\(live)")
        let plain = try host.reply("configure", "test.plain", #"{"n": 2}"#)
        #expect(plain["restarted"] as? [String] == ["test.plain"], "\(plain)")
        let none = try host.ctl("configure", "test.live", "null")
        #expect(
            none.stdout == "configured test.live: settings delivered live (didChangeSettings)\n",
            "\(none.stdout)\(none.stderr)")
        let unknown = try host.ctl("configure", "test.nope", "{}")
        #expect(unknown.status == 1 && unknown.stderr.contains("test.nope"), "\(unknown.stderr)")
        let array = try host.ctl("configure", "test.live", "[1]")
        #expect(array.status == 1 && array.stderr.contains("must be an object"), "\(array.stderr)")
        let result = host.stop()
        #expect(result.status == 0)
        let records = result.records
        let changes = records.probe(40).filter { $0.source == "test.live" }.map(\.message)
        #expect(changes.count == 2, "\(records.text)")
        #expect(changes.first?.hasSuffix(#" old={"n":0} new={"n":1}"#) == true, "\(changes)")
        #expect(changes.last?.hasSuffix(#" old={"n":1} new=-"#) == true, "\(changes)")
        #expect(records.probe(1).filter { $0.source == "test.live" }.count == 1)
        let plainLaunches = records.probe(1).filter { $0.source == "test.plain" }.map(\.message)
        #expect(
            plainLaunches.count == 2 && plainLaunches.last?.contains(#"settings={"n":2}"#) == true, "\(plainLaunches)")
    }
}
