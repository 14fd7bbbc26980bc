import Foundation
import Glibc

/// Row 3's health-check line (issue 42): what the interval health check costs the host, per
/// service and second, on an idle host of 100 C services that handle `healthCheck`. The host
/// runs twice on the same directory: once with no `healthCheck` in its configuration (no
/// timer), once with every service checked every `interval` seconds (short, so a window holds
/// thousands of checks). The CPU time the process spent in the window (every thread's
/// `/proc/PID/task/*/schedstat`, in ns) is compared; the difference per check, times 0.1 checks
/// a second, is the cost per service per second at the issue's 10 s interval. Target: 100
/// services at 10 s take at most 0.1% of one core, 10 µs per service per second.
@MainActor
struct HealthCostRow {
    let host: String
    let quick: Bool
    /// Raw figures for bench-results.json.
    private(set) var raw: [(String, Double)] = []

    static let services = 100
    static let interval = 0.05

    mutating func run(directory: String, root: String) throws(BenchError) -> [Row] {
        let window = quick ? 2.0 : 10.0
        let entries = (0..<Self.services).map { index -> String in
            let number = String(index)
            let id = "bench.c-service.s" + String(repeating: "0", count: 7 - number.count) + number
            return #""\#(id)":{"healthCheck":{"interval":\#(Self.interval),"timeout":1}}"#
        }
        let checked = root + "/health-checked.json"
        let idle = root + "/health-idle.json"
        try write(checked, #"{"services":{"# + entries.joined(separator: ",") + "}}")
        try write(idle, #"{"services":{}}"#)
        let quiet = try cpu(directory: directory, config: idle, root: root, window: window).nanoseconds
        let busy = try cpu(directory: directory, config: checked, root: root, window: window)
        guard busy.checks > 0 else { throw BenchError("row 3: no health check was made") }
        let perCheck = max(0, busy.nanoseconds - quiet) / Double(busy.checks)
        // At the issue's interval, 10 s: 0.1 checks per service per second.
        let perServiceSecond = perCheck / 10
        raw += [
            ("health.cpu_idle_ns", quiet), ("health.cpu_checked_ns", busy.nanoseconds),
            ("health.checks", Double(busy.checks)), ("health.per_check_ns", perCheck),
            ("health.per_service_second_ns", perServiceSecond),
        ]
        return [
            Row(
                row: "3",
                measured:
                    "the interval health check's CPU per service per second at a 10 s interval (100 C services, "
                    + "\(Int(window)) s at \(Self.interval) s, minus the same host idle; "
                    + String(format: "%.4f", perServiceSecond * 100 / 1e7) + "% of a core for 100)",
                unit: .nanoseconds, ours: perServiceSecond, baseline: nil,
                target: "≤ 0.1% of a core for 100 services (≤ 10 µs)", maxValue: 10_000)
        ]
    }

    /// The CPU time (ns) of a host on `directory` with `config` during `window` seconds once
    /// it is active, and the health checks it completed meanwhile.
    private func cpu(directory: String, config: String, root: String, window: Double) throws(BenchError) -> (
        nanoseconds: Double, checks: Int
    ) {
        let control = root + "/health.sock"
        var child = try Child(
            host,
            ["--plugins", directory, "--config", config, "--control", control, "--state-dir", root + "/health-state"],
            capture: 2)
        defer { child.finish(signal: SIGTERM) }
        guard child.waitFor("] active with ") else { throw BenchError("the host did not start:\n\(child.text)") }
        let fd = try ControlRow.connect(control)
        defer { close(fd) }
        let startChecks = try checks(fd)
        let start = Self.schedstat(child.pid)
        usleep(UInt32(window * 1_000_000))
        let end = Self.schedstat(child.pid)
        return (end - start, try checks(fd) - startChecks)
    }

    /// The health checks completed so far, summed over `list`.
    private func checks(_ fd: Int32) throws(BenchError) -> Int {
        let reply = try SettingsRow.ask(fd, #"{"command":"list"}"#).reply
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any],
            let services = object["services"] as? [[String: Any]]
        else { throw BenchError("row 3: an unreadable list reply") }
        return services.reduce(0) { $0 + (($1["health"] as? [String: Any])?["checks"] as? Int ?? 0) }
    }

    /// The CPU time of every thread of `pid`, in ns (`/proc/PID/task/*/schedstat`'s first field).
    static func schedstat(_ pid: pid_t) -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            return total + (Double(text.split(separator: " ").first ?? "") ?? 0)
        }
    }

    private func write(_ path: String, _ text: String) throws(BenchError) {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw BenchError("cannot write \(path)")
        }
        chmod(path, 0o600)
    }
}
