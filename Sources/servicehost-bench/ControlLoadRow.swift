import Foundation
import HostCore
import Synchronization

/// Row 4 under load (issue 36): the p50/p99 of a well-behaved client's `state` round trips while
/// ``pipeliners`` other clients pipeline `{"command":"list"}` and never read (each connects
/// again once the host drops it for its unread replies), against the same round trips with no
/// other client. The real `host` on row 4's 10 C services; nothing pinned.
struct ControlLoadRow {
    let host: String
    let roundTrips: Int

    private(set) var raw: [(String, Double)] = []

    /// The clients that pipeline and never read.
    static let pipeliners = 50
    static let state = Array(#"{"command":"state"}"#.utf8) + [0x0A]
    /// Issue 36's target: the p99 under load at most this many times the p99 alone.
    static let targetRatio = 5.0

    /// Whether the pipeliners are to stop (read by their threads).
    private final class Stop: Sendable {
        let requested = Atomic<Bool>(false)
    }

    mutating func run(directory: String) throws(BenchError) -> [Row] {
        var template = Array("/tmp/servicehost-bench-load-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp: \(String(cString: strerror(errno)))") }
        let root = String(cString: made)
        let socketPath = root + "/control.sock"
        mkdir(root + "/state", 0o700)
        defer { _ = try? Process.run(URL(fileURLWithPath: "/bin/rm"), arguments: ["-rf", root]).waitUntilExit() }

        var child = try Child(
            host, ["--plugins", directory, "--control", socketPath, "--state-dir", root + "/state"], capture: 2)
        defer { child.finish() }
        guard child.waitFor("] active with ") else { throw BenchError("host did not become active:\n\(child.text)") }
        // The host logs each client it drops: its stderr is read to the end, so it never fills.
        let output = child.output
        Thread {
            var sink = [UInt8](repeating: 0, count: 1 << 16)
            while read(output, &sink, sink.count) > 0 {}
        }.start()
        let fd = try ControlRow.connect(socketPath)
        defer { close(fd) }

        let alone = try Self.latencies(fd, roundTrips)
        let stop = Stop()
        for _ in 0..<Self.pipeliners {
            Thread { Self.pipeline(socketPath, stop) }.start()
        }
        // Until every pipeliner is connected and its first burst read.
        usleep(500_000)
        // Within a deadline: a host that holds `state` for seconds behind the burst (main
        // before issue 36: 2–9 s each) still gives a figure, from the round trips it finished.
        let loaded = try Self.latencies(fd, roundTrips, warmUp: 0, within: 20e9)
        stop.requested.store(true, ordering: .relaxed)

        raw += [
            ("control.load.alone_p50_ns", alone.p50), ("control.load.alone_p99_ns", alone.p99),
            ("control.load.loaded_p50_ns", loaded.p50), ("control.load.loaded_p99_ns", loaded.p99),
            ("control.load.loaded_round_trips", Double(loaded.count)),
            ("control.load.pipeliners", Double(Self.pipeliners)),
        ]
        return [
            Row(
                row: "4",
                measured: "control channel: `state` round trip p99 while \(Self.pipeliners) clients pipeline "
                    + "`list` without reading (\(loaded.count) round trips), vs no other client",
                unit: .nanoseconds, ours: loaded.p99, baseline: alone.p99, target: "≤ 5×", maxRatio: Self.targetRatio)
        ]
    }

    /// `count` `state` round trips after `warmUp` unmeasured ones, or those that fit in
    /// `within` nanoseconds (at least one): their p50, p99 and number.
    static func latencies(_ fd: Int32, _ count: Int, warmUp: Int = 100, within: Double = .infinity)
        throws(BenchError) -> (
            p50: Double, p99: Double, count: Int
        )
    {
        var latency: [Double] = []
        let deadline = nowNanoseconds() + within
        for index in -warmUp..<count {
            let start = nowNanoseconds()
            ControlRow.writeAll(fd, state)
            try ControlRow.readLines(fd, 1)
            if index >= 0 { latency.append(nowNanoseconds() - start) }
            if start > deadline && !latency.isEmpty { break }
        }
        latency.sort()
        return (latency[latency.count / 2], latency[Int(Double(latency.count) * 0.99)], latency.count)
    }

    /// One client that writes `list` requests as fast as the host takes them and reads none,
    /// connecting again each time it is dropped, until `stop`.
    private static func pipeline(_ path: String, _ stop: Stop) {
        let burst = Array(String(repeating: #"{"command":"list"}"# + "\n", count: 2048).utf8)
        while !stop.requested.load(ordering: .relaxed) {
            guard let fd = try? ControlRow.connect(path) else { return }
            while !stop.requested.load(ordering: .relaxed) {
                let sent = burst.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 && errno != EINTR { break }
            }
            close(fd)
        }
    }
}
