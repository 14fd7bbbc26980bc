import Foundation
import TestSupport
import Testing

/// Crash and hang isolation with the real binary, as a user meets it (issue 5's "done when").
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct IsolationTests {
    @Test func aServiceThatSegfaultsOnBackground_isRestarted_andTheOthersNeverNotice() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_PRIORITY=10"])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.bad(
            "segv",
            [
                "BAD_ID=\"test.segv\"", "BAD_ON_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "BAD_ACTION=1",
                "BAD_ONCE_MARKER=" + host.marker("segv.crashed"),
            ])
        try host.start(["--isolation", "process"])
        #expect(try host.ctl("background").stdout.contains("state: background"))
        #expect(eventually { (try? host.service("test.segv"))?["restarts"] as? Int == 1 })
        #expect(try host.service("test.segv")?["state"] as? String == "running")
        try host.ctl("foreground")
        try host.ctl("activate")
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")

        for other in ["test.a", "test.b"] { #expect(host.events(of: other) == steadyLifecycle, "\(other)") }
        // The crash, then the catch-up to the background state, marked as a restart, then on as usual.
        #expect(
            host.events(of: "test.segv") == [
                "willFinishLaunching", "didFinishLaunching", "didBecomeActive",
                "willResignActive", "didEnterBackground",
                "willFinishLaunching", "didFinishLaunching", "didEnterBackground",
                "willEnterForeground", "didBecomeActive", "willResignActive",
                "didEnterBackground", "willTerminate",
            ])
        let records = result.records
        let crashed = records.named(.workerCrashed)
        #expect(crashed.map { [$0.level, $0.source] } == [["error", "host"]], "\(records.text)")
        let crash = crashed.first
        #expect(crash?.strings("services") == ["test.segv"])
        #expect(
            crash?.string("cause") == "signal" && crash?.int("signal") == 11
                && crash?.string("event") == "didEnterBackground")
        #expect(crash?.string("restart") == "0.1" && crash?.int("pid") != nil)
        let restarted = records.named(.workerRestarted)
        #expect(restarted.map { [$0.level, $0.source] } == [["info", "host"]])
        #expect(restarted.first?.strings("services") == ["test.segv"])
        #expect(restarted.first.map { $0.int("pid") != nil && $0.int("pid") != crash?.int("pid") } == true)
        let segv = records.messages(from: "test.segv")
        #expect(segv.contains { $0.hasPrefix("bad test.segv: event 1 state 1 restart 1") }, "\(segv)")
        #expect(segv.contains { $0.hasPrefix("bad test.segv: event 5 state 3") })
        // The crash report, the worker's stderr relayed line by line, names the plugin's own function.
        let output = records.named(.workerOutput).filter { $0.source == "test.segv" }.compactMap { $0.string("line") }
        if Sanitizer.crashReportsEnabled {
            #expect(
                output.contains { $0.contains("segfault") } && output.contains { $0.contains("in segv.so") },
                "\(output)")
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func aRestartedWorker_andAReloadedService_areCaughtUpTheSameWay() throws {
        let host = try IsolatedHost()
        try host.bad(
            "segv",
            [
                "BAD_ID=\"test.segv\"", "BAD_ON_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "BAD_ACTION=1",
                "BAD_ONCE_MARKER=" + host.marker("segv.crashed"),
            ])
        let config = try host.file(
            "services.json",
            #"""
            {"services": {"test.segv": {"isolation": "process", "settings": {"mode": "x"}},
                          "test.late": {"settings": {"mode": "x"}}}}
            """#)
        try host.start(["--config", config, "--first-launch", "always"])
        #expect(try host.ctl("background").status == 0)
        #expect(eventually { (try? host.service("test.segv"))?["restarts"] as? Int == 1 })
        // The same plugin under another id arrives by reload, in the host's process.
        try host.bad("late", ["BAD_ID=\"test.late\""])
        #expect(try host.ctlJSON("reload").reply["added"] as? [String] == ["test.late"])
        let records = host.stop().records
        let log = records.text

        // What each late launch event carried: state, restart, flags, settings.
        func caughtUp(_ id: String) -> [String] {
            records.messages(from: id).filter { $0.hasPrefix("bad \(id): event ") && $0.contains("restart 1") }
                .map { String($0.dropFirst("bad \(id): ".count)) }
        }
        let restarted = caughtUp("test.segv")
        let reloaded = caughtUp("test.late")
        #expect(restarted.count == 2, "\(log)")
        #expect(restarted == reloaded, "\(log)")
        // Restart (4) and first launch (1, 2, as --first-launch always says), with the service's settings,
        // in the state a service launched with the host saw (inactive).
        #expect(restarted.first == #"event 1 state 1 restart 1 flags=7 settings={"mode":"x"}"#, "\(log)")
    }

    @Test func aCrashLoop_isBlockedUntilTheFileChanges_andTheReasonIsShown() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let defines = ["BAD_ID=\"test.loop\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE"]
        let plugin = try host.bad("loop", defines + ["BAD_ACTION=2"])
        try host.start(["--isolation", "process", "--crash-limit", "3/60"])
        #expect(eventually { (try? host.service("test.loop"))?["state"] as? String == "failed" })
        let failure = try #require(try host.service("test.loop")?["failure"] as? [String: Any])
        #expect(
            failure["summary"] as? String == nil
                ? false
                : (failure["summary"] as! String).hasPrefix(
                    "crashed 3 times within 60 s; the last time its worker was killed by signal 6 (SIGABRT) while handling didBecomeActive"
                ))
        #expect(failure["signalName"] as? String == "SIGABRT" && failure["event"] as? String == "didBecomeActive")
        #expect(try host.ctl("list").stdout.contains("test.loop 0.1.0 (failed)"))
        #expect(try host.ctl("list").stdout.contains("failed: crashed 3 times within 60 s"))
        let inspect = try Command.run(
            try Repository.product("host"), ["inspect", "--state-dir", host.stateDirectory, plugin])
        #expect(
            inspect.stdout.contains(
                "    failed:   crashed 3 times within 60 s; the last time its worker was killed by signal 6 (SIGABRT)"),
            "\(inspect.stdout)")
        let first = host.stop()
        #expect(first.status == 0)
        let failed = first.records.named(.workerFailed)
        #expect(failed.map { [$0.level, $0.source] } == [["error", "host"]], "\(first.records.text)")
        #expect(failed.first?.strings("services") == ["test.loop"] && failed.first?.string("path") == plugin)
        #expect(failed.first?.strings("records") == ["\(host.stateDirectory)/failures/test.loop.json"])
        #expect(failed.first.map { $0.int("signal") == 6 && $0.string("event") == "didBecomeActive" } == true)
        #expect(first.records.named(.workerCrashed).count == 2)  // the two crashes before the third
        // `host check` reads the record as the next start will: blocked when the file runs in a
        // worker; in the host's own process the record does not apply.
        func check(_ isolation: String) throws -> (status: Int32, report: [String: Any]) {
            let result = try Command.run(
                try Repository.product("host"),
                [
                    "check", "--plugins", host.lib, "--state-dir", host.stateDirectory, "--isolation", isolation,
                    "--json",
                ])
            return (
                result.status,
                try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            )
        }
        let blocked = try check("process")
        #expect(blocked.status == 2)
        let problems = blocked.report["problems"] as? [[String: Any]] ?? []
        #expect(
            problems.map { [$0["severity"], $0["code"], $0["service"], $0["file"]] as? [String] }
                == [["error", "crash-looped", "test.loop", plugin]], "\(problems)")
        #expect((blocked.report["order"] as? [[String: Any]])?.map { $0["service"] as? String } == ["test.a"])
        let inProcess = try check("in-process")
        #expect(
            inProcess.status == 0 && (inProcess.report["problems"] as? [Any])?.isEmpty == true, "\(inProcess.report)")
        #expect((inProcess.report["order"] as? [[String: Any]])?.count == 2)
        #expect(
            host.events(of: "test.a") == [
                "willFinishLaunching", "didFinishLaunching", "didBecomeActive",
                "willResignActive", "didEnterBackground", "willTerminate",
            ])

        // As an older host wrote it (no change time): it still blocks the same file, and the
        // next start rewrites it with the file's change time.
        let recordPath = host.stateDirectory + "/failures/test.loop.json"
        let record = { () throws -> [String: Any] in
            try #require(
                JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: recordPath))) as? [String: Any]
            )
        }
        var legacy = try record()
        var identity = try #require(legacy["file"] as? [String: Any])
        identity["changed"] = nil
        legacy["file"] = identity
        try JSONSerialization.data(withJSONObject: legacy).write(to: URL(fileURLWithPath: recordPath))

        // A new start with the same file: still failed, with its reason.
        try host.start(["--isolation", "process", "--crash-limit", "3/60"])
        #expect(try host.service("test.loop")?["state"] as? String == "failed")
        #expect((try record()["file"] as? [String: Any])?["changed"] is String)
        // A new build (atomically in place): the running host notices and starts it.
        let fixed = try Command.compileC(
            Repository.fixture("BadPlugins/bad.c"), to: host.scratch.file("loop.so"), defines: defines)
        #expect(rename(fixed, plugin) == 0)
        #expect(eventually { (try? host.service("test.loop"))?["state"] as? String == "running" })
        let inspectAfter = try Command.run(
            try Repository.product("host"), ["inspect", "--state-dir", host.stateDirectory, plugin])
        #expect(!inspectAfter.stdout.contains("failed:"))
        #expect(try check("process").status == 0)
        let second = host.stop().records
        #expect(
            second.named(.workerBlocked).map { [$0.level, $0.source, $0.string("path")] } == [
                ["error", "host", plugin]
            ],
            "\(second.text)")
        #expect(second.named(.workerBlocked).first?.strings("services") == ["test.loop"])
        #expect(
            second.named(.workerFileChanged).map { [$0.level, $0.source, $0.string("path")] } == [
                ["info", "host", plugin]
            ])
        #expect(second.named(.workerFileChanged).first?.strings("services") == ["test.loop"])
        #expect(second.messages(from: "test.loop").contains { $0.hasPrefix("bad test.loop: event 3 state 2") })
        #expect(!FileManager.default.fileExists(atPath: host.stateDirectory + "/failures/test.loop.json"))
    }

    /// systemd's `reset-failed`: a crash-looped service comes back by request once its cause is
    /// gone, on the file it failed with (no new build); a service not failed is refused by name.
    @Test func aCrashLoop_comesBackWithResetFailed_withoutANewFile() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let fixed = host.scratch.file("fixed")
        let plugin = try host.bad(
            "loop",
            [
                "BAD_ID=\"test.loop\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=2",
                "BAD_UNTIL_MARKER=\"\(fixed)\"",
            ])
        try host.start(["--isolation", "process", "--crash-limit", "3/60"])
        #expect(eventually { (try? host.service("test.loop"))?["state"] as? String == "failed" })
        #expect(try host.service("test.loop")?["resetAt"] == nil)  // no restartResetAfter: never by itself
        let recordPath = host.stateDirectory + "/failures/test.loop.json"
        #expect(FileManager.default.fileExists(atPath: recordPath))
        // A running service and an unknown one are refused, named.
        let running = try host.reply("service", "reset-failed", "test.a")
        #expect(
            running["error"] as? String
                == "service test.a is not marked failed after a crash loop (it is running); nothing to reset",
            "\(running)")
        let unknown = try host.reply("service", "reset-failed", "test.nope")
        #expect((unknown["error"] as? String)?.hasPrefix("cannot reset unknown service test.nope") == true)
        #expect(try host.ctl("service", "reset-failed", "test.a", "--force").status == 2)

        // Reset while the cause is still there: started (its catch-up crashes it at once), and the
        // crashes count afresh to the limit: failed again.
        let early = try host.ctl("service", "reset-failed", "test.loop")
        #expect(early.stdout == "reset test.loop: restarting; app: active\n", "\(early.stdout)\(early.stderr)")
        #expect(eventually { (try? host.service("test.loop"))?["state"] as? String == "failed" })
        #expect(FileManager.default.fileExists(atPath: recordPath))

        #expect(FileManager.default.createFile(atPath: fixed, contents: nil))
        let reset = try host.reply("service", "reset-failed", "test.loop")
        #expect(reset["ok"] as? Bool == true, "\(reset)")
        #expect(reset["reset"] as? [String] == ["test.loop"])
        let listed = (reset["services"] as? [[String: Any]])?.first
        #expect(listed?["state"] as? String == "running" && listed?["failure"] == nil, "\(reset)")
        #expect(!FileManager.default.fileExists(atPath: recordPath))
        #expect(try host.ctl("list").stdout.contains("test.loop 0.1.0 (running)"))
        let again = try host.ctl("service", "reset-failed", "test.loop")
        #expect(again.status == 1 && again.stderr.contains("test.loop is not marked failed"))
        let result = host.stop()
        #expect(result.status == 0)
        let records = result.records
        let resetLines = records.named(.workerResetFailed)
        #expect(
            resetLines.map { [$0.level, $0.source, $0.string("path")] } == [
                ["info", "host", plugin], ["info", "host", plugin],
            ])
        #expect(records.named(.workerFailed).count == 2)
        #expect(resetLines.first?.strings("services") == ["test.loop"])
        #expect(records.named(.workerFailed).first?.string("resetAt") == "none")
        let order = records.compactMap(\.event).filter { $0.hasPrefix("worker.") && $0 != "worker.output" }
        #expect(order.suffix(2) == ["worker.resetFailed", "worker.restarted"], "\(order)")
        // Caught up by the one catch-up: the launch with SH_LAUNCH_RESTART, then active.
        #expect(
            Array(host.events(of: "test.loop").suffix(6)) == [
                "willFinishLaunching", "didFinishLaunching", "didBecomeActive",
                "willResignActive", "didEnterBackground", "willTerminate",
            ])
        #expect(
            records.messages(from: "test.loop").contains { $0.hasPrefix("bad test.loop: event 1 state 1 restart 1") })
    }

    /// `restartResetAfter` lifts a crash loop by itself (the host's clock; its exact timing is
    /// IsolationHostTests' on a manual clock), and `ctl list` says when.
    @Test func restartResetAfter_startsACrashLoopedServiceAgainByItself() throws {
        let host = try IsolatedHost()
        let fixed = host.scratch.file("fixed")
        try host.bad(
            "loop",
            [
                "BAD_ID=\"test.loop\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=2",
                "BAD_UNTIL_MARKER=\"\(fixed)\"",
            ])
        let configuration = try host.file(
            "services.json", #"{"services": {"test.loop": {"restartResetAfter": 600}}}"#)
        try host.start(["--isolation", "process", "--crash-limit", "2/60", "--config", configuration])
        #expect(eventually { (try? host.service("test.loop"))?["state"] as? String == "failed" })
        let resetAt = try #require(try host.service("test.loop")?["resetAt"] as? String)
        #expect(try host.ctl("list").stdout.contains("not restarted until its file changes or \(resetAt)"))
        let result = host.stop()
        #expect(result.records.named(.workerFailed).first?.string("resetAt") == resetAt, "\(result.records.text)")

        // A new host keeps it failed (the same file) and re-arms it too; a short time this once.
        let short = try host.file("services.json", #"{"services": {"test.loop": {"restartResetAfter": 0.5}}}"#)
        #expect(FileManager.default.createFile(atPath: fixed, contents: nil))
        try host.start(["--isolation", "process", "--crash-limit", "2/60", "--config", short])
        #expect(eventually { (try? host.service("test.loop"))?["state"] as? String == "running" })
        let second = host.stop().records
        #expect(second.named(.workerBlocked).first?.string("resetAt") != "none", "\(second.text)")
        #expect(second.named(.workerRearmed).map { $0.string("after") } == ["0.5"], "\(second.text)")
        #expect(!FileManager.default.fileExists(atPath: host.stateDirectory + "/failures/test.loop.json"))
    }

    /// A failure record damaged on disk (a signal no host writes, past Int32) is not a record:
    /// `host check` and the host read it and run the service, where reading it trapped before.
    @Test func aDamagedFailureRecord_isNotOne_andTheServiceRunsInItsWorker() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let failures = host.stateDirectory + "/failures"
        try FileManager.default.createDirectory(
            atPath: failures, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: host.stateDirectory)
        var record = try #require(
            JSONSerialization.jsonObject(
                with: Data(
                    contentsOf: Repository.root.appendingPathComponent(
                        "Tests/Fuzz/Corpus/state/record-signal-out-of-range.json")))
                as? [String: Any])
        record["service"] = "test.a"
        record["path"] = host.lib + "/a.so"
        try JSONSerialization.data(withJSONObject: record).write(to: URL(fileURLWithPath: failures + "/test.a.json"))

        let check = try Command.run(
            try Repository.product("host"),
            ["check", "--plugins", host.lib, "--state-dir", host.stateDirectory, "--isolation", "process", "--json"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        try host.start(["--isolation", "process"])
        #expect(try host.service("test.a")?["state"] as? String == "running")
        #expect(host.stop().status == 0)
    }

    @Test func aHungServiceInAWorker_isKilledAfterItsDeadline_andRestarted() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.bad(
            "spin",
            [
                "BAD_ID=\"test.spin\"", "BAD_ON_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "BAD_ACTION=4",
                "BAD_ONCE_MARKER=" + host.marker("spin.hung"),
            ])
        // test.spin's 1 s deadline is the point; test.a, whose events are compared, keeps one no
        // loaded machine can miss.
        let configuration = try host.file("services.json", #"{"services": {"test.a": {"eventTimeout": 300}}}"#)
        try host.start(["--isolation", "process", "--event-timeout", "1", "--config", configuration])
        #expect(try host.ctl("background").stdout.contains("state: background"))
        #expect(eventually { (try? host.service("test.spin"))?["restarts"] as? Int == 1 })
        try host.ctl("activate")
        let result = host.stop()
        #expect(result.status == 0)
        let hung = result.records.named(.workerCrashed)
        #expect(
            hung.map { [$0.level, $0.source, $0.string("cause"), $0.string("event"), $0.string("restart")] }
                == [["error", "host", "hang", "didEnterBackground", "0.1"]], "\(result.records.text)")
        #expect(hung.first.map { $0.strings("services") == ["test.spin"] && $0.int("pid") != nil } == true)
        #expect(
            host.events(of: "test.a") == steadyLifecycle.prefix(5) + [
                "willEnterForeground", "didBecomeActive",
                "willResignActive", "didEnterBackground", "willTerminate",
            ])
    }

    // The snapshot keeps services as they are and describes them only when it answers: what it
    // lists while the main thread is stuck is what `list` showed before, after a reload and an
    // error too.
    @Test func theSnapshotsList_isTheListBeforeTheHang_afterAReloadAndAnError() throws {
        let host = try IsolatedHost()
        try host.probe(
            "a", ["PROBE_ID=\"test.a\"", "PROBE_URL_CLAIM=\"myapp\"", "PROBE_FAIL_KIND=SH_EVENT_DID_BECOME_ACTIVE"])
        try host.bad("hang", ["BAD_ID=\"test.hang\"", "BAD_ON_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "BAD_ACTION=9"])
        try host.start(["--event-timeout", "1"])
        try host.probe("c", ["PROBE_ID=\"test.c\"", "PROBE_SUBSCRIBE=\"test.note\""])
        #expect(try host.ctl("reload").status == 0)
        let before = try #require(try host.reply("list")["services"] as? [[String: Any]])
        #expect(Set(before.compactMap { $0["id"] as? String }) == ["test.a", "test.c", "test.hang"], "\(before)")
        let a = try #require(before.first { $0["id"] as? String == "test.a" })
        #expect((a["lastError"] as? String)?.contains("didBecomeActive") == true, "\(a)")
        #expect(
            (a["events"] as? [String])?.contains("didBecomeActive") == true && a["urls"] as? [String] == ["myapp"],
            "\(a)")
        let socket = try ControlSocket(path: host.control)
        socket.send(#"{"command":"background"}"# + "\n")  // never answered: the main thread is stuck
        #expect(eventually { (try? host.reply("state"))?["stuck"] != nil })
        let listed = try host.reply("list")
        #expect(listed["snapshot"] as? Bool == true, "\(listed)")
        let during = try #require(listed["services"] as? [[String: Any]])
        let keys = [
            "id", "name", "version", "path", "priority", "events", "urls", "activities", "subscriptions", "sceneRoles",
            "lastError",
            "retiredCopies", "activation",
        ]
        let shown = { (list: [[String: Any]]) in list.map { service in keys.map { "\($0)=\(service[$0] ?? "absent")" } }
        }
        #expect(shown(during) == shown(before))
        #expect(during.first { $0["id"] as? String == "test.hang" }?["state"] as? String == "stuck")
        _ = host.signal(SIGKILL)
    }

    @Test func anInProcessHang_isNamedOnce_stateAndListStillAnswer_andTheNextStartNamesIt() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.bad("hang", ["BAD_ID=\"test.hang\"", "BAD_ON_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "BAD_ACTION=9"])
        try host.start(["--event-timeout", "1"])
        let socket = try ControlSocket(path: host.control)
        // Opened before the hang: connections are read on the main thread, so this one must be
        // read elsewhere once it is stuck.
        let earlier = try ControlSocket(path: host.control)
        #expect(earlier.readReplyAfter(#"{"command":"state"}"#)?["state"] as? String == "active")
        socket.send(#"{"command":"background"}"# + "\n")  // never answered: the main thread is stuck
        #expect(eventually { (try? host.reply("state"))?["stuck"] != nil })
        let listed = earlier.readReplyAfter(#"{"id":2,"command":"list"}"#)
        #expect(listed?["snapshot"] as? Bool == true && listed?["id"] as? Int == 2, "\(String(describing: listed))")
        let state = try host.reply("state")
        let stuck = try #require(state["stuck"] as? [String: Any])
        #expect(stuck["service"] as? String == "test.hang" && stuck["event"] as? String == "didEnterBackground")
        #expect(state["snapshot"] as? Bool == true)
        #expect(try host.ctl("state").stdout.contains("stuck: test.hang has not returned from didEnterBackground"))
        #expect(try host.service("test.hang")?["state"] as? String == "stuck")
        #expect(try host.service("test.a")?["state"] as? String == "running")
        let killed = host.signal(SIGKILL).records
        // Named once, however long it stays stuck.
        #expect(
            killed.named(.serviceStuck).map { [$0.level, $0.source, $0.string("service"), $0.string("event")] }
                == [["error", "host", "test.hang", "didEnterBackground"]], "\(killed.text)")

        // The next start says who was running when the host died, and safe mode starts only the
        // trusted: here the bundled Uptime beside a copy of the host binary.
        let bin = try host.scratch.folder("bin")
        let bundled = try host.scratch.folder("bin/plugins")
        let executable = try host.scratch.copy(try Repository.product("host"), to: "bin/host")
        try host.scratch.copy(try Repository.product("libUptime.so"), to: "bin/plugins/libUptime.so")
        _ = bin
        try host.start(["--safe-mode"], plugins: [bundled, host.lib], executable: executable)
        let services = try host.reply("list")["services"] as? [[String: Any]] ?? []
        #expect(services.compactMap { $0["id"] as? String } == ["dev.servicehost.uptime"])
        let next = host.stop()
        #expect(next.status == 0)
        let unclean = next.records.named(.sentinelUncleanExit)
        #expect(
            unclean.map { [$0.level, $0.source, $0.string("service"), $0.string("event")] }
                == [["warn", "host", "test.hang", "didEnterBackground"]], "\(next.records.text)")
        #expect(unclean.first?.int("pid") != nil)
        #expect(
            next.records.named(.safeModeSkipped).map {
                [$0.level, $0.source, $0.string("path")] + ($0.strings("services") ?? [])
            }
                == [
                    ["warn", "loader", "\(host.lib)/a.so", "test.a"],
                    ["warn", "loader", "\(host.lib)/hang.so", "test.hang"],
                ])
        // A clean exit leaves no sentinel, so the start after it is quiet.
        #expect(!FileManager.default.fileExists(atPath: host.stateDirectory + "/sentinel"))
    }

    /// Safe mode refuses a file with an untrusted service; a trusted service that requires a
    /// service of that file is not started either (it was started without its requirement),
    /// nor one that requires it in turn; `host check --safe-mode` says all of it before a start.
    @Test func safeMode_aServiceWhoseRequirementItRefuses_isNotStarted_andCheckSaysSoFirst() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.probe("c", ["PROBE_ID=\"test.c\""])
        try host.probe("d", ["PROBE_ID=\"test.d\""])
        let config = try host.file(
            "services.json",
            #"{"services":{"test.a":{"trusted":true,"requires":["test.b"]},"test.d":{"trusted":true,"requires":["test.a"]},"#
                + #""test.c":{"trusted":true}}}"#)
        let check = try Command.run(
            try Repository.product("host"),
            ["check", "--plugins", host.lib, "--config", config, "--safe-mode", "--json"])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any], "\(check.stderr)")
        #expect(check.status == 2)
        #expect(
            (report["order"] as? [[String: Any]])?.compactMap { $0["service"] as? String } == ["test.c"], "\(report)")
        let problems = (report["problems"] as? [[String: Any]] ?? []).map {
            [$0["severity"] as? String, $0["code"] as? String, $0["service"] as? String, $0["file"] as? String]
        }
        #expect(
            problems == [
                ["warning", "safe-mode", "test.b", "\(host.lib)/b.so"],
                ["error", "requirement-failed", "test.a", "\(host.lib)/a.so"],
                ["error", "requirement-failed", "test.d", "\(host.lib)/d.so"],
            ], "\(problems)")
        // Without --safe-mode the same files are clean.
        #expect(
            try Command.run(try Repository.product("host"), ["check", "--plugins", host.lib, "--config", config]).status
                == 0)

        try host.start(["--safe-mode", "--config", config])
        let services = try host.reply("list")["services"] as? [[String: Any]] ?? []
        #expect(services.compactMap { $0["id"] as? String } == ["test.c"])
        let records = host.stop().records
        #expect(
            records.named(.safeModeSkipped).map { [$0.string("path")] + ($0.strings("services") ?? []) }
                == [["\(host.lib)/b.so", "test.b"]], "\(records.text)")
        #expect(
            records.named(.serviceRequirementFailed).map { [$0.level, $0.string("service"), $0.string("requires")] }
                == [["error", "test.a", "test.b"], ["error", "test.d", "test.a"]], "\(records.text)")
    }

    @Test func servicesSeeTheSameEventsDataAndAnswers_inAWorker_asInTheHost() throws {
        func run(_ mode: String) throws -> (probe: [String], trace: [String], replies: [String]) {
            let host = try IsolatedHost()
            let kinds =
                "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_NOTIFICATION)|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_MEMORY_WARNING)"
                + "|SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION)|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_NOTIFICATION_RESPONSE)"
                + "|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION)|SH_EVENT_BIT(SH_EVENT_DID_REGISTER_FOR_REMOTE_NOTIFICATIONS)"
                + "|SH_EVENT_BIT(SH_EVENT_DID_FAIL_TO_REGISTER_FOR_REMOTE_NOTIFICATIONS)|SH_EVENT_BIT(SH_EVENT_OPEN_URL)"
                + "|SH_EVENT_BIT(SH_EVENT_CONTINUE_USER_ACTIVITY)|SH_EVENT_BIT(SH_EVENT_PERFORM_ACTION_FOR_SHORTCUT_ITEM)"
            try host.probe(
                "a",
                [
                    "PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(kinds)", "PROBE_SUBSCRIBE=\"*\"", "PROBE_COMPLETE=3",
                    "PROBE_SHORTCUT=\"compose New entry ✓\"",
                    "PROBE_RESULT=1", "PROBE_REGISTER_ON_KIND=SH_EVENT_DID_RECEIVE_MEMORY_WARNING",
                    "PROBE_ANSWER=SH_FALSE",
                ])
            try host.probe(
                "b",
                [
                    "PROBE_ID=\"test.b\"", "PROBE_EVENTS=\(kinds)", "PROBE_SUBSCRIBE=\"*\"", "PROBE_RESULT=9",
                    "PROBE_POST_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "PROBE_POST_NAME=\"b.active\"",
                ])
            let push = try host.scratch.write(
                "push.json", Array(#"{"aps":{"alert":{"title":"Hi ✓"},"badge":2},"id":[1,2.5,null,true]}"#.utf8))
            let fetch = try host.scratch.write("fetch.json", Array(#"{"aps":{"content-available":1},"x":"y"}"#.utf8))
            try host.start([
                "--isolation", mode, "--launch-url", "myapp://launch", "--launch-activity",
                "com.example.view,https://example.com/a",
                "--launch-notification", push, "--launch-shortcut", "compose",
            ])
            return try drive(
                host,
                [
                    ["push", push], ["push", "--tap", "dismiss", push], ["push", fetch], ["open", "myapp://item/42"],
                    ["action", "compose"], ["action", "search"],
                    [
                        "activity", "com.example.view", "--url", "https://example.com/b", "--user-info",
                        #"{"k":[1,"v"]}"#,
                    ],
                    ["token", "00ff10ab"], ["memory-warning"], ["token-error", "no network"],
                    ["post", "queue.enqueue", #"{"n":1}"#], ["background"], ["activate"], ["terminate"],
                ])
        }
        let inProcess = try run("in-process")
        let isolated = try run("process")
        #expect(isolated.probe == inProcess.probe)
        #expect(isolated.trace == inProcess.trace)
        #expect(isolated.replies == inProcess.replies)
        #expect(inProcess.probe.count > 40)
    }

    @Test func servicesSeeTheSameSceneEventsDataAndConfiguration_inAWorker_asInTheHost() throws {
        func run(_ mode: String) throws -> (probe: [String], trace: [String], replies: [String]) {
            let host = try IsolatedHost()
            let kinds =
                "SH_EVENTS_LIFECYCLE|SH_EVENTS_SCENES|SH_EVENT_BIT(SH_EVENT_OPEN_URL)|SH_EVENT_BIT(SH_EVENT_CONTINUE_USER_ACTIVITY)"
            // b is asked first and passes; a chooses the configuration, with settings.
            try host.probe(
                "a",
                [
                    "PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(kinds)", "PROBE_CONFIGURATION=\"phone\"",
                    #"PROBE_CONFIGURATION_SETTINGS="{\"theme\":\"dark\",\"n\":[1,2.5]}""#,
                ])
            try host.probe(
                "b",
                ["PROBE_ID=\"test.b\"", "PROBE_EVENTS=\(kinds)", "PROBE_PRIORITY=10", "PROBE_SCENE_ANSWER=SH_FALSE"])
            try host.start([
                "--isolation", mode, "--launch-scene", "main", "--launch-url", "myapp://launch",
                "--launch-activity", "com.example.view,https://example.com/a",
            ])
            return try drive(
                host,
                [
                    [
                        "scene", "connect", "car", "--role", "car", "--url", "myapp://drive/home", "--url", "myapp://b",
                        "--activity", "com.example.nav",
                    ],
                    ["scene", "open", "car", "myapp://item/42"],
                    [
                        "scene", "activity", "car", "com.example.view", "--url", "https://example.com/b",
                        "--user-info", #"{"k":[1,"v"]}"#,
                    ],
                    ["scene", "resign", "car"], ["scene", "background", "car"], ["scene", "foreground", "car"],
                    ["scene", "activate", "car"], ["scene", "list"], ["scene", "disconnect", "car"],
                    ["scene", "background", "main"], ["scene", "activate", "main"], ["scene", "list"], ["terminate"],
                ])
        }
        let inProcess = try run("in-process")
        let isolated = try run("process")
        #expect(isolated.probe == inProcess.probe)
        #expect(isolated.trace == inProcess.trace)
        #expect(isolated.replies == inProcess.replies)
        // The scenario did happen: both scenes' events, the configuration a chose, the connection options.
        #expect(isolated.probe.filter { $0.contains("probe test.a: event 23 ") }.count == 2, "\(isolated.probe)")
        #expect(
            isolated.probe.contains {
                $0.contains("probe test.b: event 18 ")
                    && $0.contains(
                        #"scene=car role=car scene-state=0 configuration=phone settings={"theme":"dark","n":[1,2.5]} urls=myapp://drive/home,myapp://b activities=com.example.nav"#
                    )
            },
            "\(isolated.probe)")
        #expect(isolated.probe.contains { $0.contains("probe test.a: event 24 ") && $0.contains("url=myapp://launch") })
        #expect(
            isolated.replies.contains { $0.contains("car: role car, foregroundActive, configuration phone") },
            "\(isolated.replies)")
        #expect(inProcess.probe.count > 60)
    }

    /// Issue 36, item 7: a plugin file replaced without a reload, then its worker killed: the
    /// restart runs the version the host loaded (from the host's stored copy), not the new file
    /// (here a build that aborts in willFinishLaunching, and declares another version).
    @Test func aWorkerRestartedAfterItsFileWasReplaced_runsTheVersionLoaded_untilAReload() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_VERSION=\"1.0.0\""])
        try host.start(["--isolation", "process"])
        let first = try #require(try host.service("test.a")?["pid"] as? Int)
        let loaded = mappedBy(pid_t(first), "a.so")
        #expect(loaded.count == 1, "\(loaded)")
        // A new build put in place as installers do (a new inode), and no reload.
        let next = host.lib + "/.a.so.new"
        try Plugins.probe(
            next, ["PROBE_ID=\"test.a\"", "PROBE_VERSION=\"2.0.0\"", "PROBE_CRASH_KIND=SH_EVENT_WILL_FINISH_LAUNCHING"])
        #expect(rename(next, host.lib + "/a.so") == 0)
        #expect(kill(pid_t(first), SIGKILL) == 0)
        #expect(eventually { (try? host.service("test.a"))?["restarts"] as? Int == 1 })
        let service = try #require(try host.service("test.a"))
        #expect(service["state"] as? String == "running", "\(service)")
        #expect(service["version"] as? String == "1.0.0", "\(service)")
        let second = try #require(service["pid"] as? Int)
        #expect(second != first)
        // The new worker maps the very copy the first one did.
        #expect(mappedBy(pid_t(second), "a.so") == loaded, "\(loaded)")
        // A reload loads the new file (which aborts in its launch: a crash, then a restart of it).
        let reload = try host.reply("reload")
        #expect(reload["replaced"] as? [String] == ["test.a"], "\(reload)")
        let result = host.stop()
        let restarted = result.records.named(.workerRestarted)
        #expect(restarted.first?.strings("services") == ["test.a"], "\(result.records.text)")
        let crashes = result.records.named(.workerCrashed)
        #expect(crashes.first?.int("signal") == 9, "\(result.records.text)")
        // Before the reload, only the killed worker died: the restart never ran the new build.
        #expect(crashes.first?.string("event") == nil)
    }

    /// Issue 36, item 8 with process isolation: each settings edit placed the file in a new
    /// worker and left the one before running (4 workers after 3 edits). The worker running the
    /// service now gets it again, with its new settings.
    @Test func settingsEdits_keepTheServiceInItsWorker_andStartNoOther() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let config = try host.file("services.json", #"{"services": {"test.a": {"settings": {"n": 0}}}}"#)
        try host.start(["--isolation", "process", "--config", config])
        let worker = try #require(try host.service("test.a")?["pid"] as? Int)
        for edit in 1...5 {
            try #"{"services": {"test.a": {"settings": {"n": \#(edit)}}}}"#.write(
                toFile: config, atomically: true, encoding: .utf8)
            #expect(try host.reply("reload")["replaced"] as? [String] == ["test.a"], "edit \(edit)")
        }
        let service = try #require(try host.service("test.a"))
        #expect(service["pid"] as? Int == worker, "\(service)")
        #expect(service["state"] as? String == "running" && service["restarts"] as? Int == 0, "\(service)")
        let hostPID = try #require(host.process?.pid)
        let children = try Command.run("/usr/bin/pgrep", ["-P", "\(hostPID)"]).stdout.split(separator: "\n")
        #expect(children == ["\(worker)"], "\(children)")
        let result = host.stop()
        let last = result.records.probe(1).last { $0.source == "test.a" }?.message ?? ""
        #expect(last.contains(#"settings={"n":5}"#), "\(last)")
    }

    @Test func theIsolationOptions_areCheckedOnTheCommandLine() throws {
        let host = try Repository.product("host")
        for (arguments, message) in [
            (["--isolation", "container"], "host: --isolation: unknown mode 'container' (use in-process or process)"),
            (["--event-timeout", "never"], "host: --event-timeout: 'never' is not a positive number of seconds"),
            (["--crash-limit", "5/0"], "host: --crash-limit: '5/0' is not N/SECS (crashes within seconds, like 5/60)"),
        ] {
            let result = try Command.run(host, ["--plugins", "/tmp"] + arguments)
            #expect(result.status == 2)
            #expect(result.stderr.hasPrefix(message), "\(result.stderr)")
        }
        let worker = try Command.run(host, ["__worker", "/tmp/x.so"])
        #expect(worker.status == 2)
        #expect(worker.stderr.contains("is internal"))
    }
}

/// Runs `commands` through `host ctl` (the last one ends the host) and returns what the probes
/// logged, the trace and each reply, for comparing a scenario in-process and isolated.
private func drive(_ host: IsolatedHost, _ commands: [[String]]) throws -> (
    probe: [String], trace: [String], replies: [String]
) {
    var replies: [String] = []
    for command in commands {
        let result = try host.ctl(command)
        replies.append("\(result.status) \(result.stdout)")
    }
    let result = host.wait()
    #expect(result.status == 0)
    return (result.records.messages(startingWith: "probe ").map(\.description), host.events, replies)
}
