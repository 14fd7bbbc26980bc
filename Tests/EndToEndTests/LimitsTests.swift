import Foundation
import TestSupport
import Testing

/// Full disks, unbounded inputs and leftovers (issue 19): the host degrades, it never crashes
/// or grows without bound.
@Suite(.timeLimit(.minutes(10))) struct LimitsTests {
    /// The JSON log lines of `stderr` (`--log-format json`).
    private func records(_ stderr: String) -> [[String: Any]] {
        stderr.split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
    }

    private func events(_ stderr: String, _ name: String) -> [[String: Any]] {
        records(stderr).filter { $0["event"] as? String == name }
    }

    @Test(.enabled(if: SmallFilesystem.canMount, "mounting a tmpfs needs root and a mount namespace"))
    func aFullDisk_reachesActiveWithoutASentinel_andEveryWriteFailsCleanly() throws {
        let host = try IsolatedHost()
        let disk = try SmallFilesystem(at: try host.scratch.folder("disk"), kibibytes: 512)
        defer { disk.unmount() }
        let state = disk.path + "/state"
        try FileManager.default.createDirectory(
            atPath: state, withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        try host.scratch.copy(try Repository.product("libOfflineQueue.so"), to: "lib/libOfflineQueue.so")
        try host.bad("crash", ["BAD_ID=\"test.crash\"", "BAD_ON_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "BAD_ACTION=1"])
        let config = try host.file("services.json", #"{"services": {"test.crash": {"isolation": "process"}}}"#)
        try disk.fill()

        try host.start(["--state-dir", state, "--config", config, "--crash-limit", "1/60", "--log-format", "json"])
        #expect(try host.ctl("post", "queue.enqueue", #"{"text":"hi"}"#).status == 0)
        #expect(try host.ctl("background").status == 0)
        #expect(eventually { (try? host.service("test.crash"))?["state"] as? String == "failed" })
        #expect(try host.ctl("activate").status == 0)
        // A change of the notification authorization holds for this run though it cannot be saved.
        #expect(try host.ctl("authorization", "denied").status == 0)
        #expect(try host.ctl("state").stdout.contains("state: active"))
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")

        // No sentinel, said once, with the reason.
        let sentinel = events(result.stderr, LogEvent.sentinelUnavailable.name)
        #expect(sentinel.count == 1)
        #expect((sentinel.first?["message"] as? String)?.contains("posix_fallocate") == true, "\(result.stderr)")
        // The store and the failure record could not be written: each said so. (First-launch marks
        // are empty files: a full tmpfs still takes them.)
        #expect(
            records(result.stderr).contains {
                $0["source"] as? String == "dev.servicehost.offline-queue"
                    && ($0["message"] as? String)?.contains("cannot save") == true
            }, "\(result.stderr)")
        let failed = events(result.stderr, LogEvent.workerFailed.name).first?["fields"] as? [String: Any]
        #expect(failed?["record"] as? String == "unsaved", "\(result.stderr)")
        // Nor the registry cache: said once, and every file was read instead.
        #expect(events(result.stderr, LogEvent.registryUnwritable.name).count == 1, "\(result.stderr)")
        let authorization = events(result.stderr, LogEvent.authorizationSaveFailed.name)
        #expect(authorization.map { $0["level"] as? String } == ["error"], "\(result.stderr)")
        let fields = authorization.first?["fields"] as? [String: Any]
        #expect(fields?["path"] as? String == state + "/notifications/authorization.json", "\(result.stderr)")
        #expect(fields?["errno"] as? Int == Int(ENOSPC))
    }

    /// No inode left where the state directory is: the first-launch marks (empty files) and a
    /// scene's restoration activity cannot be saved. The launch goes on and says it is the
    /// first, each failure is logged with what it concerns, the path and `ENOSPC`, and the next
    /// start with room says first launch again: nothing was recorded, so nothing is lost. Then
    /// the marks are made, and the third start is not a first.
    @Test(.enabled(if: SmallFilesystem.canMount, "mounting a tmpfs needs root and a mount namespace"))
    func noInodeLeft_theFirstLaunchIsNotRecorded_andTheNextStartIsFirstAgain() throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"", "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENTS_SCENES",
                #"PROBE_RESTORATION="{\"type\":\"test.edit\"}""#,
            ])
        let disk = try SmallFilesystem(at: try host.scratch.folder("disk"), kibibytes: 512, inodes: 64)
        defer { disk.unmount() }
        let state = disk.path + "/state"
        // The folders the host makes itself, made first: without them it cannot start at all.
        for folder in ["", "/services", "/launched", "/notifications", "/scenes"] {
            try FileManager.default.createDirectory(
                atPath: state + folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        let fillers = try disk.fillInodes()
        // The launch flags test.a was given, and the run's records.
        func run() throws -> (flags: UInt32?, records: [LogRecord]) {
            try host.start(["--state-dir", state, "--launch-scene", "main"])
            // The probe saves its activity as the scene goes to the background.
            #expect(try host.ctl("scene", "disconnect", "main").status == 0)
            let result = host.stop()
            #expect(result.status == 0, "\(result.stderr)")
            return (result.records.launchFlags(of: "test.a"), result.records)
        }
        let first: UInt32 = 3  // SH_LAUNCH_FIRST_HOST_LAUNCH | SH_LAUNCH_FIRST_SERVICE_LAUNCH

        let full = try run()
        #expect(full.flags == first, "\(full.records.text)")
        let unrecorded = full.records.named(.firstLaunchUnrecorded)
        #expect(unrecorded.allSatisfy { $0.level == "error" } && unrecorded.count == 2, "\(full.records.text)")
        #expect(unrecorded.contains { $0.strings("services") == ["test.a"] }, "\(full.records.text)")
        #expect(
            unrecorded.allSatisfy {
                $0.int("errno") == Int(ENOSPC) && $0.string("path")?.hasPrefix(state + "/launched/") == true
            })
        let restoration = full.records.named(.sceneRestorationFailed)
        #expect(
            restoration.map { [$0.level, $0.string("scene"), $0.string("path")] } == [
                ["error", "main", state + "/scenes/main.json"]
            ], "\(full.records.text)")
        #expect(restoration.first?.int("errno") == Int(ENOSPC))

        for filler in fillers { try FileManager.default.removeItem(atPath: filler) }
        let roomy = try run()
        #expect(roomy.flags == first, "\(roomy.records.text)")
        #expect(roomy.records.named(.firstLaunchUnrecorded).isEmpty, "\(roomy.records.text)")
        #expect(roomy.records.named(.sceneRestorationFailed).isEmpty)
        #expect(try run().flags == 0)
    }

    @Test func aLaunchNotification_overThePayloadLimit_isRefusedNamingTheLimit() throws {
        let host = try RunningHost()
        let payload = try host.file(
            "big.json", #"{"aps": {"alert": ""# + String(repeating: "x", count: 70_000) + #""}}"#)
        let result = try Command.run(
            try Repository.product("host"),
            [
                "--plugins", host.lib, "--control", host.control, "--state-dir", host.stateDirectory,
                "--launch-notification", payload,
            ])
        #expect(result.status == 2)
        #expect(result.stderr.contains(payload) && result.stderr.contains("65536"), "\(result.stderr)")
    }

    @Test func hiddenFiles_areNotPlugins() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe(".b", ["PROBE_ID=\"test.b\""])  // an installer's temporary
        try host.start(["--log-format", "json"])
        let list = try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []
        #expect(list.compactMap { $0["id"] as? String } == ["test.a"])
        let log = host.stop().stderr
        #expect(!log.contains(".b.so"), "\(log)")
    }

    @Test func replacingAFileAgainAndAgain_stopsAtTheRetiredCopyLimit_andKeepsTheRunningCopy() throws {
        let host = try RunningHost()
        let builds = [
            try Plugins.probe(host.scratch.file("v1.so"), ["PROBE_ID=\"test.a\""]),
            try Plugins.probe(host.scratch.file("v2.so"), ["PROBE_ID=\"test.a\"", "PROBE_PRIORITY=1"]),
        ]
        let target = host.lib + "/a.so"
        try FileManager.default.copyItem(atPath: builds[0], toPath: target)
        try host.start()
        let limit = 16
        for round in 1...limit + 1 {
            // A new file (a new inode), as an installer's rename gives.
            let next = host.lib + "/.a.so.new"
            try? FileManager.default.removeItem(atPath: next)
            try FileManager.default.copyItem(atPath: builds[round % 2], toPath: next)
            #expect(rename(next, target) == 0)
            let reload = try host.ctlJSON("reload").reply
            let failures = reload["failures"] as? [String] ?? []
            if round <= limit {
                #expect(reload["replaced"] as? [String] == ["test.a"], "round \(round): \(reload)")
            } else {
                #expect(reload["replaced"] as? [String] == [], "round \(round): \(reload)")
                #expect(
                    failures.count == 1 && failures[0].contains(target) && failures[0].contains("\(limit)"), "\(reload)"
                )
            }
        }
        let service = (try host.ctlJSON("list").reply["services"] as? [[String: Any]])?.first
        #expect(service?["retiredCopies"] as? Int == limit)
        // The copy that kept running still gets events.
        try host.ctl("background")
        #expect(host.events.last == "didEnterBackground test.a")
        _ = host.stop()
    }

    /// Issue 36, item 8: the retired-copies limit holds on every path that loads a new version,
    /// not only a reload of a running service's changed file: a file changed while its service
    /// is disabled, then enabled again, retires the copy loaded before too (it stays mapped).
    @Test func aFileChangedWhileItsServiceIsDisabled_countsAgainstTheRetiredCopyLimit() throws {
        let host = try RunningHost()
        let builds = [
            try Plugins.probe(host.scratch.file("v1.so"), ["PROBE_ID=\"test.a\""]),
            try Plugins.probe(host.scratch.file("v2.so"), ["PROBE_ID=\"test.a\"", "PROBE_PRIORITY=1"]),
        ]
        let target = host.lib + "/a.so"
        try FileManager.default.copyItem(atPath: builds[0], toPath: target)
        let config = try host.file("services.json", #"{"services": {"test.a": {}}}"#)
        try host.start(["--config", config])
        let limit = 16
        for round in 1...limit + 1 {
            try #"{"services": {"test.a": {"enabled": false}}}"#.write(
                toFile: config, atomically: true, encoding: .utf8)
            #expect(try host.ctlJSON("reload").reply["removed"] as? [String] == ["test.a"], "round \(round)")
            let next = host.lib + "/.a.so.new"
            try? FileManager.default.removeItem(atPath: next)
            try FileManager.default.copyItem(atPath: builds[round % 2], toPath: next)
            #expect(rename(next, target) == 0)
            try #"{"services": {"test.a": {}}}"#.write(toFile: config, atomically: true, encoding: .utf8)
            let reload = try host.ctlJSON("reload").reply
            let failures = reload["failures"] as? [String] ?? []
            if round <= limit {
                #expect(reload["added"] as? [String] == ["test.a"], "round \(round): \(reload)")
                let service = (try host.ctlJSON("list").reply["services"] as? [[String: Any]])?.first
                #expect(service?["retiredCopies"] as? Int == round, "round \(round): \(String(describing: service))")
            } else {
                #expect(reload["added"] as? [String] == [], "round \(round): \(reload)")
                #expect(
                    failures.count == 1 && failures[0].contains(target) && failures[0].contains("\(limit)"), "\(reload)"
                )
            }
        }
        _ = host.stop()
    }
}

