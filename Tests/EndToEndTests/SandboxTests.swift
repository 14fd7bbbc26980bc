import Foundation
import TestSupport
import Testing

/// Issue 43: a process-isolated service's worker in a sandbox, with the real `host` binary and
/// C plugins that try its limits. The resource limits need a writable cgroup of the controller
/// (this project's machines run the tests as root on a hybrid hierarchy: v1 memory, pids, cpu);
/// the seccomp profiles need a kernel with seccomp filters.
@Suite(.timeLimit(.minutes(10))) struct SandboxTests {
    /// Whether the host can make a cgroup of `controller` (v1 under its own, or a delegated v2).
    static func cgroupWritable(_ controller: String) -> Bool {
        guard let membership = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) else { return false }
        for line in membership.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            if parts[1].split(separator: ",").contains(Substring(controller)) {
                let folder = "/sys/fs/cgroup/\(controller)" + (parts[2] == "/" ? "" : String(parts[2]))
                return access(folder, W_OK) == 0
            }
            if parts[0] == "0",
                let controllers = try? String(
                    contentsOfFile: "/sys/fs/cgroup\(parts[2] == "/" ? "" : String(parts[2]))/cgroup.controllers",
                    encoding: .utf8), controllers.split(separator: " ").contains(Substring(controller))
            {
                return true
            }
        }
        return false
    }

    /// Whether the kernel filters system calls (`Seccomp:` in /proc/self/status).
    static var seccomp: Bool {
        ((try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? "").contains("Seccomp:")
    }

    private func sandboxed(_ host: RunningHost, action: Int, id: String = "test.sandbox", _ defines: [String] = [])
        throws
    {
        try Command.compileC(
            Repository.fixture("Sandbox/sandbox.c"), to: host.lib + "/\(id).so",
            defines: ["SANDBOX_ACTION=\(action)", "SANDBOX_ID=\"\(id)\""] + defines)
    }

    private func output(_ records: [LogRecord], _ service: String = "test.sandbox") -> [String] {
        records.named(.workerOutput).filter { $0.source == service }.compactMap { $0.string("line") }
    }

    @Test(.enabled(if: cgroupWritable("memory"), "no writable memory cgroup"))
    func aWorkerPastMemoryMax_isKilledAlone_loggedWithTheLimit_andRestarted() throws {
        let host = try IsolatedHost()
        try sandboxed(host, action: 1, ["SANDBOX_MARKER=\(host.marker("allocated"))"])
        try host.probe("other", ["PROBE_ID=\"test.other\""])
        let config = try host.file(
            "services.json",
            #"{"sandbox": {"memoryMax": "64M"}, "services": {"test.sandbox": {"isolation": "process"}}}"#)
        try host.start(["--config", config, "--stats"])
        #expect(
            eventually {
                let service = try? host.service("test.sandbox")
                return (service?["restarts"] as? Int ?? 0) >= 1 && service?["state"] as? String == "running"
            })
        #expect(try host.ctl("state").stdout.contains("state: active"))
        // The new worker is in a cgroup of its own, held to the same limit.
        let workers = try #require(try host.reply("stats")["stats"] as? [String: Any])["workers"] as? [[String: Any]]
        #expect(workers?.first?["memoryMax"] as? Int == 64 << 20, "\(workers ?? [])")
        #expect((workers?.first?["memoryBytes"] as? Int ?? 0) > 0)
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let crash = try #require(stopped.records.named(.workerCrashed).first, "\(stopped.stderr)")
        #expect(crash.string("limit") == "memoryMax" && crash.int("memoryMax") == 64 << 20, "\(crash)")
        #expect(crash.int("signal") == Int(SIGKILL))
        #expect(!output(stopped.records).contains("sandbox: allocated 2 GiB"))
        #expect(stopped.records.named(.workerRestarted).count == 1)
        // The host and the other service were untouched.
        #expect(host.events(of: "test.other").last == "willTerminate")
    }

    @Test(.enabled(if: cgroupWritable("pids"), "no writable pids cgroup"))
    func aWorkerForkingPastTasksMax_getsEAGAIN() throws {
        let host = try IsolatedHost()
        try sandboxed(host, action: 2)
        let config = try host.file(
            "services.json", #"{"services": {"test.sandbox": {"isolation": "process", "sandbox": {"tasksMax": 16}}}}"#)
        try host.start(["--config", config])
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let line = try #require(output(stopped.records).first { $0.hasPrefix("sandbox: fork") }, "\(stopped.stderr)")
        let words = line.split(separator: " ")
        #expect(words[2] == "errno=\(EAGAIN)", "\(line)")
        #expect((Int(words.last ?? "") ?? 99) < 16, "\(line)")
    }

    @Test(
        .enabled(if: cgroupWritable("cpu") && (cgroupWritable("cpuacct") || !cgroupWritable("memory")), "no cpu cgroup")
    )
    func aSpinningWorker_isHeldToCpuQuota() throws {
        let host = try IsolatedHost()
        try sandboxed(host, action: 3)
        let config = try host.file(
            "services.json", #"{"services": {"test.sandbox": {"isolation": "process", "sandbox": {"cpuQuota": 10}}}}"#)
        try host.start(["--config", config, "--stats"])
        func worker() throws -> [String: Any]? {
            ((try host.reply("stats")["stats"] as? [String: Any])?["workers"] as? [[String: Any]])?.first
        }
        let first = try #require(try worker())
        let start = Date()
        let used = first["cpuUsec"] as? Int ?? 0
        // 200 ms of CPU at 10 % of a core takes 2 s; unlimited, a spinning thread takes 0.2 s.
        #expect(eventually { ((try? worker())?["cpuUsec"] as? Int ?? 0) - used >= 200_000 })
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed > 1.4, "200 ms of CPU in \(elapsed) s")
        #expect((try worker()?["throttledPeriods"] as? Int ?? 0) > 0)
        #expect(host.stop().status == 0)
    }

    /// `ioWeight` needs an I/O scheduler with weights (v1 `blkio.weight`: BFQ): where the
    /// kernel has none, the worker runs without it and the log says so by name, never silently.
    @Test(
        .enabled(
            if: cgroupWritable("blkio") && !FileManager.default.fileExists(atPath: "/sys/fs/cgroup/blkio/blkio.weight"))
    )
    func anIoWeightTheKernelCannotHold_isLoggedByName() throws {
        let host = try IsolatedHost()
        try sandboxed(host, action: 0)
        let config = try host.file(
            "services.json", #"{"services": {"test.sandbox": {"isolation": "process", "sandbox": {"ioWeight": 200}}}}"#)
        try host.start(["--config", config])
        #expect(try host.service("test.sandbox")?["state"] as? String == "running")
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let line = try #require(stopped.records.named(.sandboxUnavailable).first, "\(stopped.stderr)")
        #expect(line.strings("limits") == ["ioWeight"] && line.strings("services") == ["test.sandbox"])
    }

    /// `ptrace` and `mount` fail with EPERM under `default`, an AF_INET socket too under `strict`;
    /// without a sandbox each fails as it would anyway (ESRCH, ENOENT) or works.
    @Test(
        .enabled(if: seccomp, "the kernel has no seccomp"),
        arguments: [
            (nil, "ptrace=\(ESRCH) mount=\(ENOENT) inet=0 unix=0"),
            ("default", "ptrace=\(EPERM) mount=\(EPERM) inet=0 unix=0"),
            ("strict", "ptrace=\(EPERM) mount=\(EPERM) inet=\(EPERM) unix=0"),
        ] as [(String?, String)])
    func aSyscallProfile_refusesItsCallsWithEPERM(profile: String?, expected: String) throws {
        let host = try IsolatedHost()
        try sandboxed(host, action: 4)
        let sandbox = profile.map { #", "sandbox": {"syscalls": "\#($0)"}"# } ?? ""
        let config = try host.file(
            "services.json", #"{"services": {"test.sandbox": {"isolation": "process"\#(sandbox)}}}"#)
        try host.start(["--config", config])
        // A new worker (restarted by hand, as after a crash) runs under the same profile.
        #expect(try host.ctlJSON("service", "restart", "test.sandbox").status == 0)
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let lines = output(stopped.records).filter { $0.hasPrefix("sandbox: ") }
        #expect(lines == ["sandbox: " + expected, "sandbox: " + expected], "\(stopped.stderr)")
    }

    /// `host check` lists each service's sandbox, an unsandboxed one as none, and warns about a
    /// sandbox on a service that runs in the host, which the host logs too.
    @Test func check_listsEachServicesSandbox_andASandboxInTheHost_isReportedAndLogged() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        let config = try host.file(
            "services.json",
            #"""
            {"sandbox": {"memoryMax": "256M"},
             "services": {"test.a": {"sandbox": {"tasksMax": 8}}, "test.b": {"isolation": "process"}}}
            """#)
        let checked = try Command.run(
            try Repository.product("host"), ["check", "--plugins", host.lib, "--config", config, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any])
        let problems = report["problems"] as? [[String: Any]] ?? []
        #expect(
            problems.contains {
                $0["code"] as? String == "sandbox-not-isolated" && $0["service"] as? String == "test.a"
            },
            "\(problems)")
        #expect(checked.status == 1)
        let sandboxes = (report["sandboxes"] as? [[String: Any]] ?? []).sorted {
            "\($0["service"]!)" < "\($1["service"]!)"
        }
        #expect(sandboxes.map { $0["service"] as? String } == ["test.a", "test.b"], "\(sandboxes)")
        #expect(sandboxes.first?["sandbox"] is NSNull && sandboxes.first?["isolated"] as? Bool == false)
        #expect(sandboxes.last?["sandbox"] as? String == "memoryMax=256M syscalls=default")
        try host.start(["--config", config])
        let stopped = host.stop()
        #expect(stopped.records.named(.sandboxIgnored).map { $0.string("service") } == ["test.a"])
    }

    @Test(arguments: [
        (#"{"sandbox": {"syscalls": "paranoid"}}"#, "sandbox.syscalls"),
        (#"{"services": {"test.a": {"sandbox": {"memoryMax": "12Q"}}}}"#, "services.test.a.sandbox.memoryMax"),
        (#"{"services": {"test.a": {"sandbox": {"tasksMax": 0}}}}"#, "services.test.a.sandbox.tasksMax"),
    ])
    func aBadSandbox_isRefusedByCheckAndAtStart_withTheKeyNamed(_ text: String, _ key: String) throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let config = try host.file("services.json", text)
        let checked = try Command.run(
            try Repository.product("host"), ["check", "--plugins", host.lib, "--config", config, "--json"])
        #expect(checked.status == 2)
        #expect(checked.stdout.contains(key), "\(checked.stdout)")
        try host.start(["--config", config], wait: false)
        let result = host.wait()
        #expect(result.status != 0)
        #expect(result.stderr.contains(key), "\(result.stderr)")
    }
}
