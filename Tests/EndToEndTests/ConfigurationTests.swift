import Foundation
import TestSupport
import Testing

/// The configuration file, first launch, policies and hot reload, through the real binary.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct ConfigurationTests {
    private func probes(_ host: RunningHost, _ ids: [String], _ extra: [String] = []) throws {
        for id in ids { try host.probe(id, ["PROBE_ID=\"test.\(id)\""] + extra) }
    }

    @Test func configReordersDisablesAndConfigures() throws {
        let host = try RunningHost()
        try probes(host, ["a", "b", "c", "d"])
        let config = try host.file(
            "services.json",
            """
            {"services": {
              "test.a": {"requires": ["test.c"], "settings": {"greeting": "hi", "n": 2}},
              "test.b": {"enabled": false},
              "test.c": {"after": ["test.d"]},
              "test.d": {"priority": 5}
            }}
            """)
        try host.start(["--config", config])
        let result = host.stop()
        // d before c (after), c before a (requires); b never loaded.
        #expect(
            Array(host.events.prefix(3)) == [
                "willFinishLaunching test.d", "willFinishLaunching test.c",
                "willFinishLaunching test.a",
            ])
        #expect(host.events.suffix(3) == ["willTerminate test.a", "willTerminate test.c", "willTerminate test.d"])
        #expect(!host.events.contains { $0.hasSuffix("test.b") })
        #expect(
            result.records.named(.serviceDisabled).map { [$0.level, $0.source, $0.string("service")] }
                == [["info", "host", "test.b"]], "\(result.records.text)")
        #expect(
            result.records.probe(1).first { $0.source == "test.a" }?.message.contains(
                #"settings={"greeting":"hi","n":2}"#) == true)
    }

    @Test func servicesJSONInThePluginDirectory_isTheDefault_andOnlyConfiguredLeavesOthersOut() throws {
        let host = try RunningHost()
        try probes(host, ["a", "b"])
        _ = try host.file("lib/services.json", #"{"services": {"test.b": {}}}"#)
        try host.start(["--only-configured"])
        let result = host.stop()
        #expect(host.events.allSatisfy { $0.hasSuffix("test.b") })
        #expect(
            result.records.named(.serviceNotConfigured).map { [$0.level, $0.source, $0.string("service")] }
                == [["info", "host", "test.a"]], "\(result.records.text)")
    }

    @Test(arguments: [
        (
            #"{"services": {"test.a": {"priorty": 1}}}"#,
            "services.test.a.priorty: unknown key (did you mean \"priority\"?)"
        ),
        (#"{"services": {"test.a": {"enabled": "yes"}}}"#, "services.test.a.enabled"),
        (
            #"{"services": {"test.a": {"requires": ["test.b"]}, "test.b": {"requires": ["test.a"]}}}"#,
            "test.a → test.b → test.a"
        ),
        (#"{"services": {"test.a": {"requires": ["test.zzz"]}}}"#, "test.zzz"),
        // The stronger forms are requirements too: a cycle through them, a missing provider.
        (
            #"{"services": {"test.a": {"bindsTo": ["test.b"]}, "test.b": {"partOf": ["test.a"]}}}"#,
            "test.a → test.b → test.a"
        ),
        (#"{"services": {"test.a": {"partOf": ["test.zzz"]}}}"#, "test.zzz"),
        (
            #"{"services": {"test.a": {"bindsTo": ["test.b"], "partOf": ["test.b"]}}}"#,
            "services.test.a.partOf: test.b is in bindsTo too"
        ),
        (
            #"{"services": {"test.zzz": {"policy": "required"}}}"#,
            "required service test.zzz is in the configuration but no plugin provides it"
        ),
        (#"{"services": "#, "services.json"),
    ])
    func configErrors_exitTwoNamingTheProblem(config: String, expected: String) throws {
        let host = try RunningHost()
        try probes(host, ["a", "b"])
        let path = try host.file("services.json", config)
        let result = try Command.run(
            try Repository.product("host"),
            [
                "--plugins", host.lib, "--config", path, "--control", host.control, "--state-dir", host.stateDirectory,
                "--log-format", "json",
            ])
        #expect(result.status == 2)
        // One error line; its message is the configuration reader's, naming the key, cycle, service or file.
        #expect(
            result.records.named(.hostLoadFailed).map { $0.level == "error" && $0.message.contains(expected) } == [
                true
            ],
            "\(result.stderr)")
    }

    /// Issue 36 item 12: every number of the file is range-checked where it is read, naming the
    /// key and the range (`eventTimeout: 1e300` with process isolation trapped the host, status 132).
    @Test(arguments: [
        ("eventTimeout", "1e300", "more than 0 and at most 86400"),
        ("eventTimeout", "86401", "more than 0 and at most 86400"),
        ("eventTimeout", "0", "more than 0 and at most 86400"),
        ("priority", "1e10", "from -2147483648 to 2147483647"),
    ])
    func anOutOfRangeNumber_isAConfigurationError_namingTheKeyAndTheRange(
        key: String, value: String, range: String
    ) throws {
        let host = try RunningHost()
        try probes(host, ["a"])
        let path = try host.file("services.json", #"{"services": {"test.a": {"\#(key)": \#(value)}}}"#)
        let result = try Command.run(
            try Repository.product("host"),
            [
                "--plugins", host.lib, "--config", path, "--control", host.control, "--state-dir", host.stateDirectory,
                "--isolation", "process", "--log-format", "json",
            ])
        #expect(result.status == 2, "\(result.stderr)")
        let failed = result.records.named(.hostLoadFailed)
        #expect(
            failed.map { [$0.level, $0.string("key")] } == [["error", "services.test.a.\(key)"]], "\(result.stderr)")
        #expect(failed.first?.message.contains(range) == true, "\(result.stderr)")
    }

    /// The largest `eventTimeout` in range runs (process isolation sets it as the worker
    /// socket's send timeout, where 1e300 trapped).
    @Test func theLargestEventTimeout_runsAnIsolatedService() throws {
        let host = try RunningHost()
        try probes(host, ["a"])
        let config = try host.file("services.json", #"{"services": {"test.a": {"eventTimeout": 86400}}}"#)
        try host.start(["--config", config, "--isolation", "process"])
        #expect(try host.ctlJSON("list").reply["services"] as? [[String: Any]] != nil)
        #expect(host.stop().status == 0)
    }

    @Test func requiredServiceThatFailsToLaunch_stopsTheHost_optionalOneIsStopped() throws {
        let host = try RunningHost()
        try host.probe("opt", ["PROBE_ID=\"test.opt\"", "PROBE_FAIL_KIND=SH_EVENT_DID_FINISH_LAUNCHING"])
        try host.probe("ok", ["PROBE_ID=\"test.ok\""])
        try host.start()
        _ = host.stop()
        #expect(!host.events.contains("didBecomeActive test.opt"))
        #expect(host.events.contains("didBecomeActive test.ok"))

        let strict = try RunningHost()
        try strict.probe("req", ["PROBE_ID=\"test.req\"", "PROBE_FAIL_KIND=SH_EVENT_DID_FINISH_LAUNCHING"])
        let config = try strict.file("services.json", #"{"services": {"test.req": {"policy": "required"}}}"#)
        let result = try Command.run(
            try Repository.product("host"),
            [
                "--plugins", strict.lib, "--config", config,
                "--control", strict.control, "--state-dir", strict.stateDirectory,
                "--log-format", "json",
            ])
        #expect(result.status == 2)
        #expect(result.records.named(.hostRequiredFailed).map { [$0.level, $0.source] } == [["error", "host"]])
        #expect(result.records.named(.hostRequiredFailed).first?.strings("services") == ["test.req"])
    }

    @Test func firstLaunch_autoAlwaysNever() throws {
        let host = try RunningHost()
        try probes(host, ["a"])
        func flags(_ mode: String) throws -> UInt32? {
            try host.start(["--first-launch", mode])
            return host.stop().records.launchFlags(of: "test.a")
        }
        #expect(try flags("auto") == 3)  // first host launch and first service launch
        #expect(try flags("auto") == 0)  // remembered in the state directory
        #expect(try flags("always") == 3)
        #expect(try flags("never") == 0)
        #expect(try flags("auto") == 0)  // always/never neither read nor wrote the marks
    }

    @Test func reload_addsCatchesUp_removesTakesDown_replacesChangedFiles() throws {
        let host = try RunningHost()
        try probes(host, ["a", "b"])
        try host.start()
        try host.ctl("background")
        try probes(host, ["c"])  // added
        try FileManager.default.removeItem(atPath: host.lib + "/b.so")  // removed
        usleep(20_000)
        // Changed.
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_PRIORITY=0", "PROBE_SLEEP_KIND=99", "PROBE_SLEEP_MS=1"])
        let reload = try host.ctlJSON("reload")
        #expect(reload.status == 0)
        #expect(reload.reply["added"] as? [String] == ["test.c"])
        #expect(reload.reply["removed"] as? [String] == ["test.b"])
        #expect(reload.reply["replaced"] as? [String] == ["test.a"])
        _ = host.stop()
        // Taken down from the background state: only willTerminate; caught up to background
        // the way a start delivers: event by event, didEnterBackground in reverse order.
        let reloadEvents = Array(host.events.dropFirst(3 * 2 + 2 * 2))
        #expect(
            Array(reloadEvents.prefix(8)) == [
                "willTerminate test.b", "willTerminate test.a",
                "willFinishLaunching test.a", "willFinishLaunching test.c", "didFinishLaunching test.a",
                "didFinishLaunching test.c", "didEnterBackground test.c", "didEnterBackground test.a",
            ], "\(host.events)")
    }

    /// A SIGHUP whose reload fails says so in the log (no client to answer), and nothing changes.
    @Test func aSIGHUPWhoseReloadFails_isLoggedAsAnError_andChangesNothing() throws {
        let host = try RunningHost()
        try probes(host, ["a"])
        let config = try host.file("services.json", #"{"services": {}}"#)
        try host.start(["--config", config])
        // The log as it comes: the reload's records are awaited, not slept for.
        let watcher = try ControlSocket(path: host.control)
        watcher.send("{\"command\":\"watch\",\"logs\":true}\n")
        #expect(watcher.readReply()?["watching"] as? Bool == true)
        _ = try host.file("services.json", #"{"services": {"test.a": {"enabld": true}}}"#)
        host.process?.send(SIGHUP)
        var events: [String] = []
        while !events.contains(LogEvent.reloadFailed.name), let record = watcher.readReply() {
            guard let line = record["log"] as? String,
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let event = object["event"] as? String
            else { continue }
            events.append(event)
        }
        #expect(events == [LogEvent.reloadRequested.name, LogEvent.reloadFailed.name])
        #expect(try host.ctl("list").stdout.contains("test.a"))
        let records = host.stop().records
        let failed = records.named(.reloadFailed)
        #expect(failed.map { [$0.level, $0.source] } == [["error", "host"]], "\(records.text)")
        #expect(failed.first?.message.contains("enabld") == true)  // the error names the key
        #expect(host.events.filter { $0.hasSuffix(" test.a") }.last == "willTerminate test.a")
        #expect(host.events.filter { $0 == "didFinishLaunching test.a" }.count == 1)
    }

    /// What `list` answers while the main thread is stuck follows a reload by SIGHUP (no request
    /// publishes it): the service the reload added, stuck in its catch-up, is listed.
    @Test func aSIGHUPReloadStuckInItsCatchUp_isListedFromTheSnapshot() throws {
        let host = try RunningHost()
        try probes(host, ["a"])
        try host.probe("hang", ["PROBE_ID=\"test.hang\"", "PROBE_HANG_KIND=SH_EVENT_DID_FINISH_LAUNCHING"])
        let config = try host.file("services.json", #"{"services": {"test.hang": {"enabled": false}}}"#)
        try host.start(["--config", config, "--event-timeout", "1"])
        let before = (try host.ctlJSON("list").reply["services"] as? [[String: Any]])?.compactMap {
            $0["id"] as? String
        }
        #expect(before == ["test.a"], "\(before ?? [])")

        _ = try host.file("services.json", #"{"services": {}}"#)
        host.process?.send(SIGHUP)
        #expect(
            eventually {
                ((try? host.ctlJSON("state").reply)?["stuck"] as? [String: Any])?["service"] as? String == "test.hang"
            })
        let listed = try host.ctlJSON("list")
        #expect(listed.reply["snapshot"] as? Bool == true, "\(listed.reply)")
        let ids = (listed.reply["services"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        #expect(Set(ids ?? []) == ["test.a", "test.hang"], "\(ids ?? [])")
        _ = host.signal(SIGKILL)
    }

    @Test func failedReload_changesNothing_andSIGHUPReloads() throws {
        let host = try RunningHost()
        try probes(host, ["a"])
        let config = try host.file("services.json", #"{"services": {}}"#)
        try host.start(["--config", config])
        _ = try host.file("services.json", #"{"services": {"test.a": {"enabld": true}}}"#)
        let failed = try host.ctl("reload")
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("enabld"))  // the error names the key
        #expect(try host.ctl("list").stdout.contains("test.a"))

        _ = try host.file("services.json", #"{"services": {"test.a": {"enabled": false}}}"#)
        host.process?.send(SIGHUP)
        #expect(eventually { host.events.contains("willTerminate test.a") })
        #expect(!(try host.ctl("list").stdout.contains("test.a")))
    }
}
