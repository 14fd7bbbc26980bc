import Foundation
import Glibc

/// Rows 3 and 6: the real `host` binary from exec to active, and its RSS once active, against
/// `bench-floor startup` (dlopen + servicehost_entry of the same files, nothing else); and
/// `host inspect` against `bench-floor load` over the largest C set.
struct StartupRows {
    /// One plugin set: "C" or "Swift", its size and directory.
    struct PluginSet {
        let language: String
        let count: Int
        let directory: String
        var key: String { "\(language.lowercased()).\(count)" }
    }

    let host: String
    let floor: String
    let reps: Int
    let warmUp: Bool
    /// Added to the host's environment (its state and runtime directories).
    let hostEnvironment: [String: String]
    /// The fixed cost's baselines: an empty Swift program linked like the host, and the same
    /// importing Foundation (scripts/bench builds both); nil leaves their rows out.
    var emptySwift: String? = nil
    var emptyFoundation: String? = nil
    /// The empty Swift program importing Dispatch (the host does), for a reference row.
    var emptyDispatch: String? = nil

    /// Raw figures for bench-results.json.
    private(set) var raw: [(String, Double)] = []

    private static let hostMarker = "] active with "
    private static let floorMarker = "bench-floor: active with "

    /// The rows for `sets`, which must hold an empty set (count 0) and, per language, a set of
    /// one plugin (the base of every per-plugin figure) and larger ones.
    mutating func run(_ sets: [PluginSet], inspectSet: PluginSet) throws(BenchError) -> [Row] {
        // Launch time (ns) and RSS (bytes) samples per set key and program.
        var time: [String: [Double]] = [:]
        var rss: [String: [Double]] = [:]
        // Minor page faults from exec to the marker, per set key and program.
        var faults: [String: [Double]] = [:]
        var inspect: [String: [Double]] = [:]
        // exec → exit samples: `host --version` and the empty program with `--exit`.
        var exits: [String: [Double]] = [:]
        // Small sets launch in milliseconds, where a per-plugin figure is a small difference of
        // two noisy times: they get more repetitions (4× up to 10 plugins, 2× up to 100).
        func repetitions(_ set: PluginSet) -> Int { set.count <= 10 ? 4 * reps : set.count <= 100 ? 2 * reps : reps }
        // The fixed cost first, in a block of its own: in the sets' loop below, the host's empty
        // start came first after the largest sets' launches (and `host inspect` of 1000 files)
        // and paid for their aftermath, ~0.3–0.5 ms, while the empty programs it is compared
        // with came after it. Here nothing heavy precedes, and every program starts as often
        // early as late in a repetition (the order reverses every other one).
        if let empty = sets.first(where: { $0.count == 0 }) {
            for rep in 0..<(4 * reps + (warmUp ? 1 : 0)) {
                let keep = !(warmUp && rep == 0)  // the first pass warms the page cache and loader
                // `version` and `exit` are the binary alone: `host --version` loads what every start
                // loads and does no work but one line, so against the empty program run to its exit
                // it is the share of the fixed cost that is the host's image and libraries.
                var order = ["host", "floor", "swift", "foundation", "dispatch", "version", "exit"]
                if rep % 2 == 1 { order.reverse() }
                for key in order {
                    switch key {
                    case "host":
                        let ours = try launch(
                            host, ["--plugins", empty.directory], marker: Self.hostMarker, environment: hostEnvironment)
                        guard keep else { continue }
                        time["host." + empty.key, default: []].append(ours.nanoseconds)
                        rss["host." + empty.key, default: []].append(ours.rss)
                        faults["host." + empty.key, default: []].append(ours.faults)
                    case "floor":
                        let floor = try launch(floor, ["startup", empty.directory], marker: Self.floorMarker)
                        guard keep else { continue }
                        time["floor." + empty.key, default: []].append(floor.nanoseconds)
                        rss["floor." + empty.key, default: []].append(floor.rss)
                    case "swift", "foundation", "dispatch":
                        guard
                            let program = [
                                "swift": emptySwift, "foundation": emptyFoundation, "dispatch": emptyDispatch,
                            ][key] ?? nil
                        else { continue }
                        let launched = try launch(program, [], marker: Self.hostMarker)
                        if keep {
                            time["\(key).empty", default: []].append(launched.nanoseconds)
                            faults["\(key).empty", default: []].append(launched.faults)
                        }
                    case "version":
                        guard emptySwift != nil else { continue }
                        let version = try runToExit(host, ["--version"])
                        if keep { exits["host.version", default: []].append(version) }
                    default:
                        guard let swift = emptySwift else { continue }
                        let exited = try runToExit(swift, ["--exit"])
                        if keep { exits["swift.empty", default: []].append(exited) }
                    }
                }
            }
        }
        let settle = sets.first(where: { $0.count == 0 })
        for rep in 0..<(4 * reps + (warmUp ? 1 : 0)) {
            let keep = !(warmUp && rep == 0)  // the first pass warms the page cache and loader
            // Not measured: a host and a floor with no plugins, so the first set measured does
            // not start right after the last repetition's largest sets and `host inspect` (the
            // first launch after those was 0.3–0.7 ms slower; one round of small launches
            // after them was not).
            if let settle {
                _ = try launch(
                    host, ["--plugins", settle.directory], marker: Self.hostMarker, environment: hostEnvironment)
                _ = try launch(floor, ["startup", settle.directory], marker: Self.floorMarker)
            }
            // Host and floor alternate on every set, so load from elsewhere hits both alike.
            for set in sets where set.count > 0 && rep < repetitions(set) + (warmUp ? 1 : 0) {
                let ours = try launch(
                    host, ["--plugins", set.directory], marker: Self.hostMarker, environment: hostEnvironment)
                let floor = try launch(floor, ["startup", set.directory], marker: Self.floorMarker)
                if keep {
                    time["host." + set.key, default: []].append(ours.nanoseconds)
                    time["floor." + set.key, default: []].append(floor.nanoseconds)
                    rss["host." + set.key, default: []].append(ours.rss)
                    rss["floor." + set.key, default: []].append(floor.rss)
                    faults["host." + set.key, default: []].append(ours.faults)
                    faults["floor." + set.key, default: []].append(floor.faults)
                }
            }
            guard rep < reps + (warmUp ? 1 : 0) else { continue }
            let ours = try runToExit(host, ["inspect", inspectSet.directory], environment: hostEnvironment)
            let floor = try runToExit(floor, ["load", inspectSet.directory])
            if keep {
                inspect["host", default: []].append(ours)
                inspect["floor", default: []].append(floor)
            }
        }
        // The per-plugin rows are of cached starts (issue 13: one `stat` a file, no ELF read):
        // the measured starts warmed the registry, and each set's host says so itself.
        for set in sets where set.count > 0 {
            let counts = try registryCounts(set)
            guard counts.cached == set.count, counts.read == 0 else {
                throw BenchError(
                    "\(set.key): a start after the measured ones read \(counts.read) of \(set.count) files, not the registry's"
                )
            }
        }
        let t = time.mapValues(median)
        let m = rss.mapValues(median)
        for (key, value) in t.sorted(by: { $0.key < $1.key }) {
            raw.append(("startup.\(key).exec_to_active_ns", value))
        }
        for (key, value) in m.sorted(by: { $0.key < $1.key }) { raw.append(("memory.\(key).rss_bytes", value)) }
        let f = faults.mapValues(median)
        for (key, value) in f.sorted(by: { $0.key < $1.key }) { raw.append(("startup.\(key).minor_faults", value)) }
        let e = exits.mapValues(median)
        for (key, value) in e.sorted(by: { $0.key < $1.key }) { raw.append(("startup.\(key).exec_to_exit_ns", value)) }

        guard let empty = sets.first(where: { $0.count == 0 }) else { throw BenchError("no empty plugin set") }
        var rows: [Row] = []
        // Issue 13's target: the fixed cost against an empty Swift program (a Swift binary pays
        // the runtime's loading and start before main); the C floor shows what that is.
        if let swift = t["swift.empty"] {
            rows.append(
                .paired(
                    row: "3",
                    measured: "start-up, no plugins: exec → active (the fixed cost), vs an empty Swift program",
                    unit: .nanoseconds, ours: time["host." + empty.key] ?? [], baseline: time["swift.empty"] ?? [swift],
                    target: "≤ 1.3×", maxRatio: 1.3))
        }
        if let version = e["host.version"], let exit = e["swift.empty"] {
            rows.append(
                Row(
                    row: "3",
                    measured:
                        "for reference: `host --version` (image and libraries, no work): exec → exit, vs the empty Swift program run to its exit",
                    unit: .nanoseconds, ours: version, baseline: exit, target: "—"))
        }
        rows.append(
            .paired(
                row: "3",
                measured: "start-up, no plugins: exec → active (the fixed cost), vs the C floor (no Swift runtime)",
                unit: .nanoseconds, ours: time["host." + empty.key] ?? [], baseline: time["floor." + empty.key] ?? [],
                target: "—"))
        if let swift = t["swift.empty"], let foundation = t["foundation.empty"] {
            rows.append(
                Row(
                    row: "3",
                    measured:
                        "for reference: an empty Swift program importing Foundation vs one without (the host links no Foundation)",
                    unit: .nanoseconds, ours: foundation, baseline: swift, target: "—"))
        }
        if let swift = t["swift.empty"], let dispatch = t["dispatch.empty"] {
            rows.append(
                Row(
                    row: "3",
                    measured:
                        "for reference: an empty Swift program importing Dispatch vs one without (the host uses Dispatch's overlay)",
                    unit: .nanoseconds, ours: dispatch, baseline: swift, target: "—"))
        }
        // What the fixed cost is made of (README, Performance): page faults, each costing what
        // `bench-floor faults` measures on this machine.
        if let swift = f["swift.empty"] {
            rows.append(
                Row(
                    row: "3",
                    measured: "for reference: minor page faults, exec → active, no plugins, vs the empty Swift program",
                    unit: .count, ours: f["host." + empty.key], baseline: swift, target: "—"))
        }
        rows += try faultCosts()
        // Per plugin beyond the first: the first plugin of a language also pays one-time costs
        // (the floor, a C program, loads the Swift runtime with its first Swift plugin).
        func perPlugin(_ table: [String: Double], _ program: String, _ set: PluginSet, base: PluginSet) -> Double? {
            guard let total = table["\(program).\(set.key)"], let first = table["\(program).\(base.key)"] else {
                return nil
            }
            return (total - first) / Double(set.count - base.count)
        }
        // The same per repetition: the set's and the base's starts of one repetition (the
        // base, a small set, has at least as many repetitions as any larger one).
        func perPluginSamples(_ program: String, _ set: PluginSet, base: PluginSet) -> [Double] {
            let totals = time["\(program).\(set.key)"] ?? []
            let firsts = time["\(program).\(base.key)"] ?? []
            return zip(totals, firsts).map { ($0 - $1) / Double(set.count - base.count) }
        }
        for language in ["C", "Swift"] {
            let ofLanguage = sets.filter { $0.language == language }.sorted { $0.count < $1.count }
            guard let base = ofLanguage.first(where: { $0.count == 1 }) else { continue }
            for set in ofLanguage where set.count > 1 {
                rows.append(
                    .paired(
                        row: "3",
                        measured:
                            "start-up, \(set.count) \(language) plugins (registry cached): exec → active, per plugin",
                        unit: .nanoseconds, ours: perPluginSamples("host", set, base: base),
                        baseline: perPluginSamples("floor", set, base: base), target: "≤ 1.25× (+ fixed cost)",
                        maxRatio: 1.25))
            }
        }
        if let top = sets.filter({ $0.language == "C" }).max(by: { $0.count < $1.count }), top.count > 1,
            let base = sets.first(where: { $0.language == "C" && $0.count == 1 })
        {
            rows.append(
                Row(
                    row: "3",
                    measured:
                        "for reference: minor page faults per added C plugin (1 → \(top.count)), vs dlopen + entry",
                    unit: .count, ours: perPlugin(f, "host", top, base: base),
                    baseline: perPlugin(f, "floor", top, base: base),
                    target: "—"))
        }
        rows.append(
            .paired(
                row: "3",
                measured: "`host inspect`, \(inspectSet.count) \(inspectSet.language) plugins, vs dlopen + entry",
                unit: .nanoseconds, ours: inspect["host"] ?? [], baseline: inspect["floor"] ?? [],
                target: "≤ 0.2× (5× faster)", maxRatio: 0.2))
        raw += [
            ("inspect.host_ns", median(inspect["host"] ?? [])), ("inspect.floor_ns", median(inspect["floor"] ?? [])),
        ]

        rows.append(
            Row(
                row: "6", measured: "memory: host idle with no services (VmRSS) vs bench-floor idle", unit: .bytes,
                ours: m["host." + empty.key], baseline: m["floor." + empty.key], target: "—"))
        for language in ["C", "Swift"] {
            let ofLanguage = sets.filter { $0.language == language }.sorted { $0.count < $1.count }
            guard let base = ofLanguage.first(where: { $0.count == 1 }), let top = ofLanguage.last, top.count > 1 else {
                continue
            }
            rows.append(
                Row(
                    row: "6", measured: "memory: per added \(language) service (1 → \(top.count) plugins)",
                    unit: .bytes,
                    ours: perPlugin(m, "host", top, base: base), baseline: perPlugin(m, "floor", top, base: base),
                    target: "—"))
        }
        return rows
    }

