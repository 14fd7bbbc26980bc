import Foundation
import TestSupport
import Testing

/// Plugin files changed, swapped, symlinked, oddly named or oversized under a running host
/// (issue 18): the host never runs code it did not inspect, never runs stale code, and
/// refuses what it must with a reason naming the file and the rule.
@Suite struct HostileFilesTests {
    /// `path` as the host names it: symlinks resolved.
    private func resolved(_ path: String) -> String { URL(fileURLWithPath: path).resolvingSymlinksInPath().path }

    private func inode(_ path: String) -> UInt64 {
        var status = stat()
        return stat(path, &status) == 0 ? UInt64(status.st_ino) : 0
    }

    private func services(_ host: RunningHost) throws -> [[String: Any]] {
        try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []
    }

    @Test(.timeLimit(.minutes(10))) func aFileRewrittenInPlace_neverChangesRunningCode_andReloadLoadsIt() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        // Another build, laid out differently (more code), to land in the running one's pages.
        let other = try Plugins.probe(
            host.scratch.file("other.so"),
            ["PROBE_ID=\"test.a\"", "PROBE_PRIORITY=7", "PROBE_CHECK_NUL=1", "PROBE_URL_CLAIM=\"other\""])
        try host.start()
        let target = host.lib + "/a.so"
        let before = inode(target)
        try Plugins.overwriteInPlace(target, with: other)
        #expect(inode(target) == before)
        // The running copy is the one inspected: every event still reaches it, the host lives.
        for command in ["background", "foreground", "background"] {
            #expect(try host.ctl(command).status == 0, "\(command)")
        }
        #expect(host.events.last == "didEnterBackground test.a", "\(host.events)")
        #expect(try services(host).first?["priority"] as? Int == 0)
        // reload loads the new content, from a new copy.
        let reload = try host.ctlJSON("reload").reply
        #expect(reload["replaced"] as? [String] == ["test.a"], "\(reload)")
        #expect(try services(host).first?["priority"] as? Int == 7)
        #expect(try host.ctl("foreground").status == 0)
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test(.timeLimit(.minutes(10))) func aPathReusedAfterARemoval_runsTheNewPlugin_notTheOldCode() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start()
        let target = host.lib + "/a.so"
        try FileManager.default.removeItem(atPath: target)
        #expect(try host.ctlJSON("reload").reply["removed"] as? [String] == ["test.a"])
        // A different plugin at the same path.
        try Plugins.probe(target, ["PROBE_ID=\"test.b\""])
        let reload = try host.ctlJSON("reload").reply
        #expect(reload["added"] as? [String] == ["test.b"], "\(reload)")
        #expect((reload["failures"] as? [String] ?? []).isEmpty, "\(reload)")
        #expect(try services(host).compactMap { $0["id"] as? String } == ["test.b"])
        try host.ctl("background")
        let result = host.stop()
        // What list shows is what runs: the new code answers, the old never hears again.
        #expect(result.records.messages(from: "test.b").contains { $0.contains("event") }, "\(result.records.text)")
        #expect(host.events.last(where: { $0.hasPrefix("didEnterBackground") }) == "didEnterBackground test.b")
    }

    @Test(.timeLimit(.minutes(10))) func aSymlinkIntoAWorldWritableFolder_isRefusedNamingTheFolder() throws {
        let host = try RunningHost()
        try host.probe("good", ["PROBE_ID=\"test.good\""])
        let open = try host.scratch.folder("open", mode: 0o777)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: open)  // past the umask
        try Plugins.probe(open + "/evil.so", ["PROBE_ID=\"test.evil\""])
        try FileManager.default.createSymbolicLink(
            atPath: host.lib + "/evil.so", withDestinationPath: open + "/evil.so")
        try host.start()
        #expect(try services(host).compactMap { $0["id"] as? String } == ["test.good"])
        let result = host.stop()
        let failure = result.records.named(.loadFailed).first { $0.string("path") == host.lib + "/evil.so" }
        #expect(
            failure?.string("reason")
                == "refused: directory \(resolved(open)) is writable by other users (mode 0777), on the path of file"
                + " \(resolved(open))/evil.so (fix the permissions, or pass --allow-insecure-plugins)",
            "\(result.records.text)")
    }

    /// Another local user who owns the directory a symlink points into could swap the library.
    @Test(.timeLimit(.minutes(10))) func aSymlinkIntoAnotherUsersFolder_isRefused() throws {
        guard let user = SecondUser.available() else {
            print("skipped: \(SecondUser.whyUnavailable)")
            return
        }
        let host = try RunningHost()
        try host.probe("good", ["PROBE_ID=\"test.good\""])
        let built = try Plugins.probe(host.scratch.file("theirs.so"), ["PROBE_ID=\"test.theirs\""])
        // The other user makes a folder in /tmp (sticky); the library in it is root's, but its
        // folder's owner could rename another over it at any time.
        let theirs = "/tmp/servicehost-\(user)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? Command.run("/bin/rm", ["-rf", theirs]) }
        let make = try Command.run(
            "/bin/sh",
            ["-c", "/usr/sbin/runuser -u \(user) -- mkdir -m 755 \(theirs) && cp \(built) \(theirs)/theirs.so"])
        #expect(make.status == 0, "\(make.stderr)")
        try FileManager.default.createSymbolicLink(
            atPath: host.lib + "/theirs.so", withDestinationPath: theirs + "/theirs.so")
        try host.start()
        #expect(try services(host).compactMap { $0["id"] as? String } == ["test.good"])
        let result = host.stop()
        let reason =
            result.records.named(.loadFailed).first { $0.string("path") == host.lib + "/theirs.so" }?.string("reason")
            ?? ""
        let uid = getpwnam(user).map { $0.pointee.pw_uid } ?? 0
        #expect(
            reason
                == "refused: directory \(theirs) is owned by uid \(uid), neither root nor the host's user (uid 0), on the path"
                + " of file \(theirs)/theirs.so (fix the permissions, or pass --allow-insecure-plugins)",
            "\(result.records.text)")
    }

    /// Issue 36, item 11: `plugins/libX.so → shared/x.so → lib/other.so` with `shared/` 0777.
    /// The last file's directories are safe, but whoever can write `shared/` can point its link
    /// at a library of their own (another user made the root host run `test.other 9.0.0`): the
    /// file is refused, naming the link and its directory. As root, another user then swaps the
    /// link, and the host still runs nothing of theirs.
    @Test(.timeLimit(.minutes(10))) func aSymlinkChainThroughAWorldWritableFolder_isRefusedNamingTheLink() throws {
        let host = try RunningHost()
        try host.probe("good", ["PROBE_ID=\"test.good\""])
        // In /tmp (root-owned and sticky, so safe itself), where another user can reach it.
        let shared = "/tmp/servicehost-shared-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        #expect(mkdir(shared, 0o777) == 0 && chmod(shared, 0o777) == 0)  // past the umask
        defer { try? FileManager.default.removeItem(atPath: shared) }
        let real = try host.scratch.folder("reallib")
        try Plugins.probe(real + "/other.so", ["PROBE_ID=\"test.other\""])
        try FileManager.default.createSymbolicLink(atPath: shared + "/x.so", withDestinationPath: real + "/other.so")
        try FileManager.default.createSymbolicLink(atPath: host.lib + "/libX.so", withDestinationPath: shared + "/x.so")
        if let user = SecondUser.available() {
            // Another user's library, linked from the folder they can write.
            let theirs = try Plugins.probe(
                host.scratch.file("theirs.so"), ["PROBE_ID=\"test.other\"", "PROBE_VERSION=\"9.0.0\""])
            let swap = try Command.run(
                "/usr/sbin/runuser", ["-u", user, "--", "/bin/ln", "-sfn", theirs, shared + "/x.so"])
            #expect(swap.status == 0, "\(swap.stderr)")
        }
        try host.start()
        #expect(try services(host).compactMap { $0["id"] as? String } == ["test.good"])
        let result = host.stop()
        let failure = result.records.named(.loadFailed).first { $0.string("path") == host.lib + "/libX.so" }
        #expect(
            failure?.string("reason")
                == "refused: directory \(resolved(shared)) is writable by other users (mode 0777), which holds the link"
                + " \(resolved(shared))/x.so on the way to file \(host.lib)/libX.so (fix the permissions, or pass"
                + " --allow-insecure-plugins)",
            "\(result.records.text)")
    }

    @Test(.timeLimit(.minutes(10))) func aPluginNamedWithBytesThatAreNotUTF8_loads_andIsShownEscaped() throws {
        let host = try RunningHost()
        let built = try Plugins.probe(host.scratch.file("built.so"), ["PROBE_ID=\"test.raw\""])
        // lib/<0xff>.so
        let name: [CChar] =
            Array(host.lib.utf8CString.dropLast()) + [CChar(bitPattern: 0x2F), CChar(bitPattern: 0xFF)]
            + ".so".utf8CString
        #expect(rename(built, name) == 0)
        let shown = host.lib + "/\\xff.so"
        try host.start()
        let listed = try services(host)
        #expect(listed.compactMap { $0["id"] as? String } == ["test.raw"])
        #expect(listed.first?["path"] as? String == shown)
        let inspect = try Command.run(try Repository.product("host"), ["inspect", "--json", host.lib])
        #expect(inspect.stdout.contains(#"/\\xff.so","valid":true"#), "\(inspect.stdout)")
        _ = host.stop()
    }
}

