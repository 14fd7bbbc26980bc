import Foundation
import TestSupport
import Testing

/// Issue 40 item 4: a host killed (`kill -9`) at any step of a deploy runs one whole generation
/// when started again (the one current before, unless the new one was accepted), never a mix,
/// and says which and why; a full disk while staging refuses the deploy and changes nothing.
///
/// The host kills itself at a step with `SERVICEHOST_DEPLOY_HALT_AT=STEP` (DeployStep), right
/// after the step's `deploy.step` line.
@Suite(.timeLimit(.minutes(10))) struct DeployCrashTests {
    /// `ctl deploy status --json`'s `deploy` object.
    private func status(_ host: IsolatedHost) throws -> [String: Any] {
        try host.reply("deploy", "status")["deploy"] as? [String: Any] ?? [:]
    }

    /// The services' ids, versions and files, in the order `ctl list` gives them.
    private func running(_ host: IsolatedHost) throws -> [[String: Any]] {
        try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []
    }

    /// Whether `pid` is a process not yet ended (a zombie has ended).
    private func alive(_ pid: Int) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    /// A host (workers) whose generation 1 (test.a and test.b 0.2.0) was accepted, killed, and
    /// started again with `SERVICEHOST_DEPLOY_HALT_AT=halt`; and the set of generation 2, which
    /// changes both to 0.3.0.
    private func hostOnGeneration1(haltingAt halt: String) throws -> (IsolatedHost, next: String) {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        var sets: [String] = []
        for version in ["0.2.0", "0.3.0"] {
            let set = try host.scratch.folder("set-\(version)")
            for id in ["a", "b"] {
                try Plugins.probe(set + "/\(id).so", ["PROBE_ID=\"test.\(id)\"", "PROBE_VERSION=\"\(version)\""])
            }
            sets.append(set)
        }
        try host.start(["--isolation", "process"])
        #expect(try host.ctlJSON("deploy", sets[0], "--probation", "1").status == 0)
        #expect(eventually { (try? self.status(host))?["current"] as? Int == 1 })
        // Accepted, then killed: the next start runs it.
        host.signal(SIGKILL)
        try host.start(["--isolation", "process"], environment: ["SERVICEHOST_DEPLOY_HALT_AT": halt])
        return (host, sets[1])
    }

    @Test(arguments: ["staging", "verifying", "switching", "probation", "accepting", "rollingBack"])
    func aHostKilledAtAStep_runsTheAcceptedGenerationWhole_andSaysWhy(step: String) throws {
        let (host, next) = try hostOnGeneration1(haltingAt: step)
        let workers = try running(host).compactMap { $0["pid"] as? Int }
        #expect(workers.count == 2)
        switch step {
        case "accepting": #expect(try host.ctlJSON("deploy", next, "--probation", "1").status == 0)
        case "rollingBack":
            #expect(try host.ctlJSON("deploy", next, "--probation", "600").status == 0)
            _ = try host.ctl("deploy", "--cancel")
        default: _ = try host.ctl("deploy", next, "--probation", "600")
        }
        let killed = host.wait()
        #expect(killed.status == 128 + SIGKILL, "\(killed.stderr)")
        let steps = host.records.named(.deployStep)
        #expect(steps.last?.string("step") == step && steps.last?.int("generation") == 2, "\(host.records.text)")
        let before = host.records.named(.deployResumed)
        #expect(before.first?.int("generation") == 1 && before.first?.string("reason") == "current")
        // The killed host's workers end with it: none of its code runs beside the next host's.
        #expect(eventually(within: 20) { !workers.contains(where: alive) }, "\(workers)")
        // A replace cut short (of `current`, or a history compaction) leaves its temporary file.
        let leftover = host.stateDirectory + "/generations/.tmp-5eed"
        #expect(FileManager.default.createFile(atPath: leftover, contents: Data("2\n".utf8)))

        try host.start(["--isolation", "process"])
        let services = try running(host)
        #expect(services.map { $0["version"] as? String } == ["0.2.0", "0.2.0"], "\(services)")
        let folder = host.stateDirectory + "/generations/1/"
        #expect(services.allSatisfy { ($0["path"] as? String)?.hasPrefix(folder) == true }, "\(services)")
        let state = try self.status(host)
        #expect(state["current"] as? Int == 1 && state["probation"] == nil, "\(state)")
        let generations = (state["generations"] as? [[String: Any]] ?? []).map {
            "\($0["generation"] as? Int ?? 0) \($0["outcome"] as? String ?? "") \($0["reason"] as? String ?? "")"
        }
        let staged = step == "staging" || step == "verifying"
        #expect(generations == (staged ? [] : ["2 rolledBack notAccepted"]) + ["1 applied "], "\(generations)")
        // Nothing of generation 2 is left to confuse a later deploy (nothing returns to it).
        let left = try FileManager.default.contentsOfDirectory(atPath: host.stateDirectory + "/generations")
        #expect(left.filter { $0.hasPrefix("staging-") || $0.hasPrefix(".tmp-") || $0 == "2" } == [], "\(left)")
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let resumed = host.records.named(.deployResumed)
        #expect(resumed.count == 1 && resumed.first?.int("generation") == 1, "\(host.records.text)")
        #expect(resumed.first?.string("reason") == (staged ? "current" : "notAccepted"))
        #expect(resumed.first?.int("rejected") == (staged ? nil : 2))
        #expect(resumed.first?.strings("discarded") == (staged ? ["2"] : nil))
    }

    /// Killed between the two writes of an acceptance: `generations/current` names generation
    /// 2, its `applied` history line is not written. The next start runs generation 2 whole, as
    /// accepted, and writes the line.
    @Test func aHostKilledAfterRecordingCurrent_beforeItsHistoryLine_runsTheNewGenerationWhole() throws {
        let (host, next) = try hostOnGeneration1(haltingAt: "currentRecorded")
        #expect(try host.ctlJSON("deploy", next, "--probation", "1").status == 0)
        let killed = host.wait()
        #expect(killed.status == 128 + SIGKILL, "\(killed.stderr)")
        let steps = host.records.named(.deployStep)
        #expect(steps.last?.string("step") == "accepting" && steps.last?.int("generation") == 2)
        #expect(host.records.named(.deployApplied).isEmpty, "\(host.records.text)")
        let recorded = try String(contentsOfFile: host.stateDirectory + "/generations/current", encoding: .utf8)
        #expect(recorded == "2\n")

        try host.start(["--isolation", "process"])
        let services = try running(host)
        #expect(services.map { $0["version"] as? String } == ["0.3.0", "0.3.0"], "\(services)")
        let folder = host.stateDirectory + "/generations/2/"
        #expect(services.allSatisfy { ($0["path"] as? String)?.hasPrefix(folder) == true }, "\(services)")
        let state = try self.status(host)
        #expect(state["current"] as? Int == 2 && state["probation"] == nil, "\(state)")
        let generations = (state["generations"] as? [[String: Any]] ?? []).map {
            "\($0["generation"] as? Int ?? 0) \($0["outcome"] as? String ?? "")"
        }
        #expect(generations == ["2 applied", "1 applied"], "\(generations)")
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let resumed = host.records.named(.deployResumed)
        #expect(resumed.count == 1 && resumed.first?.int("generation") == 2, "\(host.records.text)")
        #expect(resumed.first?.string("reason") == "current" && resumed.first?.int("rejected") == nil)
    }

    @Test(
        .disabled(
            if: Sanitizer.isActive,
            "ThreadSanitizer's runtime dies of SIGBUS in its MemoryAccessRange when a file system is full"))
    func aFullDiskWhileStaging_refusesTheDeploy_andChangesNothing() throws {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else {
            print("skipped: mounting a tmpfs needs root and unshare")
            return
        }
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        let set = try host.scratch.folder("set")
        try FileManager.default.copyItem(atPath: host.lib + "/a.so", toPath: set + "/a.so")
        try Plugins.probe(set + "/b.so", ["PROBE_ID=\"test.b\"", "PROBE_VERSION=\"0.2.0\""])
        // 2 MiB more than the file system holds (bytes after an ELF file's end are not read).
        let big = try FileHandle(forWritingTo: URL(fileURLWithPath: set + "/b.so"))
        try big.seekToEnd()
        try big.write(contentsOf: Data(count: 2 << 20))
        try big.close()
        // The host in a mount namespace of its own, its state directory a 1 MiB tmpfs.
        let script = try host.scratch.script(
            "in-namespace.sh",
            """
            #!/bin/sh
            exec /usr/bin/unshare -m --propagation private /bin/sh -c '
              mkdir -p "$0" && mount -t tmpfs -o size=1m,mode=0700 servicehost-test "$0" || exit 97
              exec "$@"' \(host.stateDirectory) \(try Repository.product("host")) "$@"
            """)
        try host.start([], executable: script)
        let pid = try #require(host.process?.pid)
        // The state directory as the host sees it, through its mount namespace.
        let generations = "/proc/\(pid)/root" + host.stateDirectory + "/generations"
        let (status, reply) = try host.ctlJSON("deploy", set)
        #expect(status == 1 && reply["ok"] as? Bool == false, "\(reply)")
        #expect(try host.service("test.b")?["version"] as? String == "0.1.0")
        #expect(try host.service("test.b")?["path"] as? String == host.lib + "/b.so")
        #expect(try FileManager.default.contentsOfDirectory(atPath: generations) == [])
        #expect(try self.status(host)["current"] is NSNull)
        #expect(host.events(of: "test.b").filter { $0 == "willFinishLaunching" }.count == 1)
        // The disk has room again: the same set deploys.
        try FileManager.default.removeItem(atPath: set + "/b.so")
        try Plugins.probe(set + "/b.so", ["PROBE_ID=\"test.b\"", "PROBE_VERSION=\"0.2.0\""])
        #expect(try host.ctlJSON("deploy", set, "--probation", "1").reply["generation"] as? Int == 1)
        #expect(try host.service("test.b")?["version"] as? String == "0.2.0")
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let refused = host.records.named(.deployRefused)
        #expect(refused.count == 1 && refused.first?.string("directory") == set, "\(host.records.text)")
        #expect(refused.first?.string("reason")?.contains(set + "/b.so: stage: ") == true, "\(host.records.text)")
    }
}
