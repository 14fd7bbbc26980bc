import CSystem
import Glibc

/// `"audit": true` in a worker (issue 43): the filter refuses with SIGSYS instead of `EPERM`
/// directly; the handler (shims.c) makes the call fail with `EPERM` all the same and writes its
/// number to a pipe the worker's main loop reads. The worker tells its host each call once, on
/// stderr as ``line(_:)`` (the host reads its output already), and the host logs
/// `sandbox.refused` once per call and service (``IsolationSupervisor/noteRefused(_:services:)``).
@MainActor
enum AuditedRefusals {
    /// What a worker prints for a refused call: this, then the call's name.
    nonisolated static let prefix = "host \(WorkerSpawn.subcommand): sandbox refused "

    /// The pipe's read end and its watch, for the worker's lifetime.
    private static var watch: MainLoop.Watch?
    private static var reported: Set<Int32> = []

    /// Installs the handler and starts reading the pipe on the main loop (before the filter).
    static func start() throws(SystemError) {
        var ends: [Int32] = [0, 0]
        guard csystem_pipe2(&ends, O_CLOEXEC | O_NONBLOCK) == 0 else { throw .current("pipe2", "the worker") }
        guard csystem_audit_refusals(ends[1]) == 0 else { throw .current("sigaction(SIGSYS)", "the worker") }
        let reader = ends[0]
        let watch = MainLoop.shared.watch(reader, name: "the sandbox's refused calls")
        watch.setHandler { MainActor.assumeIsolated { drain(reader) } }
        try watch.resume()
        self.watch = watch
    }

    /// Reads the numbers waiting and prints each call not printed before.
    private static func drain(_ reader: Int32) {
        var numbers = [Int32](repeating: 0, count: 64)
        while true {
            let count = numbers.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            for number in numbers.prefix(count / MemoryLayout<Int32>.size) where reported.insert(number).inserted {
                let text = line(number)
                _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            }
        }
    }

    /// The line for call `number`: `host __worker: sandbox refused ptrace`.
    nonisolated static func line(_ number: Int32) -> String {
        prefix + (csystem_syscall_name(number).map { String(cString: $0) } ?? "syscall-\(number)") + "\n"
    }

    /// The call a worker's output line reports refused, when it is such a line.
    nonisolated static func refusedCall(in line: String) -> String? {
        guard line.hasPrefix(prefix) else { return nil }
        let name = line.dropFirst(prefix.count)
        guard !name.isEmpty, name.count <= 64,
            name.utf8.allSatisfy({
                (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2D
            })
        else { return nil }
        return String(name)
    }
}
