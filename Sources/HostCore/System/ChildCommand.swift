import CSystem
import Glibc

/// Runs a system tool (`xdg-mime`, `update-desktop-database`) to its end: its standard output,
/// and its exit status. For `host desktop`, never on the host's own run: a command-line tool
/// waiting for another.
public enum ChildCommand {
    /// What a finished tool left.
    public struct Result: Sendable {
        /// The exit status, or 128 + the signal that ended it.
        public var status: Int32
        /// Its standard output.
        public var output: String
    }

    /// What a tool reads on its standard input.
    public enum Input: Sendable {
        /// /dev/null.
        case none
        /// These bytes, then the end (`minisign` reads a key's password so).
        case bytes([UInt8])
        /// Ours, a terminal, with our standard error: the tool asks the person there itself.
        case terminal
    }

    /// Runs `program` (searched on `PATH`) with `arguments`, stdin and stderr on /dev/null (with
    /// `mergingErrors`, stderr goes to the output too: `minisign` says there why it failed).
    /// `input` gives it a standard input other than /dev/null; `.terminal` also leaves it our
    /// standard error. Throws when it cannot be started (not installed: ENOENT).
    public static func run(
        _ program: String, _ arguments: [String], mergingErrors: Bool = false, input: Input = .none
    ) throws(SystemError) -> Result {
        var ends: [Int32] = [-1, -1]
        _ = try retryingOnInterrupt("pipe", program) { csystem_pipe2(&ends, O_CLOEXEC) }
        let readEnd = FileDescriptor(taking: ends[0])
        var inputEnds: [Int32] = [-1, -1]
        if case .bytes(let bytes) = input {
            _ = try retryingOnInterrupt("pipe", program) { csystem_pipe2(&inputEnds, O_CLOEXEC) }
            // Written before the tool starts, while we hold the read end (no SIGPIPE): small (a
            // password, at most 64 KiB), the pipe holds it whole.
            _ = bytes.withUnsafeBytes { write(inputEnds[1], $0.baseAddress, $0.count) }
            close(inputEnds[1])
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch input {
        case .none: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .bytes: posix_spawn_file_actions_adddup2(&actions, inputEnds[0], 0)
        case .terminal: break
        }
        // dup2 onto 1 clears close-on-exec on the tool's copy only.
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        if case .terminal = input {
        } else if mergingErrors {
            posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let started = posix_spawnp(&pid, program, &actions, nil, argv, environ)
        // Our copy of the write end closes here, so the read below ends when the tool's does.
        close(ends[1])
        if inputEnds[0] >= 0 { close(inputEnds[0]) }
        guard started == 0 else { throw SystemError(operation: "posix_spawnp", path: program, errno: started) }
        var bytes: [UInt8] = []
        while true {
            let chunk = try readEnd.read(upTo: 65536, path: program)
            if chunk.isEmpty { break }
            bytes += chunk
        }
        var status: Int32 = 0
        _ = try retryingOnInterrupt("waitpid", program) { waitpid(pid, &status, 0) }
        let exit = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: exit, output: String(decoding: bytes, as: UTF8.self))
    }
}
