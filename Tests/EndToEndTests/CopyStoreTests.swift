import Foundation
import TestSupport
import Testing

/// The store of plugin copies (issue 18): every plugin is loaded from a copy kept in
/// `TMPDIR/servicehost-copies-UID/KEY/NAME`, made once per version of the file and re-used by
/// later starts; a tampered copy is made again, an unsafe store is refused with its reason, and
/// versions whose file changed are evicted.
@Suite struct CopyStoreTests {
    /// A host whose `TMPDIR` is a folder of its own (on /dev/shm when there is one, which is
    /// where the host puts copies when it is an executable tmpfs), so tests share no store.
    final class StoreHost: RunningHost {
        let temporary: String

        override init() throws {
            let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
            var template = Array((base + "/servicehost-test-store-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed: errno \(errno)") }
            temporary = String(cString: made)
            try super.init()
        }

        deinit { try? FileManager.default.removeItem(atPath: temporary) }

        /// Where the host keeps its copies.
        var store: String { temporary + "/servicehost-copies-\(geteuid())" }

        /// Starts the host with this `TMPDIR`.
        func launch(_ extra: [String] = []) throws {
            try start(extra, environment: ["TMPDIR": temporary])
        }

        /// The files the running host has mapped whose name ends in `/NAME`, with their inodes.
        func mapped(_ name: String) throws -> [(path: String, inode: UInt64)] {
            let pid = try #require(process?.pid)
            // Read to the end: /proc files say they are empty, so a read by size may get nothing.
            let handle = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/maps"))
            defer { try? handle.close() }
            let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
            var seen = Set<String>()
            return maps.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count >= 6, fields[5].hasSuffix("/" + name), seen.insert(String(fields[5])).inserted else {
                    return nil
                }
                return (String(fields[5]), UInt64(fields[4]) ?? 0)
            }
        }

