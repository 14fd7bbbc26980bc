import Foundation
import TestSupport
import Testing

/// Pinned digests and minisign signatures (issue 40), with the real `minisign` making keys and
/// signatures and the real host, `host check` and `host inspect` judging the files alike.
@Suite(.timeLimit(.minutes(10))) struct PluginTrustTests {
    /// The SHA-256 of `path` as `sha256sum` prints it.
    private func sha256(_ path: String) throws -> String {
        let result = try Command.run("/usr/bin/sha256sum", [path])
        return String(result.stdout.prefix(64))
    }

    /// `host check ARGS --json`: the problems by file.
    private func check(_ arguments: [String], environment: [String: String]? = nil) throws -> (
        status: Int32, problems: [String: [String: Any]]
    ) {
        let result = try Command.run(
            try Repository.product("host"), ["check"] + arguments + ["--json"], environment: environment)
        let report = try #require(
            (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any],
            "\(result.stdout)\(result.stderr)")
        let problems = report["problems"] as? [[String: Any]] ?? []
        var byFile: [String: [String: Any]] = [:]
        for problem in problems { if let file = problem["file"] as? String { byFile[file] = problem } }
        return (result.status, byFile)
    }

    /// The skipped entries of a running host by file.
    private func skipped(_ host: RunningHost) throws -> [String: [String: Any]] {
        let entries = try host.ctlJSON("list", "--all").reply["skipped"] as? [[String: Any]] ?? []
        var byFile: [String: [String: Any]] = [:]
        for entry in entries { if let path = entry["path"] as? String { byFile[path] = entry } }
        return byFile
    }

    private func running(_ host: RunningHost) throws -> [String] {
        (try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    @Test func aPinnedDigest_loadsWhenItMatches_andIsRefusedBeforeDlopen_namingBothDigests() throws {
        let host = try RunningHost()
        try host.probe("good", ["PROBE_ID=\"test.good\""])
        try host.probe("bad", ["PROBE_ID=\"test.bad\"", "PROBE_CONSTRUCTOR_MARKER"])
        let good = host.lib + "/good.so"
        let bad = host.lib + "/bad.so"
        let wrong = String(repeating: "0", count: 64)
        let config = try host.file(
            "services.json",
            """
            {"services": {"test.good": {"sha256": "\(try sha256(good).uppercased())"},
                          "test.bad": {"sha256": "\(wrong)"}}}
            """)
        let marker = host.scratch.file("constructor-ran")
        let (status, problems) = try check(["--plugins", host.lib, "--config", config])
        #expect(status == 2)
        let refused = try #require(problems[bad], "\(problems)")
        #expect(refused["code"] as? String == "digest-mismatch" && refused["service"] as? String == "test.bad")
        let message = refused["message"] as? String ?? ""
        #expect(message.contains(try sha256(bad)) && message.contains(wrong), "\(message)")
        #expect(problems[good] == nil)

        try host.start(["--config", config], environment: ["PROBE_MARKER": marker])
        #expect(try running(host) == ["test.good"])
        let entry = try #require(try skipped(host)[bad])
        #expect(entry["reason"] as? String == "digest-mismatch" && entry["services"] as? [String] == ["test.bad"])
        #expect(!FileManager.default.fileExists(atPath: marker), "a refused file's ELF constructor ran")
        let failed = host.stop().records.named(.loadFailed)
        #expect(failed.map { $0.fields["path"] as? String } == [bad])

        // A second start of the same files finds the digest cached beside the stored copy.
        try host.start(["--config", config])
        #expect(try running(host) == ["test.good"])
        host.stop()
    }

    @Test func withoutLibcrypto_aPinnedServiceIsRefused_neverLoadedUnchecked() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        let plugin = try Plugins.probe(lib + "/pinned.so", ["PROBE_ID=\"test.pinned\""])
        try Plugins.probe(lib + "/plain.so", ["PROBE_ID=\"test.plain\""])
        let config = try scratch.write(
            "services.json", Array(#"{"services": {"test.pinned": {"sha256": "\#(try sha256(plugin))"}}}"#.utf8))
        // The test hook names a library that does not exist, as on a system without OpenSSL 3.
        let (status, problems) = try check(
            ["--plugins", lib, "--config", config, "--state-dir", scratch.file("state")],
            environment: ["SERVICEHOST_LIBCRYPTO": "libcrypto-missing.so.3"])
        #expect(status == 2)
        #expect(problems[plugin]?["code"] as? String == "crypto-unavailable", "\(problems)")
        #expect(problems[lib + "/plain.so"] == nil)
    }

    // MARK: Signatures

    /// A folder of signed probes and the keys: `trusted` (in trustedKeys), `stranger` (not),
    /// `revoked` (trusted but revoked).
    private struct SignedSet {
        let host: RunningHost
        let trusted: Minisign.KeyPair
        let stranger: Minisign.KeyPair
        let revoked: Minisign.KeyPair

        init() throws {
            host = try RunningHost()
            let keys = try host.scratch.folder("keys", mode: 0o700)
            trusted = try Minisign.generate("trusted", in: keys)
            stranger = try Minisign.generate("stranger", in: keys)
            revoked = try Minisign.generate("revoked", in: keys)
        }

        func plugin(_ name: String) -> String { host.lib + "/\(name).so" }

        /// `lib/NAME.so` built and signed by `key` (none: unsigned).
        @discardableResult
        func signed(_ name: String, by key: Minisign.KeyPair?, legacy: Bool = false, marker: Bool = true) throws
            -> String
        {
            try host.probe(name, ["PROBE_ID=\"test.\(name)\""] + (marker ? ["PROBE_CONSTRUCTOR_MARKER"] : []))
            if let key { try Minisign.sign(plugin(name), with: key, legacy: legacy, comment: "release \(name)") }
            return plugin(name)
        }

        func config(_ policy: String) throws -> String {
            try host.file(
                "services-\(policy).json",
                """
                {"signatures": "\(policy)",
                 "trustedKeys": [{"name": "release", "file": "keys/trusted.pub"}, "\(try revoked.publicKey)"],
                 "revokedKeys": ["\(try revoked.keyID)"]}
                """)
        }
    }

    @Test func underRequired_onlyFilesSignedByATrustedKeyLoad_everyOtherIsRefusedWithItsReason() throws {
        guard Minisign.installed != nil else { return }
        let set = try SignedSet()
        try set.signed("prehashed", by: set.trusted, marker: false)
        try set.signed("legacy", by: set.trusted, legacy: true, marker: false)
        let changed = try set.signed("changed", by: set.trusted)
        // One byte changed after signing.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: changed))
        bytes[bytes.count - 1] ^= 1
        try bytes.write(to: URL(fileURLWithPath: changed))
        let tampered = try set.signed("tampered", by: set.trusted, legacy: true)
        var legacyBytes = try Data(contentsOf: URL(fileURLWithPath: tampered))
        legacyBytes[legacyBytes.count - 1] ^= 1
        try legacyBytes.write(to: URL(fileURLWithPath: tampered))
        try set.signed("stranger", by: set.stranger)
        try set.signed("revoked", by: set.revoked)
        let truncated = try set.signed("truncated", by: set.trusted)
        let signature = try Data(contentsOf: URL(fileURLWithPath: truncated + ".minisig"))
        try signature.prefix(signature.count / 2).write(to: URL(fileURLWithPath: truncated + ".minisig"))
        try set.signed("unsigned", by: nil)
        let config = try set.config("required")
        let expected = [
            "changed": "signature-mismatch", "tampered": "signature-mismatch", "stranger": "signature-untrusted",
            "revoked": "signature-revoked", "truncated": "signature-malformed", "unsigned": "signature-missing",
        ]

        let (status, problems) = try check(["--plugins", set.host.lib, "--config", config])
        #expect(status == 2)
        for (name, code) in expected {
            #expect(
                problems[set.plugin(name)]?["code"] as? String == code, "\(name): \(problems[set.plugin(name)] ?? [:])")
        }
        #expect(problems[set.plugin("prehashed")] == nil && problems[set.plugin("legacy")] == nil)
        #expect((problems[set.plugin("stranger")]?["message"] as? String ?? "").contains(try set.stranger.keyID))

        let marker = set.host.scratch.file("constructor-ran")
        try set.host.start(["--config", config], environment: ["PROBE_MARKER": marker])
        #expect(try running(set.host).sorted() == ["test.legacy", "test.prehashed"])
        let skipped = try skipped(set.host)
        for (name, code) in expected {
            #expect(skipped[set.plugin(name)]?["reason"] as? String == code, "\(name)")
        }
        // Every refused file has a constructor that leaves the marker: none ran.
        #expect(!FileManager.default.fileExists(atPath: marker), "a refused file's ELF constructor ran")
        set.host.stop()

        // host inspect --config shows the signer and the trusted comment, and refuses the same files.
        let inspect = try Command.run(
            try Repository.product("host"), ["inspect", "--json", "--config", config, set.host.lib])
        let parsed = (try? JSONSerialization.jsonObject(with: Data(inspect.stdout.utf8))) as? [[String: Any]]
        let files: [[String: Any]] = try #require(parsed, "\(inspect.stderr)")
        var byPath: [String: [String: Any]] = [:]
        for file in files { byPath[file["path"] as? String ?? ""] = file }
        let accepted = try #require(byPath[set.plugin("prehashed")]?["signature"] as? [String: Any])
        let trustedID = try set.trusted.keyID
        #expect(accepted["keyId"] as? String == trustedID)
        #expect(accepted["trustedComment"] as? String == "release prehashed" && accepted["prehashed"] as? Bool == true)
        #expect(accepted["verified"] as? Bool == true && accepted["keyName"] as? String == "release")
        #expect((byPath[set.plugin("legacy")]?["signature"] as? [String: Any])?["prehashed"] as? Bool == false)
        for name in expected.keys { #expect(byPath[set.plugin(name)]?["valid"] as? Bool == false, "\(name)") }
    }

    @Test func underOptional_unsignedFilesLoad_butABadSignatureIsStillRefused() throws {
        guard Minisign.installed != nil else { return }
        let set = try SignedSet()
        try set.signed("signed", by: set.trusted)
        try set.signed("unsigned", by: nil)
        try set.signed("stranger", by: set.stranger)
        let changed = try set.signed("changed", by: set.trusted)
        try Plugins.probe(changed, ["PROBE_ID=\"test.changed\"", "PROBE_PRIORITY=3"])
        try set.host.start(["--config", try set.config("optional")])
        #expect(try running(set.host).sorted() == ["test.signed", "test.unsigned"])
        let skipped = try skipped(set.host)
        #expect(skipped[set.plugin("stranger")]?["reason"] as? String == "signature-untrusted")
        #expect(skipped[set.plugin("changed")]?["reason"] as? String == "signature-mismatch")
        set.host.stop()
    }

    @Test func aSecondStart_findsTheVerdictCachedBesideTheStoredCopy() throws {
        guard Minisign.installed != nil else { return }
        let set = try SignedSet()
        try set.signed("signed", by: set.trusted)
        let config = try set.config("required")
        try set.host.start(["--config", config])
        #expect(try running(set.host) == ["test.signed"])
        set.host.stop()
        // Without libcrypto, a file verified before still loads: nothing is verified again.
        try set.host.start(["--config", config], environment: ["SERVICEHOST_LIBCRYPTO": "libcrypto-missing.so.3"])
        #expect(try running(set.host) == ["test.signed"])
        set.host.stop()
        // A new signature (another trusted comment) is verified anew: refused without libcrypto.
        try Minisign.sign(set.plugin("signed"), with: set.trusted, comment: "re-signed")
        try set.host.start(["--config", config], environment: ["SERVICEHOST_LIBCRYPTO": "libcrypto-missing.so.3"])
        #expect(try running(set.host).isEmpty)
        #expect(try skipped(set.host)[set.plugin("signed")]?["reason"] as? String == "crypto-unavailable")
        set.host.stop()
    }

    /// A folder of its own for the host's `TMPDIR` (on /dev/shm, where the host keeps its store of
    /// copies and its verdict file when it can), so no other test's host shares the verdicts.
    private final class PrivateTemporary {
        let path: String
        init() throws {
            let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
            var template = Array((base + "/servicehost-test-verdicts-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed: errno \(errno)") }
            path = String(cString: made)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        /// The verdict file of the store the host chose there.
        var verdicts: String { path + "/servicehost-copies-\(geteuid())/.verdicts" }
    }

    @Test func aKeptVerdict_holdsOnlyWhileThePluginItsSignatureTheKeysAndTheVerdictFileAreUnchanged() throws {
        guard Minisign.installed != nil else { return }
        let set = try SignedSet()
        let temporary = try PrivateTemporary()
        for name in ["kept", "touched", "changed", "unsigned", "resigned"] {
            try set.signed(name, by: set.trusted, marker: false)
        }
        let required = try set.config("required")
        // Without libcrypto a file checked anew is refused (`crypto-unavailable`): whatever loads
        // then was let through by a kept verdict.
        let withoutCrypto = ["TMPDIR": temporary.path, "SERVICEHOST_LIBCRYPTO": "libcrypto-missing.so.3"]
        let reasons = { (config: String, environment: [String: String]) throws -> [String: String] in
            try set.host.start(["--config", config], environment: environment)
            defer { set.host.stop() }
            var found: [String: String] = [:]
            for id in try self.running(set.host) { found[String(id.dropFirst("test.".count))] = "running" }
            for (path, entry) in try self.skipped(set.host) {
                let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
                found[name] = entry["reason"] as? String
            }
            return found
        }
        let all = ["kept", "touched", "changed", "unsigned", "resigned"]
        #expect(
            try reasons(required, ["TMPDIR": temporary.path])
                == Dictionary(uniqueKeysWithValues: all.map { ($0, "running") }))
        #expect(FileManager.default.fileExists(atPath: temporary.verdicts))

        // The same bytes written again (a new identity), one byte changed, the signature removed,
        // the signature replaced by a stranger's.
        let touched = try Data(contentsOf: URL(fileURLWithPath: set.plugin("touched")))
        try FileManager.default.removeItem(atPath: set.plugin("touched"))
        try touched.write(to: URL(fileURLWithPath: set.plugin("touched")))
        var changed = try Data(contentsOf: URL(fileURLWithPath: set.plugin("changed")))
        changed[changed.count - 1] ^= 1
        try changed.write(to: URL(fileURLWithPath: set.plugin("changed")))
        try FileManager.default.removeItem(atPath: set.plugin("unsigned") + ".minisig")
        try Minisign.sign(set.plugin("resigned"), with: set.stranger)
        #expect(
            try reasons(required, withoutCrypto) == [
                "kept": "running", "touched": "crypto-unavailable", "changed": "crypto-unavailable",
                "unsigned": "signature-missing", "resigned": "signature-untrusted",
            ])
        let checked = try reasons(required, ["TMPDIR": temporary.path])
        #expect(checked["touched"] == "running" && checked["changed"] == "signature-mismatch", "\(checked)")

        // The keys: the signer no longer trusted, then revoked.
        let strangerOnly = try set.host.file(
            "stranger-only.json", #"{"signatures": "required", "trustedKeys": ["\#(try set.stranger.publicKey)"]}"#)
        #expect(try reasons(strangerOnly, withoutCrypto)["kept"] == "signature-untrusted")
        let revoking = try set.host.file(
            "revoking.json",
            #"{"signatures": "required", "trustedKeys": [{"file": "keys/trusted.pub"}], "revokedKeys": ["\#(try set.trusted.keyID)"]}"#
        )
        #expect(try reasons(revoking, withoutCrypto)["kept"] == "signature-revoked")
        #expect(try reasons(required, withoutCrypto)["kept"] == "running")

        // A verdict file changed by anything but a host is not believed: checked anew, then written whole.
        var verdicts = try Data(contentsOf: URL(fileURLWithPath: temporary.verdicts))
        verdicts[verdicts.count / 2] ^= 1
        try verdicts.write(to: URL(fileURLWithPath: temporary.verdicts))
        let afterCorruption = try reasons(required, withoutCrypto)
        #expect(afterCorruption["kept"] == "crypto-unavailable" && afterCorruption["touched"] == "crypto-unavailable")
        try Data(verdicts.prefix(20)).write(to: URL(fileURLWithPath: temporary.verdicts))
        #expect(try reasons(required, withoutCrypto)["kept"] == "crypto-unavailable")
        #expect(try reasons(required, ["TMPDIR": temporary.path])["kept"] == "running")
        let again = try reasons(required, withoutCrypto)
        #expect(again["kept"] == "running" && again["touched"] == "running", "\(again)")
    }

    @Test func aConfigurationWithABadKey_isAnErrorNamingTheKey() throws {
        let scratch = try Scratch()
        let bad = try scratch.write(
            "services.json", Array(#"{"signatures": "required", "trustedKeys": ["RWQnotakey"]}"#.utf8))
        let result = try Command.run(try Repository.product("host"), ["check", "--config", bad, "--json"])
        #expect(result.status == 2)
        #expect(result.stdout.contains("trustedKeys[0]"), "\(result.stdout)")
        let none = try scratch.write("none.json", Array(#"{"signatures": "required"}"#.utf8))
        let second = try Command.run(try Repository.product("host"), ["check", "--config", none, "--json"])
        #expect(second.status == 2 && second.stdout.contains("trustedKeys"), "\(second.stdout)")
    }
}

/// `host new-service`'s `scripts/sign`: what an author runs, with their minisign key, to ship a
/// plugin a host with `"signatures": "required"` loads.
@Suite(.timeLimit(.minutes(10))) struct SignScriptTests {
    @Test func aScaffoldSignedWithItsScript_loadsUnderRequiredSignatures() throws {
        guard Minisign.installed != nil else { return }
        let host = try RunningHost()
        let folder = host.scratch.file("Signed")
        let made = try Command.run(
            try Repository.product("host"),
            ["new-service", "Signed", "--c", "--id", "com.example.signed", "--dir", folder])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try Command.run(folder + "/build.sh", []).status == 0)
        let keys = try host.scratch.folder("keys", mode: 0o700)
        let key = try Minisign.generate("author", in: keys)
        let signed = try Command.run(folder + "/scripts/sign", [], environment: ["MINISIGN_KEY": key.secretKeyFile])
        #expect(signed.status == 0, "\(signed.stderr)")
        try host.scratch.copy(folder + "/lib/libSigned.so", to: "lib/libSigned.so", mode: 0o644)
        try host.scratch.copy(folder + "/lib/libSigned.so.minisig", to: "lib/libSigned.so.minisig", mode: 0o644)
        let config = try host.file(
            "services.json", #"{"signatures": "required", "trustedKeys": ["\#(try key.publicKey)"]}"#)
        try host.start(["--config", config])
        let services = try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []
        #expect(services.compactMap { $0["id"] as? String } == ["com.example.signed"])
        host.stop()
    }
}
