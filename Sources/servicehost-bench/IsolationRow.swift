import Glibc
import HostCore

/// Row 5: one lifecycle event to one C service in a worker process (`--isolation process`),
/// per event, against the same service in the host process and against the floor: a raw
/// Unix-socket ping-pong between two processes with messages of the same sizes (an event
/// frame out, a result frame back); and (issue 43) the same round trip and a worker's start-up
/// in a sandbox (cgroup limits where the machine has a writable cgroup, and the `default`
/// seccomp profile) against an unsandboxed worker. Row 6: the resident memory of that worker.
///
/// The dispatcher waits for each answer, in a worker as in-process (events are delivered in
/// order, one at a time), so events are not pipelined: throughput is one over the round trip.
@MainActor
struct IsolationRow {
    let host: String
    let reps: Int
    let eventsPerRep: Int

    private(set) var raw: [(String, Double)] = []

    /// The rows for the one-service set in `directory`.
    mutating func run(directory: String) throws(BenchError) -> [Row] {
        var template = Array("/tmp/servicehost-bench-state-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp: \(String(cString: strerror(errno)))") }
        let state = String(cString: made)
        defer {
            unlink(state + "/" + Sentinel.fileName)
            rmdir(state + "/failures")
            rmdir(state)
        }
        let inProcess = try loaded(directory, isolation: nil)
        var settings = IsolationSettings(stateDirectory: state)
        settings.isolation = .process
        settings.workerExecutable = host
        let isolated = try loaded(directory, isolation: settings)
        var sandboxedSettings = settings
        sandboxedSettings.defaultSandbox = Self.sandbox
        let sandboxed = try loaded(directory, isolation: sandboxedSettings)
        let rounds = max(1, eventsPerRep / 2)
        let events = rounds * 2
        let pingPong = try PingPong()
        defer { pingPong.stop() }
        // The ping-pong is measured in every repetition beside the host, so each repetition
        // has its own floor (the floor moved 3× between machines of one kind: issue 37).
        let samples = try interleavedSamples(
            reps: reps,
            [
                { timed(units: events) { hostRounds(isolated, rounds) } },
                { timed(units: events) { hostRounds(inProcess, rounds) } },
                { timed(units: events) { pingPong.roundTrips(events) } },
                { timed(units: events) { hostRounds(sandboxed, rounds) } },
            ])
        // A start: load (spawn, cgroup, filter, dlopen in the worker) and launch, then the end.
        let measure = self
        let starts = try interleavedSamples(
            reps: max(3, min(reps, 10)),
            [
                { try measure.timedStart(directory, settings) },
                { try measure.timedStart(directory, sandboxedSettings) },
            ])
        let medians = samples.map(median)
        let floor = medians[2]
        let workerRSS = isolated.services.first.flatMap { isolated.isolationFields(for: $0.id)["pid"]?.intValue }
            .flatMap { residentSetBytes(of: pid_t($0)) }
        raw += [
            ("isolation.worker_ns_per_event", medians[0]), ("isolation.in_process_ns_per_event", medians[1]),
            ("isolation.socket_floor_ns_per_round_trip", floor), ("isolation.worker_rss_bytes", workerRSS ?? .nan),
        ]
        return [
            .paired(
                row: "5",
                measured: "process isolation: one event to 1 C service in a worker, round trip, vs in-process dispatch",
                unit: .nanoseconds, ours: samples[0], baseline: samples[1], target: "—"),
            .paired(
                row: "5",
                measured:
                    "process isolation: the same round trip vs a Unix-socket ping-pong between two processes (floor)",
                unit: .nanoseconds, ours: samples[0], baseline: samples[2], target: "≤ 3× socket floor", maxRatio: 3),
            .paired(
                row: "5",
                measured: "sandboxed worker (limits, seccomp default): the same round trip vs an unsandboxed worker",
                unit: .nanoseconds, ours: samples[3], baseline: samples[0], target: "≤ 1.1×", maxRatio: 1.1),
            .paired(
                row: "5",
                measured: "sandboxed worker: start-up (load and launch) vs an unsandboxed worker's",
                unit: .nanoseconds, ours: starts[1], baseline: starts[0], target: "≤ 1.5× (report)"),
            Row(
                row: "6", measured: "memory: RSS of one worker process (1 C service)", unit: .bytes,
                ours: workerRSS, baseline: nil, target: "—"),
        ]
    }

    /// The sandbox measured: the limits apply where the machine has a writable cgroup. Without
    /// `cpuQuota`, whose bandwidth accounting alone made the round trip 1.45× in a first run.
    static let sandbox = Sandbox(memoryMax: 256 << 20, tasksMax: 64, syscalls: .default)

    /// Nanoseconds to load and launch the one-service set with `settings`; its workers are
    /// ended after (not timed).
    private func timedStart(_ directory: String, _ settings: IsolationSettings) throws -> Double {
        let start = nowNanoseconds()
        let host = try loaded(directory, isolation: settings)
        let elapsed = nowNanoseconds() - start
        try? host.terminate()
        host.isolation?.endWorkers()
        return elapsed
    }

    private func loaded(_ directory: String, isolation: IsolationSettings?) throws(BenchError) -> HostCore.Host {
        let host = HostCore.Host(log: Log(level: .error))
        if let isolation {
            do { try host.startIsolation(isolation) } catch { throw BenchError("isolation: \(error)") }
        }
        let failures: [LoadFailure]
        do { failures = try host.load(LoadSettings(directories: [directory])).failures } catch {
            throw BenchError("loading \(directory): \(error)")
        }
        guard failures.isEmpty, host.services.count == 1 else { throw BenchError("loading \(directory): \(failures)") }
        do { try host.launch() } catch { throw BenchError("launch: \(error)") }
        return host
    }
}

/// The floor of row 5: a 48-byte message answered with 24 bytes by another process over a
/// socketpair, what any out-of-process call costs at least. The echo process lives until
/// ``stop()``, so each repetition measures round trips only.
final class PingPong {
    private let fd: Int32
    private let child: pid_t

    init() throws(BenchError) {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
            throw BenchError("socketpair failed")
        }
        let child = fork()
        if child == 0 {
            // The echo process: only async-signal-safe calls after fork.
            close(pair[0])
            var message = [UInt8](repeating: 0, count: 48)
            while true {
                var got = 0
                while got < 48 {
                    let n = message.withUnsafeMutableBytes { read(pair[1], $0.baseAddress! + got, 48 - got) }
                    if n <= 0 { _exit(0) }
                    got += n
                }
                _ = message.withUnsafeBytes { write(pair[1], $0.baseAddress!, 24) }
            }
        }
        close(pair[1])
        guard child > 0 else {
            close(pair[0])
            throw BenchError("fork failed: \(String(cString: strerror(errno)))")
        }
        (fd, self.child) = (pair[0], child)
    }

    /// `count` round trips.
    @inline(never)
    func roundTrips(_ count: Int) {
        var message = [UInt8](repeating: 7, count: 48)
        var answer = [UInt8](repeating: 0, count: 24)
        for _ in 0..<count {
            _ = message.withUnsafeMutableBytes { write(fd, $0.baseAddress!, 48) }
            var got = 0
            while got < 24 {
                let n = answer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, 24 - got) }
                if n <= 0 { return }
                got += n
            }
        }
    }

    /// Ends the echo process (it exits when its socket closes) and waits for it.
    func stop() {
        close(fd)
        var status: Int32 = 0
        _ = try? retryingOnInterrupt("waitpid", "the floor's child") { waitpid(child, &status, 0) }
    }
}
