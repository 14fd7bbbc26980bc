import Glibc

/// Row 3's deploy line (issue 40): `host ctl deploy` of a set whose files are those running
/// (staged, verified with the whole plan, switched to with every service kept) against `host
/// ctl reload` of the same host, each a `host ctl` process from exec to exit.
///
/// The host runs generation 1 (the set, deployed and accepted first), as a host that takes its
/// plugins by deploys does, so an unchanged file is linked to the generation in force's rather
/// than copied: what a deploy of an unchanged set costs there.
@MainActor
struct DeployRow {
    let host: String
    let reps: Int
    /// Raw figures for bench-results.json.
    private(set) var raw: [(String, Double)] = []

    /// The row for a host on `directory` (C plugins), its state and socket under `root`.
    mutating func run(directory: String, root: String) throws(BenchError) -> [Row] {
        let state = root + "/deploy-state"
        let control = root + "/deploy.sock"
        var child = try Child(host, ["--plugins", directory, "--state-dir", state, "--control", control], capture: 2)
        defer { child.finish(signal: SIGTERM) }
        guard child.waitFor("] active with ") else { throw BenchError("the host did not start:\n\(child.text)") }
        let ctl = ["ctl", "--control", control]
        let host = self.host
        // Generation 1, accepted after a short probation (not measured).
        _ = try runToExit(host, ctl + ["deploy", directory, "--probation", "0.2"])
        try Self.waitForCurrent(1, state: state)
        let samples = try interleavedSamples(
            reps: reps,
            [
                {
                    let time = try runToExit(host, ctl + ["deploy", directory, "--probation", "600"])
                    // Back to generation 1 (not measured), so the next deploy may start.
                    _ = try runToExit(host, ctl + ["deploy", "--cancel"])
                    return time
                },
                { try runToExit(host, ctl + ["reload"]) },
            ])
        raw += [("deploy.unchanged_ns", median(samples[0])), ("deploy.reload_ns", median(samples[1]))]
        return [
            .paired(
                row: "3",
                measured:
                    "`host ctl deploy` of the set running (10 C plugins unchanged: linked, every service kept), vs `host ctl reload`: exec → reply",
                unit: .nanoseconds, ours: samples[0], baseline: samples[1], target: "≤ 1.5×", maxRatio: 1.5)
        ]
    }

    /// Waits (up to 10 s) until `STATE/generations/current` names `generation`.
    private static func waitForCurrent(_ generation: Int, state: String) throws(BenchError) {
        let path = state + "/generations/current"
        let deadline = nowNanoseconds() + 10e9
        while nowNanoseconds() < deadline {
            if let bytes = try? readFile(path), String(decoding: bytes, as: UTF8.self) == "\(generation)\n" { return }
            usleep(10_000)
        }
        throw BenchError("generation \(generation) was not accepted within 10 s (\(path))")
    }
}
