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
}