    /// Row 11 (issue 15): a host whose plugins are all lazy reads their metadata and opens none,
    /// so its start-up is measured against `host inspect` of the same files (the registry cache
    /// serves both after the first run), and its memory against the same number of eager ones.
    mutating func lazyRows(lazy: PluginSet, eager: PluginSet) throws(BenchError) -> [Row] {
        var start: [Double] = []
        var inspect: [Double] = []
        var lazyRSS: [Double] = []
        var eagerRSS: [Double] = []
        for rep in 0..<(reps + (warmUp ? 1 : 0)) {
            let lazyHost = try launch(
                host, ["--plugins", lazy.directory], marker: Self.hostMarker, environment: hostEnvironment)
            let looked = try runToExit(host, ["inspect", lazy.directory], environment: hostEnvironment)
            let eagerHost = try launch(
                host, ["--plugins", eager.directory], marker: Self.hostMarker, environment: hostEnvironment)
            guard !(warmUp && rep == 0) else { continue }  // the first pass warms the caches
            start.append(lazyHost.nanoseconds)
            inspect.append(looked)
            lazyRSS.append(lazyHost.rss)
            eagerRSS.append(eagerHost.rss)
        }
        raw += [
            ("lazy.\(lazy.count).exec_to_active_ns", median(start)), ("lazy.\(lazy.count).inspect_ns", median(inspect)),
            ("lazy.\(lazy.count).rss_bytes", median(lazyRSS)), ("eager.\(eager.count).rss_bytes", median(eagerRSS)),
        ]
        return [
            .paired(
                row: "11",
                measured: "start-up, \(lazy.count) lazy C plugins: exec → active, vs `host inspect` of the same files",
                unit: .nanoseconds, ours: start, baseline: inspect, target: "≤ 1.25×", maxRatio: 1.25),
            .paired(
                row: "11",
                measured: "memory: host with \(lazy.count) lazy C plugins (VmRSS) vs \(eager.count) eager ones",
                unit: .bytes, ours: lazyRSS, baseline: eagerRSS, target: "—"),
        ]
    }