/// A tmpfs of a few KiB for full-disk tests (root only; skipped where mounting is not allowed).
struct SmallFilesystem {
    let path: String

    /// Whether this process may mount one (tried once, on a throwaway folder).
    static let canMount: Bool = {
        let probe = NSTemporaryDirectory() + "servicehost-mount-probe-\(getpid())"
        try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard mount("tmpfs", probe, "tmpfs", 0, "size=64k") == 0 else {
            print(
                "LimitsTests: cannot mount a tmpfs here (\(String(cString: strerror(errno)))): the full-disk test is skipped"
            )
            return false
        }
        umount(probe)
        return true
    }()

    /// Mounts one of `kibibytes` on `path`; with `inodes`, it holds at most that many files and folders.
    init(at path: String, kibibytes: Int, inodes: Int? = nil) throws {
        self.path = path
        let options = "size=\(kibibytes)k,mode=0755" + (inodes.map { ",nr_inodes=\($0)" } ?? "")
        guard mount("tmpfs", path, "tmpfs", 0, options) == 0 else {
            throw TestFailure("mount tmpfs on \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Writes a file until the filesystem is full.
    func fill() throws {
        let fd = open(path + "/filler", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw TestFailure("open filler: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let block = [UInt8](repeating: 0xAB, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Makes empty files until no inode is left (`ENOSPC`); returns their paths.
    func fillInodes() throws -> [String] {
        var made: [String] = []
        while true {
            let file = path + "/inode-\(made.count)"
            let fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            guard fd >= 0 else {
                guard errno == ENOSPC else { throw TestFailure("open \(file): \(String(cString: strerror(errno)))") }
                return made
            }
            close(fd)
            made.append(file)
        }
    }

    func unmount() { umount2(path, Int32(MNT_DETACH)) }
}
