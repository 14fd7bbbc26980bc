import Foundation
import TestSupport
import Testing

/// A deploy links an unchanged file into the new generation, which gives it a new inode change
/// time and so a new identity; the host carries what it knew of the file to that identity
/// (`CarriedIdentity`). With the real host, real signed plugins and the real `minisign`; without
/// libcrypto a file checked anew is refused (`crypto-unavailable`), so whatever loads then was let
/// through by a kept verdict.
@Suite(.timeLimit(.minutes(10))) struct DeployIdentityTests {
    /// A folder of its own for the host's `TMPDIR` (on /dev/shm when there is one): its store of
    /// copies and its verdict file, which no other test's host shares.
    private final class PrivateTemporary {
        let path: String
        init() throws {
            let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
            var template = Array((base + "/servicehost-test-carry-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed: errno \(errno)") }
            path = String(cString: made)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// The inodes of the stored copies (every file but the dot files, in every KEY folder).
        func copies() throws -> Set<UInt64> {
            let store = path + "/servicehost-copies-\(geteuid())"
            var inodes: Set<UInt64> = []
            for key in try FileManager.default.contentsOfDirectory(atPath: store) where !key.hasPrefix(".") {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: store + "/" + key)) ?? []
                where !name.hasPrefix(".") {
                    var status = stat()
                    if lstat(store + "/" + key + "/" + name, &status) == 0 { inodes.insert(UInt64(status.st_ino)) }
                }
            }
            return inodes
        }
    }

    /// Rewrites one byte of `path` in place (same inode, same size), then puts its modification
    /// time back: only its change time tells it changed.
    private func changeInPlace(_ path: String) throws {
        var before = stat()
        guard stat(path, &before) == 0, chmod(path, 0o644) == 0 else { throw TestFailure("stat/chmod \(path)") }
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        try file.seek(toOffset: UInt64(before.st_size - 1))
        let last = try #require(try file.read(upToCount: 1))
        try file.seek(toOffset: UInt64(before.st_size - 1))
        try file.write(contentsOf: Data([last[0] ^ 1]))
        try file.close()
        var times = [before.st_atim, before.st_mtim]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0, chmod(path, 0o444) == 0 else {
            throw TestFailure("utimensat/chmod \(path)")
        }
        var after = stat()
        #expect(stat(path, &after) == 0 && after.st_size == before.st_size && after.st_ino == before.st_ino)
        #expect(after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)
    }

    @Test func unchangedSignedPlugins_deployedAgain_needNoHashInspectionOrCopy_butOneChangedInPlaceIsCheckedAnew()
        throws
    {
        guard Minisign.installed != nil else { return }
        let host = try IsolatedHost()
        let key = try Minisign.generate("release", in: try host.scratch.folder("keys", mode: 0o700))
        for name in ["a", "b"] {
            try host.probe(name, ["PROBE_ID=\"test.\(name)\""])
            try Minisign.sign(host.lib + "/\(name).so", with: key)
        }
        let config = try host.file(
            "services.json", #"{"signatures": "required", "trustedKeys": ["\#(try key.publicKey)"]}"#)
        let temporary = try PrivateTemporary()
        let withCrypto = ["TMPDIR": temporary.path]
        let withoutCrypto = ["TMPDIR": temporary.path, "SERVICEHOST_LIBCRYPTO": "libcrypto-missing.so.3"]
        let arguments = ["--config", config, "--log-level", "debug"]
        let current = { try? String(contentsOfFile: host.stateDirectory + "/generations/current", encoding: .utf8) }

        // Generation 1: the files copied from lib and checked (with libcrypto).
        try host.start(arguments, environment: withCrypto)
        #expect(try host.ctlJSON("deploy", host.lib, "--probation", "0.2").reply["generation"] as? Int == 1)
        #expect(eventually { current() == "1\n" })
        host.stop()

        // Generations 2 and 3, the same files: linked to the one in force, and neither checked
        // nor inspected nor copied again (without libcrypto a check would refuse the set). Each
        // runs after a restart; generation 3's acceptance prunes generation 1 (kept: the current
        // and the previous one), whose unlinks change the shared inodes' change time too.
        try host.start(arguments, environment: withoutCrypto)
        let copies = try temporary.copies()
        #expect(copies.count >= 2, "\(copies)")
        for generation in [2, 3] {
            let (status, reply) = try host.ctlJSON("deploy", host.lib, "--probation", "0.2")
            #expect(status == 0 && reply["generation"] as? Int == generation, "\(reply)")
            #expect(eventually { current() == "\(generation)\n" })
            host.stop()
            try host.start(arguments + ["--keep-generations", "0"], environment: withoutCrypto)
            for id in ["test.a", "test.b"] {
                let service = try host.service(id)
                #expect(service?["state"] as? String == "running", "\(id): \(service ?? [:])")
                let path = service?["path"] as? String ?? ""
                #expect(path.hasPrefix(host.stateDirectory + "/generations/\(generation)/"), "\(path)")
            }
            // Every stored copy is one made before generation 2: its files' copies were linked.
            let after = try temporary.copies()
            #expect(!after.isEmpty && after.isSubset(of: copies), "before \(copies), after \(after)")
        }
        let records = host.stop().records
        #expect(records.named(.registryUsed).first?.int("cached") == 2, "\(host.records.text)")
        #expect(records.named(.registryUsed).first?.int("read") == 0, "\(host.records.text)")
        #expect(!FileManager.default.fileExists(atPath: host.stateDirectory + "/generations/1"))

        // A file rewritten in place after the deploy, with its old size and modification time, has
        // a new identity all the same: it is read and checked anew (and refused without libcrypto).
        try changeInPlace(host.stateDirectory + "/generations/3/b.so")
        try host.start(arguments, environment: withoutCrypto)
        #expect(try host.service("test.a")?["state"] as? String == "running")
        let skipped = try host.ctlJSON("list", "--all").reply["skipped"] as? [[String: Any]] ?? []
        let refused = skipped.first { $0["path"] as? String == host.stateDirectory + "/generations/3/b.so" }
        #expect(refused?["reason"] as? String == "crypto-unavailable", "\(skipped)")
        let changed = host.stop().records.named(.registryUsed).first
        #expect(changed?.int("cached") == 1 && changed?.int("read") == 1, "\(host.records.text)")
    }

    /// The directories `registry.bin` holds a group for, from its header (RegistryFile's layout:
    /// magic, format, header length, host version, group count, then per group its directory).
    static func registryDirectories(_ path: String) throws -> [String] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var at = 4 + 2 + 4
        func u32() throws -> Int {
            guard at + 4 <= bytes.count else { throw TestFailure("registry cut short at \(at)") }
            defer { at += 4 }
            return (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
        }
        func blob() throws -> String {
            let count = try u32()
            guard at + count <= bytes.count else { throw TestFailure("registry cut short at \(at)") }
            defer { at += count }
            return String(decoding: bytes[at..<(at + count)], as: UTF8.self)
        }
        _ = try blob()
        return try (0..<u32()).map { _ in
            let directory = try blob()
            at += 8 + 4
            return directory
        }
    }

    /// Decision: the registry keeps a group only for a folder that exists. Each deploy's
    /// generation got a group that stayed after the generation was pruned: the file grew with
    /// each accepted deploy (7 groups after 6 deploys), and every start read its header; so did a
    /// generation rolled back.
    @Test func registry_afterManyDeploysWithPruning_holdsGroupsOnlyForFoldersThatExist() throws {
        let host = try IsolatedHost()
        for name in ["a", "b"] { try host.probe(name, ["PROBE_ID=\"test.\(name)\""]) }
        let temporary = try PrivateTemporary()
        let environment = ["TMPDIR": temporary.path]
        let arguments = ["--log-level", "debug", "--keep-generations", "0"]
        let current = { try? String(contentsOfFile: host.stateDirectory + "/generations/current", encoding: .utf8) }
        let deploys = 6
        try host.start(arguments, environment: environment)
        for generation in 1...deploys {
            let (status, reply) = try host.ctlJSON("deploy", host.lib, "--probation", "0.2")
            #expect(status == 0 && reply["generation"] as? Int == generation, "\(reply)")
            #expect(eventually { current() == "\(generation)\n" })
        }
        // One more, rolled back by hand in its probation: removed, and its group with it.
        let (status, reply) = try host.ctlJSON("deploy", host.lib, "--probation", "60")
        #expect(status == 0 && reply["generation"] as? Int == deploys + 1, "\(reply)")
        let back = try host.reply("rollback")
        #expect(back["generation"] as? Int == deploys + 1 && back["to"] as? Int == deploys, "\(back)")
        let rolledBack = host.stateDirectory + "/generations/\(deploys + 1)"
        #expect(eventually { !FileManager.default.fileExists(atPath: rolledBack) })
        host.stop()
        let registry = host.stateDirectory + "/registry.bin"
        let directories = try Self.registryDirectories(registry)
        let gone = directories.filter { !FileManager.default.fileExists(atPath: $0) }
        #expect(gone.isEmpty, "groups of gone folders: \(gone)")
        // The current generation and the previous one (the rollback's target), and lib.
        let generations = directories.filter { $0.hasPrefix(host.stateDirectory + "/generations/") }
        let kept = [deploys - 1, deploys].map { host.stateDirectory + "/generations/\($0)/" }
        #expect(Set(generations) == Set(kept), "\(directories)")

        // What was dropped was no longer used: a restart reads nothing anew.
        try host.start(arguments, environment: environment)
        let used = host.stop().records.named(.registryUsed).first
        #expect(used?.int("cached") == 2 && used?.int("read") == 0, "\(host.records.text)")
    }
}