    /// Starts `program`, waits for `marker` on its stderr, reads its RSS and the minor page
    /// faults it has taken, then stops it with SIGTERM and waits for its exit.
    ///
    /// SIGTERM, not SIGKILL: a host killed outright leaves its crash sentinel and its control
    /// socket behind, so every next start would take the unclean-exit path (the report of the
    /// last run, the stale-socket probe) instead of the ordinary repeat launch the rows name.
    private func launch(_ program: String, _ arguments: [String], marker: String, environment: [String: String] = [:])
        throws(BenchError) -> (nanoseconds: Double, rss: Double, faults: Double)
    {
        let start = nowNanoseconds()
        var child = try Child(program, arguments, capture: 2, environment: environment)
        guard child.waitFor(marker) else {
            child.finish(signal: nil)
            throw BenchError(
                "\(program) \(arguments.joined(separator: " ")) ended before it was active:\n\(child.text)")
        }
        let elapsed = nowNanoseconds() - start
        let rss = child.residentBytes()
        let faults = child.minorFaults()
        child.finish(signal: SIGTERM)
        guard let rss, let faults else { throw BenchError("cannot read the RSS or page faults of \(program)") }
        return (elapsed, rss, faults)
    }

    /// What one minor page fault costs on this machine (`bench-floor faults`, over the host's
    /// own file, which every launch keeps in the page cache): an anonymous page written, a
    /// cached file page read (with the pages around it), a file page copied on write.
    private mutating func faultCosts() throws(BenchError) -> [Row] {
        var child = try Child(floor, ["faults", host, String(max(reps, 5))], capture: 1)
        let status = child.finish(signal: nil)
        let costs = child.text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
        guard status == 0, costs.count == 3 else {
            throw BenchError("bench-floor faults failed (\(status)): \(child.text)")
        }
        let kinds = [
            ("anonymous", "an anonymous page written (heap, runtime metadata)"),
            ("file", "a cached file page read, the 64 KiB around it mapped at once (a library's code)"),
            ("cow", "a file page written, copied (data the loader relocates)"),
        ]
        var rows: [Row] = []
        for ((key, what), cost) in zip(kinds, costs) {
            raw.append(("faults.\(key)_ns", cost))
            rows.append(
                Row(
                    row: "3", measured: "for reference: one minor page fault here: \(what)", unit: .nanoseconds,
                    ours: cost, baseline: nil, target: "—"))
        }
        return rows
    }

    /// The host's own count of `set`'s files answered by the registry and read (its
    /// `registry.used` record, at `--log-level debug` in JSON).
    private func registryCounts(_ set: PluginSet) throws(BenchError) -> (cached: Int, read: Int) {
        var child = try Child(
            host, ["--plugins", set.directory, "--log-level", "debug", "--log-format", "json"], capture: 2,
            environment: hostEnvironment)
        defer { child.finish(signal: SIGTERM) }
        guard child.waitFor(#""event":"host.ready""#) else {
            throw BenchError("\(set.key): the host did not start:\n\(child.text)")
        }
        for line in child.text.split(separator: "\n") {
            guard let record = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                record["event"] as? String == "registry.used", let fields = record["fields"] as? [String: Any],
                let cached = fields["cached"] as? Int, let read = fields["read"] as? Int
            else { continue }
            return (cached, read)
        }
        throw BenchError("\(set.key): the host logged no registry.used record:\n\(child.text)")
    }

}
