import Foundation

/// What a finished process left.
public struct CommandResult: Sendable {
    /// Exit status, or 128 + signal number when killed.
    public let status: Int32
    /// Standard output, as text.
    public let stdout: String
    /// Standard error, as text.
    public let stderr: String
}

/// Runs programs and C compilers for tests.
public enum Command {
    /// Runs `executable` with `arguments` to completion.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        directory: String? = nil
    ) throws -> CommandResult {
        let process = try start(executable, arguments, environment: environment, directory: directory)
        return process.wait()
    }

    /// Starts `executable`; the caller signals and waits on the returned handle.
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        directory: String? = nil
    ) throws -> Running {
        // A file the tests wrote is opened `O_CLOEXEC` (`Scratch.write`), but a process another
        // test spawns holds its descriptors from fork to exec: executing the file in that
        // window fails with ETXTBSY, which a moment later does not. Each try is a new Process.
        var attempts = 0
        while true {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
            if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            do {
                try process.run()
                return Running(process: process, out: out, err: err)
            } catch let error as NSError
                where (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(ETXTBSY) && attempts < 50
            {
                attempts += 1
                usleep(2_000)
            }
        }
    }

    /// A started process whose output is collected as it runs.
    public final class Running: @unchecked Sendable {
        // Guarded by `lock`: the pipe readers append from their own threads.
        private let lock = NSLock()
        private var outData = Data(), errData = Data()
        private let process: Process
        private let group = DispatchGroup()

        init(process: Process, out: Pipe, err: Pipe) {
            self.process = process
            for (pipe, isOut) in [(out, true), (err, false)] {
                group.enter()
                DispatchQueue.global().async { [self] in
                    let data = pipe.fileHandleForReading.readDataToEndOfFile()
                    lock.withLock { if isOut { outData = data } else { errData = data } }
                    group.leave()
                }
            }
        }

        /// The process id.
        public var pid: Int32 { process.processIdentifier }

        /// Whether the process has not exited yet.
        public var isRunning: Bool { process.isRunning }

        /// Sends `signal` to the process.
        public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

        /// Waits for the process to exit and its output to close.
        public func wait() -> CommandResult {
            process.waitUntilExit()
            group.wait()
            let status =
                process.terminationReason == .uncaughtSignal
                ? 128 + process.terminationStatus
                : process.terminationStatus
            return lock.withLock {
                CommandResult(
                    status: status, stdout: String(decoding: outData, as: UTF8.self),
                    stderr: String(decoding: errData, as: UTF8.self))
            }
        }
    }

    /// Compiles one C file into a shared library, as a third party would:
    /// `cc -shared -fPIC -I Sources/ServiceABI/include SOURCE -o OUTPUT`.
    @discardableResult
    public static func compileC(_ source: String, to output: String, defines: [String] = []) throws -> String {
        let result = try run(
            "/usr/bin/env",
            [
                "cc", "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC",
                "-I", Repository.abiInclude,
            ] + defines.map { "-D" + $0 }
                + [source, "-o", output])
        guard result.status == 0 else { throw TestFailure("cc \(source) failed:\n\(result.stderr)") }
        return output
    }
}
