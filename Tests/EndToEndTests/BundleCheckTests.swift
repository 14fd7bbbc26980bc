import Foundation
import TestSupport
import Testing

/// `deploy verify` (the fleet's check of a bundle, issues 40 and 41) reads and hashes up to
/// 256 MiB: off the main thread, so the host answers other requests while a check is in
/// progress, and the check's verdict comes when it is done.
@Suite(.timeLimit(.minutes(10))) struct BundleCheckTests {
    @Test func aBundleBeingChecked_doesNotHoldTheHost_andItsVerdictComesWhenDone() throws {
        guard Minisign.installed != nil else { return }
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let key = try Minisign.generate("fleet", in: try host.scratch.folder("keys"))
        // A large bundle: 64 MiB, signed as a fleet operator signs it.
        let bundle = host.scratch.file("bundle.tar")
        let size = 64 << 20
        #expect(FileManager.default.createFile(atPath: bundle, contents: Data(repeating: 0x5A, count: size)))
        try Minisign.sign(bundle, with: key)
        let signature = try String(contentsOfFile: bundle + ".minisig", encoding: .utf8)
        let sum = try Command.run("/usr/bin/sha256sum", [bundle])
        let digest = String(sum.stdout.prefix(64))
        let configuration = try host.file("services.json", #"{"trustedKeys": ["\#(try key.publicKey)"]}"#)
        // The check waits for a byte on this FIFO before it reads the bundle: it is in progress
        // for as long as the test says.
        let gate = host.scratch.file("gate")
        #expect(mkfifo(gate, 0o600) == 0)
        try host.start(["--config", configuration], environment: ["SERVICEHOST_BUNDLE_CHECK_GATE": gate])

        let checking = try ControlSocket(path: host.control)
        let request: [String: Any] = [
            "command": "deploy", "action": "verify", "path": bundle, "size": size, "sha256": digest,
            "signature": signature,
        ]
        checking.send(try JSONSerialization.data(withJSONObject: request).map { $0 } + [0x0A])
        // While the check is held, another client is answered, and so is a service's event.
        let other = try ControlSocket(path: host.control)
        other.send(#"{"command":"state"}"# + "\n")
        let state = other.readReply()
        #expect(state?["ok"] as? Bool == true && state?["state"] as? String == "active", "\(state ?? [:])")
        #expect(try host.ctl("background").status == 0)
        #expect(host.events(of: "test.a").last == "didEnterBackground", "\(host.events)")

        // Released: the verdict comes, on the connection that asked.
        var writer: Int32 = -1
        #expect(
            eventually {
                writer = open(gate, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                return writer >= 0
            })
        var byte: UInt8 = 1
        #expect(write(writer, &byte, 1) == 1)
        close(writer)
        let verdict = checking.readReply()
        let checked = verdict?["bundle"] as? [String: Any]
        #expect(verdict?["ok"] as? Bool == true && checked?["verified"] as? Bool == true, "\(verdict ?? [:])")
        #expect(checked?["keyId"] as? String == (try key.keyID), "\(checked ?? [:])")
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// The host's peak resident memory (`VmHWM`), in KiB.
    private func peakKiB(_ host: RunningHost) throws -> Int {
        let pid = try #require(host.process?.pid)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test func aPrehashedBundle_isStreamed_aLegacyOneIsReadWhole_andABadByteIsRefused() throws {
        guard Minisign.installed != nil else { return }
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let key = try Minisign.generate("fleet", in: try host.scratch.folder("keys"))
        // 48 MiB and a bit: many 1 MiB pieces and a short last one.
        let size = (48 << 20) + 12345
        var bytes = Data(count: size)
        for index in stride(from: 0, to: size, by: 4096) { bytes[index] = UInt8(truncatingIfNeeded: index >> 12) }
        let prehashed = host.scratch.file("prehashed.tar")
        let legacy = host.scratch.file("legacy.tar")
        let changed = host.scratch.file("changed.tar")
        try bytes.write(to: URL(fileURLWithPath: prehashed))
        try bytes.write(to: URL(fileURLWithPath: legacy))
        try Minisign.sign(prehashed, with: key)
        try Minisign.sign(legacy, with: key, legacy: true)
        // One byte changed in the last piece, with the digest of what it is now: only the
        // signature (over the original's BLAKE2b-512) can refuse it.
        bytes[size - 1] ^= 1
        try bytes.write(to: URL(fileURLWithPath: changed))
        let configuration = try host.file("services.json", #"{"trustedKeys": ["\#(try key.publicKey)"]}"#)
        try host.start(["--config", configuration])

        let verify = { (path: String, signed: String) throws -> [String: Any] in
            let digest = String(try Command.run("/usr/bin/sha256sum", [path]).stdout.prefix(64))
            let request: [String: Any] = [
                "command": "deploy", "action": "verify", "path": path, "size": size, "sha256": digest,
                "signature": try String(contentsOfFile: signed + ".minisig", encoding: .utf8),
            ]
            let socket = try ControlSocket(path: host.control)
            socket.send(try JSONSerialization.data(withJSONObject: request).map { $0 } + [0x0A])
            return try #require(socket.readReply()?["bundle"] as? [String: Any])
        }
        let before = try peakKiB(host)
        let streamed = try verify(prehashed, prehashed)
        #expect(streamed["verified"] as? Bool == true, "\(streamed)")
        let afterStreamed = try peakKiB(host)
        // The 48 MiB went through a 1 MiB buffer, not into memory.
        #expect(afterStreamed - before < 16 << 10, "peak \(before) KiB → \(afterStreamed) KiB")
        let whole = try verify(legacy, legacy)
        #expect(whole["verified"] as? Bool == true, "\(whole)")
        // A legacy signature needs the bytes whole: the peak grows by the bundle (the measure works).
        #expect(try peakKiB(host) - afterStreamed >= 24 << 10)
        let refused = try verify(changed, prehashed)
        #expect(
            refused["verified"] as? Bool == false && refused["reason"] as? String == "signatureMismatch", "\(refused)")
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
    }
}
