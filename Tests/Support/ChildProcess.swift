import Foundation

/// A child process a test kills at a moment of its choosing (`kill -9` tests), with its
/// stderr kept in a file for the failure message.
public final class ChildProcess {
    /// The process id.
    public let pid: pid_t
    private let stderrPath: String
    private var status: Int32?

    /// Starts `executable` with `arguments` and `environment` added to this process's own;
    /// stdin and stdout are /dev/null, stderr goes to a temporary file.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        stderrPath = NSTemporaryDirectory() + "/servicehost-child-\(getpid())-\(UInt64.random(in: 0 ... .max)).err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, argv, envp)
        guard result == 0 else { throw TestFailure("posix_spawn \(executable): \(String(cString: strerror(result)))") }
        pid = child
    }

    /// This test binary run again for the one test `test` (a swift-testing identifier such as
    /// `"Suite/test()"`), e.g. to be the child of a crash test.
    public static func rerunningThisTestBinary(test: String, environment: [String: String]) throws -> ChildProcess {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        return try ChildProcess(
            executable, ["--testing-library", "swift-testing", "--filter", test], environment: environment)
    }

    deinit {
        if status == nil { _ = kill9AndWait() }
        unlink(stderrPath)
    }

    /// Whether the process has exited (it is reaped then).
    public var hasExited: Bool {
        if status != nil { return true }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid { status = Self.decode(raw) }
        return status != nil
    }

    /// Sends SIGKILL (unless it exited already), waits, and returns the exit status (128 + the
    /// signal when killed) and what it wrote to stderr.
    public func kill9AndWait() -> (status: Int32, stderr: String) {
        if !hasExited {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            _ = retryingOnInterrupt { waitpid(pid, &raw, 0) }
            status = Self.decode(raw)
        }
        let text = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return (status!, text)
    }

    private static func decode(_ raw: Int32) -> Int32 {
        let signal = raw & 0x7F
        return signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
    }
}
