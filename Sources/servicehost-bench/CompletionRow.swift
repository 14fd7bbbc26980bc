import Foundation
import HostCore

/// Row 7: completions do not leak. One C service that completes at once receives
/// willPresentNotification for every push, through the real `Host.push` in this process; the
/// process's VmRSS after 10 000 pushes is the baseline, after 1 000 000 (100 000 with
/// --quick) the figure. Target: at most 1 MiB more (issue 11: completions reuse their memory).
@MainActor
struct CompletionRow {
    /// Pushes in all; the baseline is read after the first 10 000.
    let pushes: Int
    private(set) var raw: [(String, Double)] = []

    mutating func run(directory: String) throws(BenchError) -> [Row] {
        let host = HostCore.Host(log: Log(level: .error))
        do {
            let loaded = try host.load(LoadSettings(directories: [directory]))
            guard loaded.failures.isEmpty, host.services.count == 1 else {
                throw BenchError("loading \(directory): \(loaded.failures)")
            }
            try host.launch()
        } catch let error as BenchError { throw error } catch { throw BenchError("loading \(directory): \(error)") }
        let payload: PushPayload
        do { payload = try PushPayload(parsing: Array(#"{"aps":{"alert":"hello"},"n":1}"#.utf8)) } catch {
            throw BenchError("payload: \(error)")
        }
        let warmUp = 10_000
        try push(host, payload, warmUp)
        guard let before = residentSetBytes(of: getpid()) else { throw BenchError("no VmRSS in /proc/self/status") }
        try push(host, payload, pushes - warmUp)
        guard let after = residentSetBytes(of: getpid()) else { throw BenchError("no VmRSS in /proc/self/status") }
        raw += [("completions.rss_after_10000", before), ("completions.rss_after_\(pushes)", after)]
        return [
            Row(
                row: "7",
                measured: "memory: RSS growth from 10 000 to \(pushes) pushes with completions "
                    + "(1 C service, in process; baseline: RSS after 10 000)", unit: .bytes,
                ours: max(0, after - before), baseline: before, target: "≤ 1 MiB", maxValue: 1_048_576)
        ]
    }

    /// `count` pushes in batches of 10 000, each batch's outcomes awaited (a control
    /// connection's pipelining), so only the completions of one batch wait at once.
    private func push(_ host: HostCore.Host, _ payload: PushPayload, _ count: Int) throws(BenchError) {
        var left = count
        while left > 0 {
            let batch = min(left, 10_000)
            var done = 0
            var handled = 0
            for _ in 0..<batch {
                host.push(payload, tap: nil) { outcome in
                    done += 1
                    if outcome.handled { handled += 1 }
                }
            }
            while done < batch { _ = RunLoop.main.run(mode: .default, before: Date.distantFuture) }
            guard handled == batch else { throw BenchError("\(batch - handled) of \(batch) pushes were not handled") }
            left -= batch
        }
    }
}
