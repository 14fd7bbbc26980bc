import Foundation
import TestSupport
import Testing

/// The registry cache (issue 13): the real `host` and `host inspect` on real plugins, with
/// `--log-level debug` so the `registry.used` record says how many files came from the cache.
@Suite(.timeLimit(.minutes(20))) struct RegistryCacheTests {
    /// Starts the host, stops it, and returns its log records.
    private func run(_ host: RunningHost, _ extra: [String] = []) throws -> [LogRecord] {
        try host.start(["--log-level", "debug"] + extra)
        return host.stop().records
    }

    private func services(_ records: [LogRecord]) -> [String] {
        records.named(.hostReady).first?.strings("services") ?? []
    }

    private func counts(_ records: [LogRecord]) -> (cached: Int?, read: Int?) {
        let used = records.named(.registryUsed).first
        return (used?.int("cached"), used?.int("read"))
    }

    private func registryPath(_ host: RunningHost) -> String { host.stateDirectory + "/registry.bin" }

    @Test func cachedStart_startsTheSameServicesAsAnUncachedOne() throws {
        let host = try RunningHost()
        for name in ["a", "b", "c"] { try host.probe(name, ["PROBE_ID=\"test.\(name)\""]) }
        let first = try run(host)
        #expect(counts(first) == (0, 3))
        #expect(FileManager.default.fileExists(atPath: registryPath(host)))
        let cached = try run(host)
        #expect(counts(cached) == (3, 0))
        #expect(services(cached) == ["test.a", "test.b", "test.c"])
        #expect(services(cached) == services(first))

        // Bypassed: every file read, no registry.used record, the registry left as it was.
        let before = try Data(contentsOf: URL(fileURLWithPath: registryPath(host)))
        try FileManager.default.removeItem(atPath: host.lib + "/c.so")
        let uncached = try run(host, ["--no-registry-cache"])
        #expect(services(uncached) == ["test.a", "test.b"])
        #expect(uncached.named(.registryUsed).isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: registryPath(host))) == before)
    }

    /// A host with `test.a` in its `lib` and `test.b` in a folder `other`, and `run`, which starts
    /// it on one plugin folder, stops it and returns its log.
    private func twoDirectories() throws -> (host: RunningHost, other: String, run: (String) throws -> [LogRecord]) {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let other = try host.scratch.folder("other")
        try Plugins.probe(other + "/b.so", ["PROBE_ID=\"test.b\""])
        return (
            host, other,
            { plugins in
                try host.start(["--log-level", "debug"], plugins: [plugins])
                return host.stop().records
            }
        )
    }

    @Test func hostsOfOtherDirectories_keepEachOthersEntries_andAGoneFileIsDropped() throws {
        let (host, other, run) = try twoDirectories()
        #expect(counts(try run(host.lib)) == (0, 1))
        #expect(counts(try run(other)) == (0, 1))
        // The host of `other` kept lib's entry: back on lib, its file comes from the cache.
        let back = try run(host.lib)
        #expect(counts(back) == (1, 0))
        #expect(services(back) == ["test.a"])
        #expect(counts(try run(other)) == (1, 0))

        // A file gone from a scanned directory loses its entry; other directories keep theirs.
        try FileManager.default.removeItem(atPath: other + "/b.so")
        try Plugins.probe(other + "/c.so", ["PROBE_ID=\"test.c\""])
        #expect(counts(try run(other)) == (0, 1))
        let registry = try Data(contentsOf: URL(fileURLWithPath: registryPath(host)))
        // A group names its directory once, then its files by name.
        #expect(registry.range(of: Data("b.so".utf8)) == nil)
        #expect(registry.range(of: Data("c.so".utf8)) != nil)
        #expect(registry.range(of: Data((host.lib + "/").utf8)) != nil && registry.range(of: Data("a.so".utf8)) != nil)
        #expect(counts(try run(host.lib)) == (1, 0))
    }

    /// Decision: a corrupt group costs only its own directory. A host of another directory
    /// neither checks nor notices it; the host of that directory logs it once and reads its files
    /// again, and the other directories' groups stay (byte for byte) through the rewrite.
    @Test func corruptGroupOfAnotherDirectory_costsOnlyThatDirectory() throws {
        let (host, other, run) = try twoDirectories()
        _ = try run(host.lib)
        _ = try run(other)
        // One byte of other's group (its first entry's device number) flipped.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: registryPath(host))))
        let name = Data((other + "/").utf8)
        // The last mention is the group's own (the header's directory of the groups names it first).
        let at = try #require(Data(bytes).range(of: name, options: .backwards)).upperBound + 4 + 4 + 4 + 1
        bytes[at] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: registryPath(host)))

        let lib = try run(host.lib)
        #expect(lib.named(.registryRebuilt).isEmpty)
        #expect(counts(lib) == (1, 0))
        let damaged = try run(other)
        let rebuilt = damaged.named(.registryRebuilt)
        #expect(rebuilt.count == 1, "\(rebuilt)")
        #expect(rebuilt.first?.string("reason") == "corrupt or truncated: checksum mismatch in the group of \(other)/")
        #expect(counts(damaged) == (0, 1))
        #expect(services(damaged) == ["test.b"])
        // Both groups sound again: lib's survived other's rewrite.
        #expect(counts(try run(host.lib)) == (1, 0))
        let again = try run(other)
        #expect(counts(again) == (1, 0))
        #expect(again.named(.registryRebuilt).isEmpty)
    }

    /// A registry cut short (its last group, `other`'s, runs past the file's end) is read by
    /// groups too: lib's host is served from its whole group without a word; other's host logs
    /// the cut once, reads its file, and the rewrite makes both sound again.
    @Test func truncatedRegistry_costsOnlyTheGroupsItCut() throws {
        let (host, other, run) = try twoDirectories()
        _ = try run(host.lib)
        _ = try run(other)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: registryPath(host))))
        // Directory order: lib's group, then other's (the last one), which loses its last 9 bytes.
        try #require(host.lib < other)
        try Data(bytes.dropLast(9)).write(to: URL(fileURLWithPath: registryPath(host)))

        let lib = try run(host.lib)
        #expect(lib.named(.registryRebuilt).isEmpty)
        #expect(counts(lib) == (1, 0))
        #expect(services(lib) == ["test.a"])
        let cut = try run(other)
        let rebuilt = cut.named(.registryRebuilt)
        #expect(rebuilt.count == 1, "\(rebuilt)")
        #expect(
            rebuilt.first?.string("reason")?.hasPrefix("corrupt or truncated: cut short in the group of \(other)/")
                == true, "\(rebuilt)")
        #expect(counts(cut) == (0, 1))
        #expect(services(cut) == ["test.b"])
        #expect(counts(try run(host.lib)) == (1, 0))
        let again = try run(other)
        #expect(counts(again) == (1, 0))
        #expect(again.named(.registryRebuilt).isEmpty)
    }

    @Test func changedFile_sameSizeAndModificationTime_isReadAgain() throws {
        let host = try RunningHost()
        try host.probe("x", ["PROBE_ID=\"test.old\""])
        let other = host.scratch.file("new.so")
        try Plugins.probe(other, ["PROBE_ID=\"test.new\""])
        let path = host.lib + "/x.so"
        let size = { (p: String) in (try FileManager.default.attributesOfItem(atPath: p)[.size] as? Int) ?? -1 }
        try #require(try size(path) == size(other), "the two probes must have the same size for this test")
        let first = try run(host)
        #expect(services(first) == ["test.old"])
        // A file met for the first time is not a changed one.
        #expect(first.named(.registryChanged).isEmpty)

        // Rewritten in place (same inode, same size), its modification time put back: only the
        // change time tells, and the registry must not answer with test.old's metadata.
        var before = stat()
        try #require(stat(path, &before) == 0)
        try Data(contentsOf: URL(fileURLWithPath: other)).write(to: URL(fileURLWithPath: path))
        var times = [before.st_atim, before.st_mtim]
        try #require(utimensat(AT_FDCWD, path, &times, 0) == 0)
        var after = stat()
        try #require(stat(path, &after) == 0)
        try #require(after.st_ino == before.st_ino && after.st_size == before.st_size)
        try #require(after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)

        let records = try run(host)
        #expect(services(records) == ["test.new"])
        #expect(counts(records) == (0, 1))
        // Detected and logged once, naming the file; the next start finds the new entry.
        #expect(records.named(.registryChanged).map { $0.string("path") } == [path])
        let again = try run(host)
        #expect(counts(again) == (1, 0))
        #expect(again.named(.registryChanged).isEmpty)
        let inspected = try Command.run(
            try Repository.product("host"), ["inspect", "--state-dir", host.stateDirectory, path])
        #expect(inspected.stdout.contains("service test.new"), "\(inspected.stdout)")
    }

    /// What is written over a good registry.bin, and the reason the host must give.
    static let damage: [(name: String, reason: String, damage: @Sendable ([UInt8]) -> [UInt8])] = [
        (
            "corrupt", "corrupt or truncated: checksum mismatch",
            { bytes in
                var bytes = bytes
                bytes[bytes.count / 2] ^= 0x20
                return bytes
            }
        ),
        ("truncated", "corrupt or truncated", { Array($0.prefix($0.count - 9)) }),
        (
            "a group longer than the file", "corrupt or truncated: cut short in the group of ",
            { groupLength(0xFFFF_FFFF, in: $0) }
        ),
        ("not a registry", "not a registry file (no SHRC header)", { _ in Array("garbage".utf8) }),
        (
            "another version", "written by servicehost 0.0.0-other in format 4",
            { bytes in
                // The host version follows the magic, the format (2 bytes), the header's length
                // (4 bytes) and its own length (4 bytes).
                var bytes = bytes
                let count = Int(bytes[10]) | Int(bytes[11]) << 8
                let version = Array("servicehost 0.0.0-other".utf8)
                bytes.replaceSubrange(10..<(14 + count), with: [UInt8(version.count), 0, 0, 0] + version)
                return bytes
            }
        ),
    ]

    /// `bytes` (a registry.bin) with its first group's length set to `length` and the header's
    /// checksum made right again: a header that reads as sound.
    static func groupLength(_ length: UInt32, in bytes: [UInt8]) -> [UInt8] {
        func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        var bytes = bytes
        // Magic (4), format (2), header length (4), version (4 + n), group count (4), then the
        // first group's directory (4 + d), offset (8) and length (4); the header's checksum last.
        let headerLength = u32(6)
        let directoryAt = 14 + u32(10) + 4
        let lengthAt = directoryAt + 4 + u32(directoryAt) + 8
        for i in 0..<4 { bytes[lengthAt + i] = UInt8(truncatingIfNeeded: length >> UInt32(8 * i)) }
        let sum = checksum(Array(bytes[..<(headerLength - 8)]))
        for i in 0..<8 { bytes[headerLength - 8 + i] = UInt8(truncatingIfNeeded: sum >> UInt64(8 * i)) }
        return bytes
    }

    /// A group's length is the file's word: one that says 4 GiB is refused before it is read
    /// (the reader reserved it first: under a memory limit, `host inspect` aborted).
    @Test func aGroupLongerThanTheFile_isRefusedWithoutReservingIt() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        _ = try run(host)
        let good = Array(try Data(contentsOf: URL(fileURLWithPath: registryPath(host))))
        try Data(Self.groupLength(0xFFFF_FFFF, in: good)).write(to: URL(fileURLWithPath: registryPath(host)))
        // 2 GiB of address space: the host's own needs fit, a 4 GiB reservation does not. (Not
        // under a sanitizer, whose runtime maps terabytes of shadow memory and cannot start
        // inside any such limit: there the file is still refused and the service listed.)
        let limit = Sanitizer.isActive ? "" : "ulimit -v 2000000 && "
        let limited = try Command.run(
            "/bin/bash",
            [
                "-c", limit + "exec \"$0\" inspect --state-dir \"$1\" \"$2\"", try Repository.product("host"),
                host.stateDirectory, host.lib,
            ])
        #expect(limited.status == 0, "\(limited.stderr)")
        #expect(limited.stdout.contains("service test.a"), "\(limited.stdout)")
    }

    @Test(arguments: damage.indices)
    func damagedRegistry_isRebuiltAndLoggedOnce_andTheHostServes(index: Int) throws {
        let (name, reason, damage) = Self.damage[index]
        let host = try RunningHost()
        for id in ["a", "b"] { try host.probe(id, ["PROBE_ID=\"test.\(id)\""]) }
        _ = try run(host)
        let good = Array(try Data(contentsOf: URL(fileURLWithPath: registryPath(host))))
        try Data(damage(good)).write(to: URL(fileURLWithPath: registryPath(host)))

        let records = try run(host)
        let rebuilt = records.named(.registryRebuilt)
        #expect(rebuilt.count == 1, "\(name): \(rebuilt)")
        #expect(rebuilt.first?.string("reason")?.hasPrefix(reason) == true, "\(name): \(rebuilt)")
        #expect(rebuilt.first?.string("path") == registryPath(host))
        #expect(services(records) == ["test.a", "test.b"], "\(name)")
        #expect(counts(records) == (0, 2), "\(name)")

        // Rebuilt: the next start uses it and logs nothing.
        let next = try run(host)
        #expect(next.named(.registryRebuilt).isEmpty, "\(name)")
        #expect(counts(next) == (2, 0), "\(name)")
    }

    @Test func inspect_usesTheHostsRegistry_andNoCacheBypassesIt() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let path = host.lib + "/a.so"
        // A registry whose entry for a.so (its real key) says it has no entry symbol: only a
        // reader of the cache can say so, since the file has one.
        try FileManager.default.createDirectory(
            atPath: host.stateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data(try Self.registry(claimingNoEntryFor: path)).write(to: URL(fileURLWithPath: registryPath(host)))
        let hostBinary = try Repository.product("host")

        let cached = try Command.run(hostBinary, ["inspect", "--state-dir", host.stateDirectory, path])
        #expect(cached.status == 1)
        #expect(cached.stdout.contains("not loadable"), "\(cached.stdout)")
        let bypassed = try Command.run(hostBinary, ["inspect", "--no-cache", "--state-dir", host.stateDirectory, path])
        #expect(bypassed.status == 0, "\(bypassed.stdout)")
        #expect(bypassed.stdout.contains("service test.a"))

        // The host: the same entry refuses the file; --no-registry-cache reads it and starts it.
        #expect(services(try run(host, ["--no-registry-cache"])) == ["test.a"])
        let records = try run(host)
        #expect(services(records) == [])
        #expect(counts(records) == (1, 0))
    }

    /// A registry.bin (RegistryFile's layout, format 4) with one entry for `path`, keyed by its
    /// real `stat`, saying the file defines no entry symbol.
    static func registry(claimingNoEntryFor path: String) throws -> [UInt8] {
        var status = stat()
        guard stat(path, &status) == 0 else { throw TestFailure("stat \(path)") }
        func put(_ value: UInt64, _ count: Int, _ bytes: inout [UInt8]) {
            for i in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * i))) }
        }
        func blob(_ text: String, _ bytes: inout [UInt8]) {
            put(UInt64(text.utf8.count), 4, &bytes)
            bytes += Array(text.utf8)
        }
        let slash = path.lastIndex(of: "/")!
        var body: [UInt8] = []
        blob(String(path[...slash]), &body)
        put(1, 4, &body)
        blob(String(path[path.index(after: slash)...]), &body)
        put(UInt64(status.st_dev), 8, &body)
        put(UInt64(status.st_ino), 8, &body)
        put(UInt64(status.st_size), 8, &body)
        put(UInt64(status.st_mtim.tv_sec) &* 1_000_000_000 &+ UInt64(status.st_mtim.tv_nsec), 8, &body)
        put(UInt64(status.st_ctim.tv_sec) &* 1_000_000_000 &+ UInt64(status.st_ctim.tv_nsec), 8, &body)
        body += [0, 0]  // no entry symbol, no section
        let version = try Command.run(try Repository.product("host"), ["--version"]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let directory = String(path[...slash])
        // Magic, format, header length, version, group count, one group's line, checksum.
        let headerLength = 4 + 2 + 4 + 4 + version.utf8.count + 4 + 4 + directory.utf8.count + 8 + 4 + 8
        var bytes: [UInt8] = Array("SHRC".utf8)
        put(4, 2, &bytes)
        put(UInt64(headerLength), 4, &bytes)
        blob(version, &bytes)
        put(1, 4, &bytes)
        blob(directory, &bytes)
        put(UInt64(headerLength), 8, &bytes)
        put(UInt64(12 + body.count), 4, &bytes)
        put(checksum(bytes), 8, &bytes)
        put(UInt64(body.count), 4, &bytes)
        put(checksum(body), 8, &bytes)
        return bytes + body
    }

    /// The registry's checksum: FNV-1a over little-endian 8-byte words, then the tail bytes.
    static func checksum(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let words = bytes.count / 8
        for index in 0..<words {
            var word: UInt64 = 0
            for byte in 0..<8 { word |= UInt64(bytes[index * 8 + byte]) << UInt64(8 * byte) }
            hash = (hash ^ word) &* 0x100_0000_01b3
        }
        for byte in bytes[(words * 8)...] { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}
