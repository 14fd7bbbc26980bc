import Foundation
import TestSupport
import Testing

/// The host's descriptors and socket paths, seen from outside the real binary.
@Suite struct DescriptorTests {
    /// The descriptors of process `pid` above stderr, each with what it is open on and whether
    /// it is close-on-exec (`flags` in `/proc/PID/fdinfo/FD` is octal; O_CLOEXEC is 02000000).
    private func descriptors(of pid: Int32) throws -> [(number: Int, target: String, closeOnExec: Bool)] {
        let folder = "/proc/\(pid)/fdinfo"
        return try FileManager.default.contentsOfDirectory(atPath: folder).compactMap { name in
            // One can close between the listing and the read: it is then no longer held.
            guard let number = Int(name), number > 2,
                let info = try? String(contentsOfFile: folder + "/" + name, encoding: .utf8),
                let flags = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") })
                    .flatMap({ Int($0.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8) })
            else { return nil }
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(name)")) ?? "?"
            return (number, target, flags & 0o2000000 != 0)
        }
    }

    @Test func everyDescriptorOfTheHostAndOfItsWorkers_isCloseOnExec_andAWorkerInheritsOnlyItsChannel() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start(["--isolation", "process"])
        // An open control connection, so an accepted socket is among the host's descriptors.
        let connection = try ControlSocket(path: host.control)
        #expect(connection.readReplyAfter(#"{"command":"state"}"#)?["state"] as? String == "active")
        let hostPID = try #require(host.process?.pid)
        let workerPID = try #require(try host.service("test.a")?["pid"] as? Int)

        let held = try descriptors(of: hostPID)
        // The listener, the accepted connection, the trace, the state directory, the worker's
        // channel and output: at least these.
        #expect(held.count >= 6, "\(held)")
        for descriptor in held where !descriptor.closeOnExec {
            Issue.record("host descriptor \(descriptor.number) (\(descriptor.target)) is not close-on-exec")
        }

        // The worker's channel is descriptor 3, a socket; whatever else it holds it opened itself,
        // close-on-exec, so nothing of the host's leaked into it (an inherited one would not be).
        let worker = try descriptors(of: Int32(workerPID))
        #expect(worker.first { $0.number == 3 }?.target.hasPrefix("socket:") == true, "\(worker)")
        for descriptor in worker where !descriptor.closeOnExec {
            Issue.record("worker descriptor \(descriptor.number) (\(descriptor.target)) is not close-on-exec")
        }
        for descriptor in worker where descriptor.target.hasPrefix(host.scratch.path) {
            Issue.record("worker descriptor \(descriptor.number) is the host's \(descriptor.target)")
        }
        #expect(host.stop().status == 0)
    }

    @Test func aControlSocketPathLongerThanSunPath_isRefused_namingThePathAndTheLimit() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        let long = scratch.file(String(repeating: "s", count: 200 - scratch.path.utf8.count - 1))
        #expect(long.utf8.count == 200)
        let run = try Command.run(
            try Repository.product("host"),
            ["--plugins", lib, "--control", long, "--state-dir", scratch.file("state"), "--log-format", "json"])
        #expect(run.status == 2)
        let refused = run.records.named(.controlUnavailable)
        #expect(
            refused.map { [$0.level, $0.source, $0.string("path")] } == [["error", "host", long]], "\(run.stderr)")
        // The message names the limit, and the option to change.
        #expect(
            refused.first.map { $0.message.contains("107") && $0.message.contains("--control") } == true,
            "\(run.stderr)")

        let ctl = try Command.run(try Repository.product("host"), ["ctl", "--control", long, "state"])
        #expect(ctl.status == 1)
        #expect(ctl.stderr.contains("socket path \(long) is 200 bytes; the limit is 107"), "\(ctl.stderr)")
    }
}
