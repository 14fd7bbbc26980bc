import Glibc
import HostCore

/// A program the runner starts, with one of its outputs on a pipe.
///
/// Children get the runner's environment without `LD_PRELOAD`, so the malloc counter the
/// runner may carry never slows the programs it times.
struct Child {
    let pid: pid_t
    /// The read end of the captured output's pipe (the fleet row polls many at once).
    let output: Int32
    /// The write end of the child's stdin pipe, with `input`; -1 when its stdin is the runner's.
    private(set) var input: Int32 = -1
    private var buffer: [UInt8] = []

    /// Starts `path` with `arguments` and the runner's environment plus `overrides`; file
    /// descriptor `captured` (1 or 2) goes to the pipe and the other to /dev/null.
    /// With `newGroup`, the child leads a process group of its own (``finishGroup(signal:)``
    /// signals everything it started). With `input`, its stdin is a pipe ``send(_:)`` writes to.
    init(
        _ path: String, _ arguments: [String], capture captured: Int32, environment overrides: [String: String] = [:],
        newGroup: Bool = false, input: Bool = false
    ) throws(BenchError) {
        var pipeEnds: [Int32] = [0, 0]
        var inputEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0, !input || pipe(&inputEnds) == 0 else {
            throw BenchError("pipe: \(String(cString: strerror(errno)))")
        }
        // Close-on-exec, so later children never hold this pipe open (dup2 clears it in the child).
        for end in pipeEnds + inputEnds where end >= 0 { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], captured)
        if input { posix_spawn_file_actions_adddup2(&actions, inputEnds[0], 0) }
        posix_spawn_file_actions_addopen(&actions, captured == 1 ? 2 : 1, "/dev/null", O_WRONLY, 0)

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        var variables: [String] = []
        var entry = environ
        while let variable = entry.pointee {
            let text = String(cString: variable)
            let name = String(text.prefix { $0 != "=" })
            if name != "LD_PRELOAD" && overrides[name] == nil { variables.append(text) }
            entry += 1
        }
        variables += overrides.map { "\($0.key)=\($0.value)" }
        let environment = variables.map { strdup($0) } + [nil]
        defer { for string in argv + environment { free(string) } }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if newGroup {
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, environment)
        close(pipeEnds[1])
        if input { close(inputEnds[0]) }
        guard status == 0 else {
            close(pipeEnds[0])
            if input { close(inputEnds[1]) }
            throw BenchError("cannot start \(path): \(String(cString: strerror(status)))")
        }
        self.pid = pid
        output = pipeEnds[0]
        self.input = inputEnds[1]
    }

    /// Writes `text` to the child's stdin (started with `input`).
    func send(_ text: String) throws(BenchError) {
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count: Int
            do throws(SystemError) {
                count = try retryingOnInterrupt("write", "the child's stdin") {
                    bytes[written...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
                }
            } catch {
                throw BenchError("writing to the child's stdin: \(error)")
            }
            guard count > 0 else { throw BenchError("writing to the child's stdin: nothing written") }
            written += count
        }
    }

    /// The next line of the captured output, without its newline, taken out of what was read;
    /// nil when the pipe closes or `seconds` pass first.
    mutating func nextLine(within seconds: Double = 10) -> String? {
        let deadline = nowNanoseconds() + seconds * 1e9
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let left = deadline - nowNanoseconds()
            guard left > 0 else { return nil }
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            guard
                let ready = try? retryingOnInterrupt(
                    "poll", "the child's output",
                    {
                        poll(&descriptor, 1, Int32(left / 1e6) + 1)
                    })
            else { return nil }
            if ready == 0 { continue }
            guard
                let count = try? retryingOnInterrupt(
                    "read", "the child's output", { read(output, &chunk, chunk.count) }),
                count > 0
            else { return nil }
            buffer += chunk[0..<count]
        }
    }

    /// Reads the pipe until `marker` appears; false when the pipe closes first.
    mutating func waitFor(_ marker: String) -> Bool {
        let needle = Array(marker.utf8)
        var searched = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            if buffer.count >= needle.count {
                for start in searched...(buffer.count - needle.count)
                where buffer[start] == needle[0] && buffer[start..<start + needle.count].elementsEqual(needle) {
                    return true
                }
                searched = buffer.count - needle.count + 1
            }
            let count =
                (try? retryingOnInterrupt("read", "the child's output") { read(output, &chunk, chunk.count) })
                ?? -1
            if count <= 0 { return false }
            buffer += chunk[0..<count]
        }
    }

    /// Everything read from the pipe so far, as text.
    var text: String { String(decoding: buffer, as: UTF8.self) }

    /// The child's resident set size in bytes (`VmRSS` of /proc/PID/status).
    func residentBytes() -> Double? { residentSetBytes(of: pid) }

    /// The minor page faults the child has taken so far, all its threads (`minflt` of
    /// /proc/PID/stat).
    func minorFaults() -> Double? {
        guard let stat = try? readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: UInt8(ascii: ")")) else {
            return nil
        }
        // After "(comm)": state, ppid, pgrp, session, tty_nr, tpgid, flags, minflt (field 10).
        let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 7 else { return nil }
        return Double(String(decoding: fields[7], as: UTF8.self))
    }

    /// The CPU time the child has used so far, user and system, all its threads, in seconds
    /// (`utime` and `stime` of /proc/PID/stat).
    func cpuSeconds() -> Double? {
        guard let stat = try? readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: UInt8(ascii: ")")) else {
            return nil
        }
        // After "(comm)": state (field 3) … utime (14), stime (15).
        let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 12, let user = Double(String(decoding: fields[11], as: UTF8.self)),
            let system = Double(String(decoding: fields[12], as: UTF8.self))
        else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Sends `signal` to the child's whole process group (it must have been started with
    /// `newGroup`), then as ``finish(signal:)``.
    @discardableResult
    mutating func finishGroup(signal: Int32) -> Int32 {
        kill(-pid, signal)
        return finish(signal: nil)
    }

    /// Sends `signal` (SIGKILL unless nil), reads the pipe to its end and reaps the child;
    /// returns its wait status.
    @discardableResult
    mutating func finish(signal: Int32? = SIGKILL) -> Int32 {
        if input >= 0 {
            close(input)
            input = -1
        }
        if let signal { kill(pid, signal) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count =
                (try? retryingOnInterrupt("read", "the child's output") { read(output, &chunk, chunk.count) })
                ?? -1
            if count <= 0 { break }
            buffer += chunk[0..<count]
        }
        close(output)
        var status: Int32 = 0
        _ = try? retryingOnInterrupt("waitpid", "the child") { waitpid(pid, &status, 0) }
        return status
    }
}

/// Runs `program` to its exit (its stdout to /dev/null, stderr kept for the error); the time
/// from exec to exit.
func runToExit(_ program: String, _ arguments: [String], environment: [String: String] = [:])
    throws(BenchError) -> Double
{
    let start = nowNanoseconds()
    var child = try Child(program, arguments, capture: 2, environment: environment)
    let status = child.finish(signal: nil)
    let elapsed = nowNanoseconds() - start
    guard status == 0 else {
        throw BenchError("\(program) \(arguments.joined(separator: " ")) failed (\(status)):\n\(child.text)")
    }
    return elapsed
}

/// The resident set size of process `pid` in bytes (`VmRSS` of /proc/PID/status).
func residentSetBytes(of pid: pid_t) -> Double? {
    guard let status = try? readFile("/proc/\(pid)/status") else { return nil }
    for line in String(decoding: status, as: UTF8.self).split(separator: "\n") where line.hasPrefix("VmRSS:") {
        // "VmRSS:\t   11260 kB": a tab, then spaces.
        let kib = line.dropFirst("VmRSS:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap {
            Double($0)
        }
        return kib.map { $0 * 1024 }
    }
    return nil
}
