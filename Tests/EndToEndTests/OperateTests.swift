import Foundation
import TestSupport
import Testing

/// Operating a running host (issue 14): time in the trace and the log, statistics, blame,
/// Prometheus metrics, one service at a time, skipped files, watch.
@Suite(.timeLimit(.minutes(10))) struct OperateTests {
    /// The JSON objects of the trace.
    private func traceRecords(_ host: RunningHost) -> [[String: Any]] {
        ((try? String(contentsOfFile: host.tracePath, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test func traceLines_carryTheirStart_andDuration() throws {
        let host = try RunningHost()
        try host.probe(
            "a", ["PROBE_ID=\"test.a\"", "PROBE_SLEEP_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "PROBE_SLEEP_MS=20"])
        try host.start()
        try host.ctl("background")
        #expect(eventually { traceRecords(host).contains { $0["event"] as? String == "didEnterBackground" } })
        let records = traceRecords(host)
        let times = records.compactMap { ($0["t"] as? NSNumber)?.uint64Value }
        #expect(times.count == records.count && times.allSatisfy { $0 > 0 })
        #expect(times == times.sorted(), "t is monotonic")
        let slept = try #require(records.first { $0["event"] as? String == "didEnterBackground" })
        // The probe sleeps 20 ms in it: the duration is at least that (never an upper bound).
        #expect(((slept["dur_ns"] as? NSNumber)?.uint64Value ?? 0) >= 20_000_000)
    }

    @Test func logTime_isChosenByTheOption_andNoneByDefaultOffATerminal() throws {
        // The JSON format carries the stamp as `time`; the text format puts it first.
        for (option, pattern) in [
            ([String](), nil),
            (["--log-time", "mono"], #"^[0-9]+\.[0-9]{6}$"#),
            (["--log-time", "iso"], #"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z$"#),
        ] {
            let host = try RunningHost()
            try host.probe("a", ["PROBE_ID=\"test.a\""])
            try host.start(option)
            let stderr = host.stop().stderr
            let line = try #require(stderr.split(separator: "\n").first { $0.contains("\"host.ready\"") })
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if let pattern {
                let time = try #require(object["time"] as? String, "\(option): \(line)")
                #expect(time.range(of: pattern, options: .regularExpression) != nil, "\(option): \(line)")
            } else {
                #expect(object["time"] == nil, "\(line)")
            }
        }
        let text = try RunningHost()
        try text.probe("a", ["PROBE_ID=\"test.a\""])
        try text.start(["--log-time", "mono", "--log-format", "text"])  // the last --log-format wins
        let ready = try #require(lines(text.stop().stderr, containing: "active with").first)
        #expect(
            ready.range(of: #"^[0-9]+\.[0-9]{6} info \[host\] active with"#, options: .regularExpression) != nil,
            "\(ready)")
        let bad = try Command.run(try Repository.product("host"), ["--plugins", "/nonexistent", "--log-time", "utc"])
        #expect(bad.status == 2 && bad.stderr.contains("--log-time: unknown time 'utc' (use none, iso or mono)"))
    }

    @Test func stats_countDeliveriesAndFailures_perServiceAndKind() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\"", "PROBE_FAIL_KIND=SH_EVENT_WILL_RESIGN_ACTIVE"])
        try host.start(["--stats"])
        try host.ctl("background")
        try host.ctl("activate")
        let (status, reply) = try host.ctlJSON("stats")
        #expect(status == 0)
        let stats = try #require(reply["stats"] as? [String: Any])
        let services = try #require(stats["services"] as? [[String: Any]])
        func figures(_ id: String, _ event: String) -> [String: Any]? {
            (services.first { $0["service"] as? String == id }?["events"] as? [[String: Any]])?.first {
                $0["event"] as? String == event
            }
        }
        // background then activate: willResignActive, didEnterBackground, willEnterForeground, didBecomeActive.
        #expect(figures("test.a", "didBecomeActive")?["count"] as? Int == 2)
        #expect(figures("test.a", "willResignActive")?["count"] as? Int == 1)
        #expect(figures("test.a", "willResignActive")?["failures"] as? Int == 0)
        #expect(figures("test.b", "willResignActive")?["failures"] as? Int == 1)
        let buckets = try #require(figures("test.a", "didBecomeActive")?["buckets"] as? [Int])
        #expect(buckets.count == 8 && buckets.reduce(0, +) == 2)
        // One service, an unknown one, and a host without --stats.
        #expect(
            (try host.ctlJSON("stats", "test.b").reply["stats"] as? [String: Any])?["services"] as? [[String: Any]]
                != nil)
        let unknown = try host.ctlJSON("stats", "test.nope")
        #expect(
            unknown.status == 1
                && (unknown.reply["error"] as? String ?? "").contains("no statistics for unknown service test.nope"))
        let text = try host.ctl("stats", "test.b").stdout
        #expect(text.hasPrefix("test.b\n") && text.contains("willResignActive"))
        let plain = try RunningHost()
        try plain.probe("a", ["PROBE_ID=\"test.a\""])
        try plain.start()
        let off = try plain.ctlJSON("stats")
        #expect(
            off.status == 1
                && off.reply["error"] as? String
                    == "statistics are off: start the host with --stats (or --metrics-listen)"
        )
    }

    @Test func blame_listsTheStartUpCostOfEachService_slowestFirst() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe(
            "slow", ["PROBE_ID=\"test.slow\"", "PROBE_SLEEP_KIND=SH_EVENT_WILL_FINISH_LAUNCHING", "PROBE_SLEEP_MS=30"])
        try host.start()
        let rows = try #require(try host.ctlJSON("blame").reply["blame"] as? [[String: Any]])
        #expect(rows.map { $0["service"] as? String } == ["test.slow", "test.a"])
        let slow = rows[0]
        #expect(((slow["launch_ns"] as? NSNumber)?.uint64Value ?? 0) >= 30_000_000)
        for key in ["inspect_ns", "dlopen_ns", "entry_ns", "attach_ns", "launch_ns", "total_ns"] {
            #expect(slow[key] as? NSNumber != nil, "\(key)")
        }
        #expect(try host.ctl("blame").stdout.split(separator: "\n").first?.contains("test.slow") == true)
    }

    @Test func serviceStopStartRestart_goThroughTheTakeDownAndTheOneCatchUp() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.start()
        let stop = try host.ctlJSON("service", "stop", "test.a")
        #expect(
            stop.status == 0
                && (stop.reply["services"] as? [[String: Any]])?.first?["state"] as? String == "stopped by request")
        #expect(
            Array(host.events.filter { $0.hasSuffix(" test.a") }.suffix(3)) == [
                "willResignActive test.a", "didEnterBackground test.a", "willTerminate test.a",
            ])
        // It receives nothing while stopped, and list says so.
        try host.ctl("memory-warning")
        try host.ctl("background")
        #expect(
            !host.events.contains("didEnterBackground test.b")
                || host.events.filter { $0 == "didEnterBackground test.a" }.count == 1)
        #expect(try host.ctl("list").stdout.contains("test.a 0.1.0 (stopped by request)"))
        // Bad input: a stopped service, an unknown one.
        let again = try host.ctlJSON("service", "stop", "test.a")
        #expect(
            again.status == 1
                && again.reply["error"] as? String
                    == "service test.a is not running (stopped by request); nothing to stop"
        )
        let unknown = try host.ctlJSON("service", "restart", "test.nope")
        #expect(
            unknown.status == 1
                && (unknown.reply["error"] as? String ?? "").hasPrefix("cannot restart unknown service test.nope"),
            "\(unknown.reply)")
        let badAction = try host.ctl("service", "halt", "test.a")
        #expect(badAction.status == 2 && badAction.stderr.contains("unknown action 'halt'"))
        // Start: caught up to the background, flagged as a restart.
        #expect(try host.ctlJSON("service", "start", "test.a").status == 0)
        #expect(
            Array(host.events.filter { $0.hasSuffix(" test.a") }.suffix(3)) == [
                "willFinishLaunching test.a", "didFinishLaunching test.a", "didEnterBackground test.a",
            ])
        // Restart: down, then up again.
        try host.ctl("activate")
        let count = host.events.count
        #expect(try host.ctlJSON("service", "restart", "test.a").status == 0)
        #expect(
            Array(host.events.dropFirst(count)) == [
                "willResignActive test.a", "didEnterBackground test.a", "willTerminate test.a",
                "willFinishLaunching test.a", "didFinishLaunching test.a", "didBecomeActive test.a",
            ])
        #expect(try host.ctl("list").stdout.contains("test.a 0.1.0 (running)"))
    }

    @Test func aRequiredService_refusesToStop_unlessForced() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let config = try host.file("services.json", #"{"services":{"test.a":{"policy":"required"}}}"#)
        try host.start(["--config", config])
        let refused = try host.ctlJSON("service", "stop", "test.a")
        #expect(
            refused.status == 1
                && refused.reply["error"] as? String
                    == "service test.a is required (policy: required): stopping it needs --force"
        )
        #expect(try host.ctlJSON("service", "stop", "--force", "test.a").status == 0)
    }

    @Test(.timeLimit(.minutes(10))) func restart_givesAnIsolatedServiceANewWorker_andRefusesACrashLoopedOne() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.bad("loop", ["BAD_ID=\"test.loop\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=2"])
        try host.start(["--isolation", "process", "--crash-limit", "2/60"])
        let pid = try #require(try host.service("test.a")?["pid"] as? Int)
        let restart = try host.ctlJSON("service", "restart", "test.a")
        #expect(restart.status == 0 && restart.reply["restarted"] as? [String] == ["test.a"])
        let newPID = try #require(try host.service("test.a")?["pid"] as? Int)
        #expect(newPID != pid)
        #expect(
            Array(host.events(of: "test.a").suffix(3)) == [
                "willFinishLaunching", "didFinishLaunching", "didBecomeActive",
            ])
        #expect(eventually { (try? host.service("test.loop"))?["state"] as? String == "failed" })
        let refused = try host.ctlJSON("service", "restart", "test.loop")
        #expect(
            refused.status == 1
                && (refused.reply["error"] as? String ?? "").hasPrefix(
                    "service test.loop is marked failed after a crash loop")
        )
        let all = try host.ctlJSON("list", "--all").reply["skipped"] as? [[String: Any]] ?? []
        #expect(
            all.contains { $0["reason"] as? String == "crash-looped" && $0["services"] as? [String] == ["test.loop"] })
    }

    /// A service in a worker stopped by request shows why in `ctl list`, not its worker's state
    /// (the worker's `running` overrode the reason, issue 42); started again, it runs.
    @Test(.timeLimit(.minutes(10))) func anIsolatedServiceStoppedByRequest_isListedAsStoppedByRequest() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start(["--isolation", "process"])
        #expect(try host.service("test.a")?["state"] as? String == "running")
        #expect(try host.ctlJSON("service", "stop", "test.a").status == 0)
        #expect(try host.service("test.a")?["state"] as? String == "stopped by request")
        #expect(try host.ctl("list").stdout.contains("test.a 0.1.0 (stopped by request)"))
        #expect(try host.ctlJSON("service", "start", "test.a").status == 0)
        #expect(try host.service("test.a")?["state"] as? String == "running")
    }

    @Test func listAll_namesEveryFileNotLoaded_withItsReason() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("off", ["PROBE_ID=\"test.off\""])
        try host.probe("twin", ["PROBE_ID=\"test.a\""])
        _ = try host.file("lib/notes.so", "hello\n")
        chmod(host.lib + "/notes.so", 0o644)
        let config = try host.file("services.json", #"{"services":{"test.off":{"enabled":false}}}"#)
        try host.start(["--config", config])
        let reply = try host.ctlJSON("list", "--all").reply
        let skipped = try #require(reply["skipped"] as? [[String: Any]])
        func reason(_ fragment: String) -> String? {
            skipped.first {
                ($0["path"] as? String ?? "").hasSuffix(fragment)
                    || ($0["services"] as? [String])?.contains(fragment) == true
            }?["reason"] as? String
        }
        #expect(reason("notes.so") == "not-a-plugin")
        #expect(reason("twin.so") == "duplicate-id")
        #expect(reason("test.off") == "disabled")
        #expect((reply["services"] as? [[String: Any]])?.map { $0["id"] as? String } == ["test.a"])
        // Plain list is unchanged; the text of --all says why.
        #expect(try host.ctlJSON("list").reply["skipped"] == nil)
        #expect(
            try host.ctl("list", "--all").stdout.contains("twin.so (test.a): duplicate-id: duplicate service id test.a")
        )
    }

    @Test func watch_streamsTraceRecords_andLogLines() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start()
        let watcher = try ControlSocket(path: host.control)
        watcher.send("{\"command\":\"watch\",\"logs\":true}\n")
        // The client is registered before this reply is written: what follows is streamed.
        #expect(watcher.readReply()?["watching"] as? Bool == true)
        try host.ctl("background")
        var records: [[String: Any]] = []
        while records.count < 4, let record = watcher.readReply() { records.append(record) }
        #expect(
            records.contains {
                $0["event"] as? String == "willResignActive" && $0["service"] as? String == "test.a"
                    && $0["dur_ns"] != nil && $0["t"] != nil
            })
        #expect(records.contains { ($0["log"] as? String ?? "").contains("probe test.a: event 4") })
        // Bad input on the CLI: watch takes no operands.
        let bad = try host.ctl("watch", "now")
        #expect(bad.status == 2 && bad.stderr.contains("ctl watch: expected no arguments"))
    }

    @Test func aWatchClientThatNeverReads_isDropped_andTheHostKeepsServing() throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"",
                "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_MEMORY_WARNING)",
            ])
        try host.start()
        let stuck = try ControlSocket(path: host.control)
        stuck.send("{\"command\":\"watch\",\"logs\":true}\n")
        #expect(stuck.readReply()?["watching"] as? Bool == true)
        // Never read again. Each warning makes a trace line; well over the 1 MiB bound plus the socket's buffer.
        let driver = try ControlSocket(path: host.control)
        // In batches whose replies fit the socket's buffer, so the driver never blocks the host.
        let batch = String(repeating: "{\"command\":\"memory-warning\"}\n", count: 100)
        for _ in 0..<200 {
            driver.send(batch)
            for _ in 0..<100 { _ = driver.readReply() }
        }
        let state = try host.ctl("state")
        let stderr = host.stop().stderr
        #expect(state.stdout.contains("state: active"), "\(state)\n\(stderr.suffix(3000))")
        let dropped = host.records.named(.watchDropped)
        #expect(
            dropped.count == 1 && dropped.first?.level == "warn" && dropped.first?.source == "control",
            "\(host.records.text.suffix(3000))")
        #expect(dropped.first?.int("bytes") == 1_048_576)
    }

    @Test func metrics_areServedForPrometheus_andPassPromtool() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        // A checked service: its health families pass promtool too.
        try host.probe(
            "h", ["PROBE_ID=\"test.h\"", "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_HEALTH_CHECK))"])
        let config = try host.file("services.json", #"{"services": {"test.h": {"healthCheck": {"interval": 0.1}}}}"#)
        let port = try freePort()
        try host.start(["--metrics-listen", "\(port)", "--config", config])
        try host.ctl("background")
        #expect(eventually { (try? host.ctl("list").stdout.contains("health: healthy")) == true })
        let body = try httpGet(port: port, path: "/metrics")
        #expect(body.hasPrefix("HTTP/1.1 200 OK"))
        let text = String(body[body.range(of: "\r\n\r\n")!.upperBound...])
        #expect(text.contains("servicehost_deliveries_total{service=\"test.a\",event=\"didEnterBackground\"} 1"))
        #expect(
            text.contains(
                "servicehost_delivery_duration_seconds_bucket{service=\"test.a\",event=\"didEnterBackground\",le=\"+Inf\"} 1"
            ))
        #expect(text.contains("servicehost_service_health{service=\"test.h\",status=\"healthy\"} 1"), "\(text)")
        #expect(text.contains("servicehost_service_health{service=\"test.h\",status=\"unhealthy\"} 0"))
        #expect(text.contains("servicehost_health_restarts_total{service=\"test.h\"} 0"))
        #expect(try httpGet(port: port, path: "/other").hasPrefix("HTTP/1.1 404"))
        guard let promtool = Promtool.path else {
            Issue.record(
                "promtool is not installed and apt-get could not install it: the exposition format was not validated")
            return
        }
        let scratch = try host.file("metrics.txt", text)
        let check = try Command.run("/bin/sh", ["-c", "\(promtool) check metrics < \(scratch)"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test func withoutPlugins_theHostUsesThePluginPath_thenXDGDataHome() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let data = try host.scratch.folder("data")
        _ = try host.scratch.folder("data/servicehost")
        let xdgPlugins = try host.scratch.folder("data/servicehost/plugins")
        try Plugins.probe(xdgPlugins + "/x.so", ["PROBE_ID=\"test.xdg\""])
        for (environment, expected) in [
            (["SERVICEHOST_PLUGIN_PATH": host.lib + ":", "XDG_DATA_HOME": data], "test.a"),
            (["SERVICEHOST_PLUGIN_PATH": "", "XDG_DATA_HOME": data], "test.xdg"),
        ] {
            let process = try Command.start(
                try Repository.product("host"), ["--control", host.control, "--state-dir", host.stateDirectory],
                environment: environment)
            #expect(eventually { (try? host.ctl("list").stdout.contains(expected)) == true })
            process.send(SIGTERM)
            let stderr = process.wait().stderr
            #expect(stderr.contains("plugin directories from "), "\(stderr)")
        }
        let help = try Command.run(
            try Repository.product("host"), ["--help"], environment: ["SERVICEHOST_PLUGIN_PATH": "/a:/b"])
        #expect(help.stdout.contains("/a:/b (from SERVICEHOST_PLUGIN_PATH)"))
    }

    @Test func metricsListen_refusesABusyPort_andAnImplicitNonLoopbackAddress() throws {
        let blocker = try listeningSocket()
        defer { close(blocker.fd) }
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start(["--metrics-listen", "127.0.0.1:\(blocker.port)"], wait: false)
        let busy = host.signal(0)
        #expect(
            busy.status == 2
                && busy.stderr.contains(
                    "--metrics-listen 127.0.0.1:\(blocker.port): bind failed: Address already in use")
        )
        let implicit = try Command.run(
            try Repository.product("host"), ["--plugins", host.lib, "--metrics-listen", ":9100"])
        #expect(implicit.status == 2 && implicit.stderr.contains("':9100' has no address: give PORT for loopback only"))
    }
}

/// `promtool`, installed with apt-get when missing (the Debian package `prometheus`).
enum Promtool {
    static let path: String? = {
        for candidate in ["/usr/bin/promtool", "/usr/local/bin/promtool"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return SystemPackages.ensure(["prometheus"], providing: ["/usr/bin/promtool"], for: "the Prometheus test")
            ? "/usr/bin/promtool" : nil
    }()
}

/// A TCP socket listening on a loopback port the kernel chose.
func listeningSocket() throws -> (fd: Int32, port: UInt16) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(fd, 1) == 0 else { throw TestFailure("bind: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, UInt16(bigEndian: address.sin_port))
}

/// A loopback port free a moment ago.
func freePort() throws -> UInt16 {
    let socket = try listeningSocket()
    close(socket.fd)
    return socket.port
}

/// One HTTP/1.1 GET to 127.0.0.1:`port`, the whole response as text.
func httpGet(port: UInt16, path: String) throws -> String {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else { throw TestFailure("connect to port \(port): errno \(errno)") }
    let request = Array("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, 0) }
    var response: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = read(fd, &chunk, chunk.count)
        if n <= 0 { break }
        response += chunk[..<n]
    }
    return String(decoding: response, as: UTF8.self)
}
