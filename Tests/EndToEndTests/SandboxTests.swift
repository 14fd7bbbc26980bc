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
        // The text form too: a line per worker under "workers", its memory of its limit.
        let text = try host.ctl("stats").stdout.split(separator: "\n").map(String.init)
        let line = try #require(text.drop { $0 != "workers" }.dropFirst().first, "\(text)")
        #expect(line.hasPrefix("  test.sandbox: pid \(workers?.first?["pid"] as? Int ?? -1), memory "), "\(line)")
        #expect(line.contains(" MiB of 64.0 MiB"), "\(line)")
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

    /// `host check` warns when the host lacks the capability a sandbox's identity or network needs
    /// (`sandbox-needs-privilege`, naming each): the same check as root without CAP_SETUID,
    /// CAP_SETGID and CAP_SYS_ADMIN (`setpriv` takes them out of its bounding set) and as root.
    @Test func check_warnsWhenTheHostLacksTheCapabilitiesOfASandboxsUserOrNetwork() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.probe("c", ["PROBE_ID=\"test.c\""])
        let config = try host.file(
            "services.json",
            #"""
            {"services": {"test.a": {"isolation": "process", "sandbox": {"dynamicUser": true}},
                          "test.b": {"isolation": "process", "sandbox": {"network": false}},
                          "test.c": {"isolation": "process", "sandbox": {"memoryMax": "64M"}}}}
            """#)
        func warnings(_ program: String, _ arguments: [String]) throws -> [String: String] {
            let checked = try Command.run(
                program, arguments + ["check", "--plugins", host.lib, "--config", config, "--json"])
            let report = try #require(
                try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any], "\(checked.stderr)"
            )
            var found: [String: String] = [:]
            for problem in report["problems"] as? [[String: Any]] ?? []
            where problem["code"] as? String == "sandbox-needs-privilege" {
                found[problem["service"] as? String ?? ""] = problem["message"] as? String
            }
            return found
        }
        let binary = try Repository.product("host")
        #expect(try warnings(binary, []).isEmpty)
        let setpriv = "/usr/bin/setpriv"
        try #require(FileManager.default.isExecutableFile(atPath: setpriv), "setpriv (util-linux) is missing")
        let lacking = try warnings(setpriv, ["--bounding-set=-setuid,-setgid,-sys_admin", binary])
        #expect(Set(lacking.keys) == ["test.a", "test.b"], "\(lacking)")
        // The message names each setting and capability.
        for (service, words) in [
            ("test.a", ["dynamicUser", "CAP_SETUID", "CAP_SETGID"]), ("test.b", ["CAP_SYS_ADMIN"]),
        ] {
            #expect(words.allSatisfy { lacking[service]?.contains($0) == true }, "\(lacking)")
        }
    }

    /// The lines of `action` from a worker started, restarted by hand (as after a crash), and
    /// started again by a reload that replaced its file: each worker enters the same sandbox.
    private func threeWorkers(_ host: IsolatedHost, action: Int, _ defines: [String], config: String) throws
        -> (lines: [String], records: [LogRecord])
    {
        try sandboxed(host, action: action, defines)
        try host.start(["--config", config])
        #expect(try host.ctlJSON("service", "restart", "test.sandbox").status == 0)
        try sandboxed(host, action: action, defines + ["SANDBOX_RELOADED=1"])
        let reload = try host.ctlJSON("reload")
        #expect(reload.reply["replaced"] as? [String] == ["test.sandbox"], "\(reload.reply)")
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        return (output(stopped.records).filter { $0.hasPrefix("sandbox: ") }, stopped.records)
    }

    /// A dynamic user: a uid of the documented range, its own group and no other, kept in the
    /// state directory; it cannot open the host's state directory nor a file another service's
    /// dynamic user wrote (mode 0600), and a restarted or reloaded worker runs as the same user.
    @Test func aDynamicUser_cannotReadTheStateDirectory_orAnotherServicesFile_andIsKept() throws {
        let host = try IsolatedHost()
        // Others may pass through the scratch folder (not list it), to a folder both may write.
        chmod(host.scratch.path, 0o711)
        let shared = try host.scratch.folder("shared", mode: 0o1777)
        chmod(shared, 0o1777)
        try Command.compileC(
            Repository.fixture("Sandbox/sandbox.c"), to: host.lib + "/second.so",
            defines: [
                "SANDBOX_ACTION=6", #"SANDBOX_ID="test.second""#, "SANDBOX_GRANTED=\"\(shared)\"",
                "SANDBOX_OUTSIDE=\"\(shared)\"",
            ])
        let config = try host.file(
            "services.json",
            #"{"sandbox": {"dynamicUser": true}, "services": {"test.sandbox": {"isolation": "process", "after": ["test.second"]}, "test.second": {"isolation": "process"}}}"#
        )
        let lines = try threeWorkers(
            host, action: 5,
            ["SANDBOX_STATE=\"\(host.stateDirectory)\"", "SANDBOX_OTHER=\"\(shared)/written\""], config: config
        ).lines
        #expect(lines.count == 3 && Set(lines).count == 1, "\(lines)")
        let fields = Dictionary(
            uniqueKeysWithValues: (lines.first ?? "").dropFirst("sandbox: ".count).split(separator: " ").compactMap {
                let pair = $0.split(separator: "=")
                return pair.count == 2 ? (String(pair[0]), Int(pair[1]) ?? -1) : nil
            })
        let uid = try #require(fields["uid"], "\(lines)")
        #expect((60_578...61_183).contains(uid))
        #expect(fields["gid"] == uid && fields["groups"] == 0)
        #expect(fields["state"] == Int(EACCES) && fields["other"] == Int(EACCES), "\(lines)")
        // Each service's user is its own, recorded in the state directory.
        let recorded = try String(contentsOfFile: host.stateDirectory + "/users/test.sandbox", encoding: .utf8)
        #expect(Int(recorded.trimmingCharacters(in: .whitespacesAndNewlines)) == uid)
        let written = try FileManager.default.attributesOfItem(atPath: shared + "/written")
        let second = try String(contentsOfFile: host.stateDirectory + "/users/test.second", encoding: .utf8)
        #expect((written[.ownerAccountID] as? Int) == Int(second.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect((written[.ownerAccountID] as? Int) != uid)
        // The next start runs as the same user.
        try host.start(["--config", config])
        let again = host.stop()
        #expect(output(again.records).filter { $0.hasPrefix("sandbox: uid=") } == [lines.first ?? ""])
    }

    /// A named user (the machine's second local user): its uid and primary group, no other group.
    @Test(.enabled(if: getpwnam("servicehost-other") != nil, "no user servicehost-other"))
    func aNamedUser_runsTheWorker_withoutSupplementaryGroups() throws {
        let host = try IsolatedHost()
        let user = try #require(getpwnam("servicehost-other")).pointee
        let config = try host.file(
            "services.json",
            #"{"services": {"test.sandbox": {"isolation": "process", "sandbox": {"user": "servicehost-other"}}}}"#)
        let lines = try threeWorkers(
            host, action: 5,
            ["SANDBOX_STATE=\"\(host.stateDirectory)\"", "SANDBOX_OTHER=\"\(host.stateDirectory)/services\""],
            config: config
        ).lines
        let expected = "sandbox: uid=\(user.pw_uid) gid=\(user.pw_gid) groups=0 state=\(EACCES) other=\(EACCES)"
        #expect(lines == [expected, expected, expected], "\(lines)")
    }

    /// `writablePaths`: a write beneath a granted folder works, one outside fails with EACCES
    /// (Landlock), in every worker; where the kernel has no Landlock the host says so by name.
    @Test func writablePaths_grantWritesThere_andRefuseThemElsewhere() throws {
        let host = try IsolatedHost()
        let granted = try host.scratch.folder("granted")
        let outside = try host.scratch.folder("outside")
        let config = try host.file(
            "services.json",
            #"{"services": {"test.sandbox": {"isolation": "process", "sandbox": {"writablePaths": ["\#(granted)"]}}}}"#
        )
        let (lines, records) = try threeWorkers(
            host, action: 6, ["SANDBOX_GRANTED=\"\(granted)\"", "SANDBOX_OUTSIDE=\"\(outside)\""], config: config)
        let unavailable = records.named(.sandboxUnavailable).first { $0.strings("limits") == ["writablePaths"] }
        let expected = "sandbox: granted=0 outside=\(unavailable == nil ? EACCES : 0)"
        #expect(lines == [expected, expected, expected], "\(lines)")
    }

    /// `"network": false`: the worker sees only `lo` (up), and reaches no other address.
    @Test func networkFalse_leavesTheWorkerOnlyLoopback() throws {
        let host = try IsolatedHost()
        let config = try host.file(
            "services.json", #"{"services": {"test.sandbox": {"isolation": "process", "sandbox": {"network": false}}}}"#
        )
        let lines = try threeWorkers(host, action: 7, [], config: config).lines
        let expected = ["sandbox: interfaces=lo up=lo", "sandbox: inet-connect=\(ENETUNREACH)"]
        #expect(lines == expected + expected + expected, "\(lines)")
    }

    /// A custom list over a profile: `allow` takes a call out of it, `deny` adds one (EPERM).
    @Test(
        .enabled(if: seccomp, "the kernel has no seccomp"),
        arguments: [
            (#""default""#, "ptrace=\(EPERM) mkdir=\(ENOENT)"),
            (#"{"profile": "default", "allow": ["ptrace"], "deny": ["mkdir"]}"#, "ptrace=\(ESRCH) mkdir=\(EPERM)"),
        ])
    func customSyscallLists_allowAndDenyOverTheProfile(syscalls: String, expected: String) throws {
        let host = try IsolatedHost()
        let config = try host.file(
            "services.json",
            #"{"services": {"test.sandbox": {"isolation": "process", "sandbox": {"syscalls": \#(syscalls)}}}}"#)
        let lines = try threeWorkers(host, action: 8, [], config: config).lines
        #expect(lines == Array(repeating: "sandbox: " + expected, count: 3), "\(lines)")
    }

    /// README "Sandboxing services": its transcript of the bundled services' scores, run in a
    /// folder with the bundled plugins and the section's configuration as `services.json`.
    @Test func theReadmesScores_areWhatInspectPrintsForTheBundledServices() throws {
        let section = try Documentation.section("Sandboxing services")
        let configuration = try #require(section.codeBlocks(language: "json").first)
        let transcript = try #require(section.codeBlocks(language: "text").first)
        let scratch = try Scratch()
        _ = try scratch.folder("plugins")
        for name in try ReadmeTranscriptTests.bundled() {
            _ = try scratch.copy(try Repository.product("lib\(name).so"), to: "plugins/lib\(name).so", mode: 0o755)
        }
        try scratch.write("services.json", Array(configuration.joined(separator: "\n").utf8))
        let shell = try TranscriptShell(scratch, control: scratch.file("host.sock"))
        var commands: [(text: String, expected: [String])] = []
        for line in transcript {
            if line.hasPrefix("$ ") {
                commands.append((String(line.dropFirst(2)), []))
            } else if !line.isEmpty {
                #expect(!commands.isEmpty, "an output line outside a command: \(line)")
                commands[commands.count - 1].expected.append(line)
            }
        }
        #expect(commands.count >= 2, "\(transcript)")
        for command in commands {
            let actual = TranscriptShell.lines(try shell.run(command.text))
            #expect(actual == command.expected, "`\(command.text)` now prints:\n\(actual.joined(separator: "\n"))")
        }
    }

    /// `host check` rates every service (`security` in its JSON): one in the host is 10, an
    /// unsandboxed worker less, a sandboxed one less still.
    @Test func check_ratesEachService_fromTheHostToASandbox() throws {
        let host = try IsolatedHost()
        for id in ["a", "b", "c"] { try host.probe(id, ["PROBE_ID=\"test.\(id)\""]) }
        let config = try host.file(
            "services.json",
            #"""
            {"services": {"test.b": {"isolation": "process"},
              "test.c": {"isolation": "process", "sandbox": {"dynamicUser": true, "network": false,
                "syscalls": "strict", "writablePaths": [], "memoryMax": "64M", "tasksMax": 16, "cpuQuota": 50}}}}
            """#)
        let checked = try Command.run(
            try Repository.product("host"), ["check", "--plugins", host.lib, "--config", config, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any])
        let scores = Dictionary(
            uniqueKeysWithValues: (report["security"] as? [[String: Any]] ?? []).map {
                ($0["service"] as? String ?? "", $0["score"] as? Double ?? -1)
            })
        #expect(scores["test.a"] == 10, "\(scores)")
        #expect((scores["test.b"] ?? 0) < 10 && (scores["test.b"] ?? 0) > 5, "\(scores)")
        #expect((scores["test.c"] ?? 10) < 1, "\(scores)")
        let inspected = try Command.run(
            try Repository.product("host"),
            ["inspect", "--security", "--json", "--config", config, host.lib + "/c.so", "test.c"])
        #expect(inspected.status == 0, "\(inspected.stderr)")
        let entries = try #require(
            try JSONSerialization.jsonObject(with: Data(inspected.stdout.utf8)) as? [[String: Any]])
        #expect(entries.map { $0["service"] as? String } == ["test.c"])
        #expect(entries.first?["score"] as? Double == scores["test.c"])
        let settings = (entries.first?["settings"] as? [[String: Any]] ?? []).map { $0["name"] as? String ?? "" }
        #expect(
            settings == [
                "isolation", "user", "syscalls", "writablePaths", "network", "noNewPrivileges", "memoryMax", "tasksMax",
                "cpuQuota",
            ])
    }

    /// `"audit": true`: each refused call is still `EPERM` to the plugin, and logged once per
    /// call and service (`sandbox.refused`), not again by the service's next worker.
    @Test(.enabled(if: seccomp, "the kernel has no seccomp"))
    func audit_logsEachRefusedCallOncePerService() throws {
        let host = try IsolatedHost()
        try sandboxed(host, action: 4)
        let config = try host.file(
            "services.json",
            #"{"services": {"test.sandbox": {"isolation": "process", "sandbox": {"syscalls": "default", "audit": true}}}}"#
        )
        try host.start(["--config", config])
        #expect(try host.ctlJSON("service", "restart", "test.sandbox").status == 0)
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let expected = "sandbox: ptrace=\(EPERM) mount=\(EPERM) inet=0 unix=0"
        #expect(output(stopped.records).filter { $0.hasPrefix("sandbox: ") } == [expected, expected])
        let refused = stopped.records.named(.sandboxRefused)
        #expect(refused.compactMap { $0.string("syscall") }.sorted() == ["mount", "ptrace"], "\(stopped.stderr)")
        #expect(refused.allSatisfy { $0.strings("services") == ["test.sandbox"] })
        // The worker's report is not also logged as its output.
        #expect(!output(stopped.records).contains { $0.contains("refused") })
    }

    @Test(arguments: [
        (#"{"sandbox": {"audit": 1}}"#, "sandbox.audit"),
        (#"{"sandbox": {"syscalls": "paranoid"}}"#, "sandbox.syscalls"),
        (#"{"services": {"test.a": {"sandbox": {"user": "no-such-user-43"}}}}"#, "services.test.a.sandbox.user"),
        (#"{"sandbox": {"group": "no-such-group-43"}}"#, "sandbox.group"),
        (#"{"sandbox": {"user": "0", "dynamicUser": true}}"#, "sandbox.dynamicUser"),
        (#"{"sandbox": {"writablePaths": ["relative"]}}"#, "sandbox.writablePaths[0]"),
        (#"{"sandbox": {"writablePaths": ["/no/such/folder-43"]}}"#, "sandbox.writablePaths[0]"),
        (#"{"sandbox": {"network": "off"}}"#, "sandbox.network"),
        (#"{"sandbox": {"syscalls": {"deny": ["mkdir", "no_such_call"]}}}"#, "sandbox.syscalls.deny[1]"),
        (#"{"sandbox": {"syscalls": {"profile": "lax"}}}"#, "sandbox.syscalls.profile"),
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