        /// Every file in the store (KEY/NAME), with its inode.
        func storedFiles() -> [String: UInt64] {
            var files: [String: UInt64] = [:]
            for key in (try? FileManager.default.contentsOfDirectory(atPath: store)) ?? [] {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: store + "/" + key)) ?? [] {
                    var status = stat()
                    if lstat(store + "/" + key + "/" + name, &status) == 0 {
                        files[key + "/" + name] = UInt64(status.st_ino)
                    }
                }
            }
            return files
        }

        /// The `priority` the running probe reports (a build's PROBE_PRIORITY).
        func priority() throws -> Int? {
            (try ctlJSON("list").reply["services"] as? [[String: Any]])?.first?["priority"] as? Int
        }
    }

    private func inode(_ path: String) -> UInt64 {
        var status = stat()
        return stat(path, &status) == 0 ? UInt64(status.st_ino) : 0
    }

    @Test(.timeLimit(.minutes(10))) func aSecondStart_reusesTheStoredCopy_andMakesNoFile() throws {
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.launch()
        let first = try host.mapped("a.so")
        #expect(first.count == 1 && first[0].path.hasPrefix(host.store + "/"), "\(first)")
        let stored = host.storedFiles()
        #expect(stored.keys.contains { $0.hasSuffix("/a.so") }, "\(stored)")
        #expect(stored.keys.contains { $0.hasSuffix("/.source") }, "\(stored)")
        #expect(host.stop().status == 0)

        try host.launch()
        let second = try host.mapped("a.so")
        #expect(second.map(\.path) == first.map(\.path))
        #expect(second.map(\.inode) == first.map(\.inode))
        #expect(host.storedFiles() == stored)
        #expect(host.stop().status == 0)
    }

    @Test(.timeLimit(.minutes(10)))
    func aVersionStartedAgain_runsFromTheLibraryLoaded_andTheStoreNamesItsSourceAbsolutely()
        throws
    {
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let config = try host.file("services.json", #"{"services": {"test.a": {}}}"#)
        // The plugin folder as a relative path: the store must still name the file absolutely,
        // since eviction runs in other processes, from other directories.
        let relative =
            String(repeating: "../", count: FileManager.default.currentDirectoryPath.split(separator: "/").count)
            + host.lib.dropFirst()
        try host.start(["--config", config], plugins: [relative], environment: ["TMPDIR": host.temporary])
        let key = try #require(host.storedFiles().keys.first { $0.hasSuffix("/a.so") }?.split(separator: "/").first)
        let source = try String(contentsOfFile: host.store + "/\(key)/.source", encoding: .utf8)
        #expect(source.hasPrefix("/") && source.hasSuffix("/a.so"), "\(source)")
        // Disabled, then enabled again: the same version started anew runs from the library
        // loaded (a second load would stay mapped for good), with no retired copy.
        try #"{"services": {"test.a": {"enabled": false}}}"#.write(toFile: config, atomically: true, encoding: .utf8)
        #expect(try host.ctlJSON("reload").reply["removed"] as? [String] == ["test.a"])
        try #"{"services": {"test.a": {}}}"#.write(toFile: config, atomically: true, encoding: .utf8)
        #expect(try host.ctlJSON("reload").reply["added"] as? [String] == ["test.a"])
        let mapped = try host.mapped("a.so").map(\.path)
        #expect(mapped.count == 1 && mapped[0].hasPrefix(host.store + "/"), "\(mapped)")
        let service = (try host.ctlJSON("list").reply["services"] as? [[String: Any]])?.first
        #expect(service?["retiredCopies"] as? Int == 0, "\(String(describing: service))")
        let result = host.stop()
        #expect(result.status == 0)
        // Started again: launched a second time, as a restart (no second load, no second attach).
        let launches = result.records.probe(1).filter { $0.source == "test.a" }
        #expect(launches.count == 2, "\(result.records.text)")
    }

    /// Issue 36, item 8: settings edits used to load the library again from a new private copy
    /// each time (41 mapped copies after 40 edits, `retiredCopies` 40 against the limit of 16).
    @Test(.timeLimit(.minutes(10))) func fortySettingsEdits_leaveOneMappedCopy_andNoRetiredCopy() throws {
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let config = try host.file("services.json", #"{"services": {"test.a": {"settings": {"n": 0}}}}"#)
        try host.start(["--config", config], environment: ["TMPDIR": host.temporary])
        for edit in 1...40 {
            try #"{"services": {"test.a": {"settings": {"n": \#(edit)}}}}"#.write(
                toFile: config, atomically: true, encoding: .utf8)
            let reload = try host.ctlJSON("reload").reply
            #expect(reload["replaced"] as? [String] == ["test.a"], "edit \(edit): \(reload)")
            #expect((reload["failures"] as? [String] ?? []).isEmpty, "edit \(edit): \(reload)")
        }
        let mapped = try host.mapped("a.so")
        #expect(mapped.count == 1, "\(mapped)")
        let service = (try host.ctlJSON("list").reply["services"] as? [[String: Any]])?.first
        let retired = service?["retiredCopies"] as? Int
        #expect(retired != nil && retired! <= 16, "\(String(describing: service))")
        #expect(retired == 0)
        let result = host.stop()
        #expect(result.status == 0)
        // Each edit reached the service: its last launch carried the last settings.
        let last = result.records.probe(1).last { $0.source == "test.a" }?.message ?? ""
        #expect(last.contains(#"settings={"n":40}"#), "\(last)")
    }

    /// Issue 36, item 6: another local user fills the store's file system (a small tmpfs over
    /// the store's folder, in a mount namespace of the host's own): every copy failed with
    /// ENOSPC and the host ran with no service. Now the copies go to the state directory, said
    /// once, and the plugins load.
    @Test(
        .timeLimit(.minutes(10)),
        .disabled(
            if: Sanitizer.isActive,
            "ThreadSanitizer's runtime dies of SIGBUS in its MemoryAccessRange when TMPDIR is a full tmpfs"),
        arguments: [false, true])
    func aStoreFilledByAnotherUser_fallsBackToTheStateDirectory_andThePluginsLoad(isolated: Bool) throws {
        guard let user = SecondUser.available(), FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
        else {
            print("skipped: \(SecondUser.whyUnavailable), or unshare is missing")
            return
        }
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        let config = try host.file("services.json", #"{"services": {"test.a": {"policy": "required"}}}"#)
        // The host in a mount namespace of its own, with a 256 KiB tmpfs over its TMPDIR that
        // the other user fills first (the store's folder is made, no copy fits).
        let script = try host.scratch.script(
            "in-namespace.sh",
            """
            #!/bin/sh
            exec /usr/bin/unshare -m --propagation private /bin/sh -c '
              mount -t tmpfs -o size=256k,mode=1777 servicehost-test "$0" || exit 97
              /usr/sbin/runuser -u \(user) -- /bin/sh -c "cat /dev/zero > $0/fill" 2>/dev/null
              exec "$@"' \(host.temporary) \(try Repository.product("host")) "$@"
            """)
        try host.start(
            ["--config", config] + (isolated ? ["--isolation", "process"] : []), executable: script,
            environment: ["TMPDIR": host.temporary])
        let services = try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []
        #expect(services.compactMap { $0["id"] as? String } == ["test.a", "test.b"], "\(services)")
        let state = URL(fileURLWithPath: host.stateDirectory).resolvingSymlinksInPath().path
        for name in ["a.so", "b.so"] {
            // In a worker, the worker maps the copy its host made in the store it fell back to.
            let pid =
                isolated ? services.first { $0["id"] as? String == "test.\(name.prefix(1))" }?["pid"] as? Int : nil
            let mapped = try pid.map { mappedBy(pid_t($0), name) } ?? host.mapped(name).map(\.path)
            #expect(mapped.count == 1 && mapped[0].hasPrefix(state + "/copies/"), "\(mapped)")
        }
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let fallbacks = result.records.named(.copiesStoreFallback)
        #expect(fallbacks.count == 1, "\(result.records.text)")
        #expect(fallbacks.first?.string("path") == host.store)
        #expect(fallbacks.first?.string("to") == host.stateDirectory + "/copies")
        #expect(fallbacks.first?.int("errno") == Int(ENOSPC))
        #expect(result.records.named(.loadFailed).isEmpty, "\(result.records.text)")
    }

    /// Issue 36, item 7: the version a host's workers run stays in the store while that host may
    /// restart them, though its file was replaced and another host's eviction pass runs (the
    /// host holds the copy with a shared `flock`); a restart then runs it.
    @Test(.timeLimit(.minutes(10))) func aVersionAHostHoldsForItsWorkers_survivesEviction_andARestartRunsIt() throws {
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.launch(["--isolation", "process"])
        let held = try #require(host.storedFiles().keys.first { $0.hasSuffix("/a.so") })
        // A canary: a version whose file is then removed, which any eviction pass removes.
        let canary = try RunningHost()
        try canary.probe("c", ["PROBE_ID=\"test.c\""])
        try canary.start(environment: ["TMPDIR": host.temporary])
        #expect(canary.stop().status == 0)
        try FileManager.default.removeItem(atPath: canary.lib + "/c.so")
        // The held version's file replaced (a new inode), no reload.
        try Plugins.probe(host.lib + "/.a.so.new", ["PROBE_ID=\"test.a\"", "PROBE_VERSION=\"2.0.0\""])
        #expect(rename(host.lib + "/.a.so.new", host.lib + "/a.so") == 0)
        // Another host makes a copy, so its eviction pass runs.
        let other = try RunningHost()
        try other.probe("d", ["PROBE_ID=\"test.d\""])
        try other.start(environment: ["TMPDIR": host.temporary])
        #expect(eventually { !host.storedFiles().keys.contains { $0.hasSuffix("/c.so") } }, "\(host.storedFiles())")
        #expect(other.stop().status == 0)
        #expect(host.storedFiles().keys.contains(held), "\(host.storedFiles())")
        // The worker killed: its restart runs the held version.
        let worker = try #require(
            (try host.ctlJSON("list").reply["services"] as? [[String: Any]])?.first?["pid"] as? Int)
        #expect(kill(pid_t(worker), SIGKILL) == 0)
        #expect(
            eventually {
                let service = (try? host.ctlJSON("list").reply["services"] as? [[String: Any]])?.first
                return service?["restarts"] as? Int == 1 && service?["state"] as? String == "running"
            })
        let restarted = try #require(
            (try host.ctlJSON("list").reply["services"] as? [[String: Any]])?.first?["pid"] as? Int)
        #expect(mappedBy(pid_t(restarted), "a.so") == [host.store + "/" + held], "\(held)")
        #expect(host.stop().status == 0)
    }

    @Test(.timeLimit(.minutes(10))) func aStoreRemovedWhileTheHostRuns_isMadeAgainAtTheNextCopy() throws {
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.launch()
        try FileManager.default.removeItem(atPath: host.store)
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        #expect(try host.ctlJSON("reload").reply["added"] as? [String] == ["test.b"])
        #expect(host.storedFiles().keys.contains { $0.hasSuffix("/b.so") })
        var status = stat()
        #expect(lstat(host.store, &status) == 0 && status.st_mode & 0o777 == 0o700)
        #expect(host.stop().status == 0)
    }

    @Test(.timeLimit(.minutes(10))) func aWorker_loadsFromTheStore() throws {
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.launch(["--isolation", "process"])
        #expect(try host.ctl("background").status == 0)
        #expect(host.events.last == "didEnterBackground test.a", "\(host.events)")
        // The host makes the copy (and holds it for restarts); the worker opens it from the store.
        #expect(host.storedFiles().keys.contains { $0.hasSuffix("/a.so") }, "\(host.storedFiles())")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: host.temporary).filter {
            $0.hasPrefix("servicehost-loaded-")
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
        #expect(host.stop().status == 0)
    }

    @Test(.timeLimit(.minutes(10))) func aFileChangedInPlace_getsANewKey_andItsNewCodeRunsAtTheNextStart() throws {
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let other = try Plugins.probe(host.scratch.file("other.so"), ["PROBE_ID=\"test.a\"", "PROBE_PRIORITY=7"])
        try host.launch()
        let first = try host.mapped("a.so")
        #expect(try host.priority() == 0)
        #expect(host.stop().status == 0)

        let target = host.lib + "/a.so"
        let before = inode(target)
        try Plugins.overwriteInPlace(target, with: other)
        #expect(inode(target) == before)
        try host.launch()
        #expect(try host.priority() == 7)
        let second = try host.mapped("a.so")
        #expect(second.count == 1 && second.map(\.path) != first.map(\.path), "\(first) \(second)")
        #expect(host.stop().status == 0)
    }

    @Test(.timeLimit(.minutes(10))) func aTamperedStoredCopy_isReplaced() throws {
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.launch()
        let copy = try #require(try host.mapped("a.so").first)
        #expect(host.stop().status == 0)

        // Writable again and rewritten: garbage where the ELF header was, and the size changed.
        #expect(chmod(copy.path, 0o700) == 0)
        let handle = try #require(FileHandle(forWritingAtPath: copy.path))
        try handle.write(contentsOf: Data(repeating: 0xCC, count: 64))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([1]))
        try handle.close()

        try host.launch()
        #expect(try host.ctl("background").status == 0)
        #expect(host.events.last == "didEnterBackground test.a", "\(host.events)")
        let replaced = try #require(try host.mapped("a.so").first)
        #expect(replaced.path == copy.path)
        #expect(replaced.inode != copy.inode)
        var status = stat()
        #expect(lstat(copy.path, &status) == 0 && status.st_mode & 0o777 == 0o500)
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: copy.path))
                == Data(contentsOf: URL(fileURLWithPath: host.lib + "/a.so")))
        #expect(host.stop().status == 0)
    }

    /// A stored copy is opened unseen (no `lstat` of its own): one removed since the last start
    /// (another host's eviction, a cleaner) fails its `dlopen`, and is then made again in place.
    @Test(.timeLimit(.minutes(10))) func aStoredCopyRemovedBetweenStarts_isMadeAgain() throws {
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.launch()
        let copy = try #require(try host.mapped("a.so").first)
        #expect(host.stop().status == 0)
        #expect(unlink(copy.path) == 0)

        try host.launch()
        #expect(try host.ctl("background").status == 0)
        #expect(host.events.last == "didEnterBackground test.a", "\(host.events)")
        let again = try #require(try host.mapped("a.so").first)
        #expect(again.path == copy.path)
        var status = stat()
        #expect(lstat(copy.path, &status) == 0 && status.st_mode & 0o777 == 0o500)
        #expect(host.stop().status == 0)
    }

    @Test(.timeLimit(.minutes(10)), arguments: ["writable", "symlink", "folder"])
    func anUnsafeStore_isRefusedWithItsReason_andCopiesGoToAPrivateDirectory(kind: String) throws {
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        if kind == "writable" {
            #expect(mkdir(host.store, 0o700) == 0 && chmod(host.store, 0o777) == 0)
        } else if kind == "folder" {
            // The store is fine but its folder lets anyone rename it away: no sticky bit.
            #expect(chmod(host.temporary, 0o777) == 0)
        } else {
            let elsewhere = try host.scratch.folder("elsewhere", mode: 0o700)
            try FileManager.default.createSymbolicLink(atPath: host.store, withDestinationPath: elsewhere)
        }
        try host.launch()
        let mapped = try host.mapped("a.so")
        #expect(mapped.count == 1 && mapped[0].path.hasPrefix(host.temporary + "/servicehost-loaded-"), "\(mapped)")
        #expect(try host.ctl("background").status == 0)
        let result = host.stop()
        #expect(result.status == 0)
        let refused = result.records.named(.copiesStoreRefused)
        #expect(refused.count == 1, "\(result.records.text)")
        #expect(refused.first?.string("path") == host.store)
        let reason = refused.first?.string("reason") ?? ""
        switch kind {
        case "writable": #expect(reason == "it is writable by other users (mode 777)")
        case "symlink": #expect(reason == "it is a symlink")
        default: #expect(reason.hasPrefix("its folder \(host.temporary) can be changed by other users"), "\(reason)")
        }
        // The private directory goes at exit.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: host.temporary).filter {
            $0.hasPrefix("servicehost-loaded-")
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test(.timeLimit(.minutes(10))) func eviction_removesTheVersionOfAFileThatChanged() throws {
        let host = try StoreHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.launch()
        let oldA = try #require(host.storedFiles().keys.first { $0.hasSuffix("/a.so") })
        let b = try #require(host.storedFiles().keys.first { $0.hasSuffix("/b.so") })
        #expect(host.stop().status == 0)

        // A rebuild: a new file at the path, so a new key.
        try FileManager.default.removeItem(atPath: host.lib + "/a.so")
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_PRIORITY=7"])
        try host.launch()
        #expect(try host.priority() == 7)
        let evicted = eventually(within: 30) { host.storedFiles()[oldA] == nil }
        #expect(evicted, "\(host.storedFiles())")
        // The unchanged file's copy and the new version stay.
        #expect(host.storedFiles()[b] != nil)
        #expect(host.storedFiles().keys.contains { $0.hasSuffix("/a.so") && $0 != oldA })
        #expect(host.stop().status == 0)
    }
}

/// The files whose name ends in `/NAME` that process `pid` maps (a worker's).
func mappedBy(_ pid: pid_t, _ name: String) -> [String] {
    guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { return [] }
    defer { try? handle.close() }
    let maps = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
    var seen: [String] = []
    for line in maps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if fields.count >= 6, fields[5].hasSuffix("/" + name), !seen.contains(String(fields[5])) {
            seen.append(String(fields[5]))
        }
    }
    return seen
}