extension HostileFilesTests {
    /// Issue 36 item 14: a leftover sentinel (a damaged file, or one written by hand) whose start
    /// time no host wrote says so, rather than printing a date of year 109626219.
    @Test(.timeLimit(.minutes(10))) func aLeftoverSentinelWithAnOutOfRangeTime_saysInvalidTime() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        _ = try host.scratch.folder("state", mode: 0o700)
        // The layout of Sources/HostCore/Watchdog/Sentinel.swift: magic, version 1, pid, start
        // time, no call in progress.
        var bytes = [UInt8](repeating: 0, count: 65536)
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            withUnsafeBytes(of: value.littleEndian) {
                for (index, byte) in $0.enumerated() { bytes[offset + index] = byte }
            }
        }
        put(UInt32(0x4E53_4853), at: 0)
        put(UInt32(1), at: 4)
        put(Int32(4242), at: 8)
        put(Int64(3_459_459_459_459_459_459), at: 16)
        put(Int64(-1), at: 24)
        _ = try host.scratch.write("state/sentinel", bytes, mode: 0o600)
        try host.start()
        let records = host.stop().records
        let unclean = records.named(.sentinelUncleanExit)
        #expect(
            unclean.map { [$0.int("pid").map(String.init), $0.string("started")] } == [
                ["4242", "invalid time (3459459459459459459)"]
            ], "\(records.text)")
        #expect(unclean.first?.message.contains("started invalid time (3459459459459459459)") == true)
    }

    /// C source of a plugin whose metadata declares `services` services, the first making
    /// `claims` URL claims; its entry answers nothing (only inspection reads it).
    static func crafted(services: Int, claims: Int) -> String {
        var source = """
            #include <servicehost.h>
            SH_META_ATTRIBUTES static const sh_meta_plugin plugin_meta = {
                {sizeof(sh_meta_plugin), SH_META_PLUGIN_VERSION, SH_META_MAGIC, SH_META_KIND_PLUGIN},
                SH_ABI_VERSION, SH_ABI_VERSION_MIN, "c", ""};
            SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) { (void)offer; return 0; }

            """
        for index in 0..<services {
            source += "SH_SERVICE_METADATA(s\(index), \"test.s\(index)\", \"S\", \"1.0\", SH_EVENTS_LIFECYCLE, 0);\n"
        }
        for index in 0..<claims {
            source += "SH_CLAIM_METADATA_ID(c\(index), \"test.s0\", SH_CLAIM_URL, \"scheme\(index)\");\n"
        }
        return source
    }

    private func inspectCrafted(services: Int, claims: Int) throws -> [String: Any] {
        let scratch = try Scratch()
        let source = try scratch.write("crafted.c", Array(Self.crafted(services: services, claims: claims).utf8))
        let plugin = try Command.compileC(source, to: scratch.file("crafted.so"))
        let result = try Command.run(try Repository.product("host"), ["inspect", "--json", plugin])
        let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        return parsed?.first ?? ["raw": result.stdout + result.stderr]
    }

    @Test(.timeLimit(.minutes(10))) func servicesPerFile_areLimited_atTheDocumentedLimit() throws {
        let atLimit = try inspectCrafted(services: 256, claims: 0)
        #expect(atLimit["valid"] as? Bool == true, "\(atLimit)")
        #expect((atLimit["services"] as? [Any])?.count == 256)
        let over = try inspectCrafted(services: 257, claims: 0)
        #expect(over["valid"] as? Bool == false)
        #expect(
            over["reason"] as? String == "invalid metadata: more than 256 service records (the limit per plugin file)",
            "\(over)")
    }

    @Test(.timeLimit(.minutes(10))) func claimsPerService_areLimited_atTheDocumentedLimit() throws {
        let atLimit = try inspectCrafted(services: 1, claims: 256)
        #expect(atLimit["valid"] as? Bool == true, "\(atLimit)")
        #expect(((atLimit["services"] as? [[String: Any]])?.first?["urls"] as? [Any])?.count == 256)
        let over = try inspectCrafted(services: 1, claims: 257)
        #expect(over["valid"] as? Bool == false)
        #expect(
            over["reason"] as? String
                == "invalid metadata: service test.s0 makes more than 256 claims (the limit per service)",
            "\(over)")
    }
}

/// A second local user for the tests that need another owner: `servicehost-other`, created
/// with `useradd` when the tests run as root and it is missing.
enum SecondUser {
    static let name = "servicehost-other"

    static var whyUnavailable: String {
        geteuid() != 0 ? "not root: cannot create or act as a second user" : "useradd or runuser is missing"
    }

    /// The user's name, or nil when the machine does not allow one.
    static func available() -> String? {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") else { return nil }
        if getpwnam(name) != nil { return name }
        guard
            let made = try? Command.run(
                "/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/bin/sh", name]),
            made.status == 0 || getpwnam(name) != nil
        else { return nil }
        return name
    }
}
