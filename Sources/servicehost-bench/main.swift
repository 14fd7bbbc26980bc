// servicehost-bench: the benchmark runner behind scripts/bench (issue 6). Every figure is a
// ratio against a baseline measured in the same run; each figure is a median of several
// repetitions. Prints a markdown table on stdout and writes bench-results.json.
//
//   servicehost-bench --host PATH --floor PATH --c-plugin PATH --swift-plugin PATH
//                     --pingpong PATH [--quick] [--json PATH] [--rows 1,4]
//   servicehost-bench --compare A.json B.json
//
// scripts/bench passes the release `host`, the cc-compiled bench-floor and C plugin template
// (Sources/bench-c), and libBenchSwiftService.so, and preloads Sources/bench-c/malloc_count.c
// (LD_PRELOAD) so the dispatch row can count allocations.
import Glibc
import HostCore

/// Writes a progress line to stderr.
func progress(_ message: String) {
    let line = Array("servicehost-bench: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

func fail(_ message: String) -> Never {
    progress("error: \(message)")
    exit(1)
}

// `--compare A.json B.json`: two earlier runs side by side, nothing measured.
if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "--compare" {
    let (first, second) = (CommandLine.arguments[2], CommandLine.arguments[3])
    do {
        print(
            Compare.markdown(try Compare.read(first), try Compare.read(second), names: (first, second)), terminator: "")
    } catch { fail(error.description) }
    exit(0)
}

// The command line.
let usage =
    "usage: servicehost-bench --host PATH --floor PATH --c-plugin PATH --swift-plugin PATH --pingpong PATH [--quick] [--json PATH] [--rows 1,4]"
var quick = false
// Rows to run (nil: all), for measuring one part while working on it.
var onlyRows: Set<String>?
var paths: [String: String] = [:]
var jsonPath = "bench-results.json"
// --fleet: only row 8, the fleet of hosts on one Mosquitto (issue 17).
var fleet = false
var argumentList = CommandLine.arguments.dropFirst()
while let argument = argumentList.popFirst() {
    switch argument {
    case "--quick": quick = true
    case "--fleet": fleet = true
    case "--json": jsonPath = argumentList.popFirst() ?? jsonPath
    case "--rows": onlyRows = Set((argumentList.popFirst() ?? "").split(separator: ",").map(String.init))
    case "--host", "--floor", "--c-plugin", "--swift-plugin", "--pingpong", "--mqtt-bridge", "--fleet-service",
        "--lazy-c-plugin", "--deeplinks", "--logger", "--health-c-plugin", "--sleep-bus", "--network-c-plugin",
        "--empty-swift", "--empty-foundation", "--empty-dispatch":
        paths[argument] = argumentList.popFirst()
    default: fail("unknown argument \(argument)\n\(usage)")
    }
}
guard let hostPath = paths["--host"], let floorPath = paths["--floor"], let cPluginPath = paths["--c-plugin"],
    let swiftPluginPath = paths["--swift-plugin"], let pingpongPath = paths["--pingpong"]
else { fail(usage) }

// The machine, quoted with the table.
func machine() -> [(String, String)] {
    var name = utsname()
    uname(&name)
    let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    let cpuinfo = (try? readFile("/proc/cpuinfo")).map { String(decoding: $0, as: UTF8.self) } ?? ""
    let model =
        cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
        .flatMap { $0.split(separator: ":", maxSplits: 1).last }.map { String($0.drop { $0 == " " }) } ?? "unknown"
    return [("nproc", String(sysconf(Int32(_SC_NPROCESSORS_ONLN)))), ("cpu", model), ("kernel", release)]
}

// Repetitions per figure (each figure is their median).
let reps = quick ? 3 : 11
let startupReps = quick ? 1 : 9
let farm: PluginFarm
do { farm = try PluginFarm() } catch { fail(error.description) }

@MainActor func wants(_ row: String) -> Bool { onlyRows?.contains(row) ?? true }

var rows: [Row] = []
var raw: [(String, Double)] = []
if fleet {
    guard let bridge = paths["--mqtt-bridge"], let service = paths["--fleet-service"] else {
        fail("--fleet needs --mqtt-bridge and --fleet-service")
    }
    // SERVICEHOST_BENCH_ROLLOUT_ONLY=1: the rollout alone, e.g. under `perf record -a`.
    if getenv("SERVICEHOST_BENCH_ROLLOUT_ONLY") == nil {
        var row = FleetRow(host: hostPath, bridge: bridge, service: service, pushes: quick ? 20 : 200)
        do { rows += try row.run(counts: quick ? [10] : [10, 50, 100]) } catch { fail(error.description) }
        raw += row.raw
    }
    // Issue 41: a bundle rolled out by `host fleet` to 50 hosts in one wave (10 with --quick).
    var rollout = FleetRolloutRow(host: hostPath, bridge: bridge, service: service)
    do { rows += try rollout.run(count: quick ? 10 : 50) } catch { fail(error.description) }
    raw += rollout.raw
}
if !fleet {
    do {
        progress("generating plugins in \(farm.root)")
        let cTemplate = try readFile(cPluginPath)
        let swiftTemplate = try readFile(swiftPluginPath)
        // No plugins: the fixed cost and idle memory. Per-plugin figures start from the 1-plugin sets.
        let empty = try farm.makeSet("empty", template: [], placeholder: "", count: 0)
        var sets = [StartupRows.PluginSet(language: "C", count: 0, directory: empty)]
        for count in [1, 10, 100, 1000] {
            sets.append(
                .init(
                    language: "C", count: count,
                    directory: try farm.makeSet(
                        "c-\(count)", template: cTemplate, placeholder: "bench.c-service.s0000000", count: count)))
        }
        // 1000 Swift copies are 400+ MB to write: the full run only.
        for count in quick ? [1, 10, 100] : [1, 10, 100, 1000] {
            sets.append(
                .init(
                    language: "Swift", count: count,
                    directory: try farm.makeSet(
                        "swift-\(count)", template: swiftTemplate, placeholder: "bench.swift-service.s0000000",
                        count: count)))
        }

        if wants("1") {
            progress(
                "row 1: dispatch (\(MallocCounter.isLoaded ? "counting allocations" : "no malloc counter: run through scripts/bench"))"
            )
            var dispatch = DispatchRow(floor: floorPath, reps: reps, callsPerRep: quick ? 20_000 : 1_000_000)
            rows += try dispatch.run(
                sets.filter { $0.language == "C" && (1...100).contains($0.count) }.map { ($0.count, $0.directory) })
            raw += dispatch.raw
        }

        func cSet(_ count: Int) -> String { sets.first { $0.language == "C" && $0.count == count }!.directory }
        if wants("2") {
            progress("row 2: payload events")
            var payload = PayloadRow(reps: reps, events: quick ? 200 : 5_000)
            rows += try payload.run(one: cSet(1), ten: cSet(10))
            raw += payload.raw
        }

        if wants("9") || wants("10") {
            progress("rows 9 and 10: JSON parsing")
            var json = JSONRow(floor: floorPath, directory: farm.root, reps: reps, quick: quick)
            rows += try json.run(tape: wants("9"), value: wants("10"))
            raw += json.raw
        }

        if wants("7") {
            progress("row 7: completions (RSS over \(quick ? "100 000" : "1 000 000") pushes)")
            var completions = CompletionRow(pushes: quick ? 100_000 : 1_000_000)
            rows += try completions.run(directory: cSet(1))
            raw += completions.raw
        }

        if wants("3") || wants("4") || wants("5") || wants("6") {
            progress("rows 3 and 6: start-up and memory (\(startupReps) repetitions)")
            var startup = StartupRows(
                host: hostPath, floor: floorPath, reps: startupReps, warmUp: !quick,
                hostEnvironment: farm.hostEnvironment, emptySwift: paths["--empty-swift"],
                emptyFoundation: paths["--empty-foundation"],
                emptyDispatch: paths["--empty-dispatch"])
            let startupRows = try startup.run(sets, inspectSet: sets.first { $0.language == "C" && $0.count == 1000 }!)
            raw += startup.raw
            rows += startupRows.filter { $0.row == "3" }
            if wants("3") {
                progress("row 3: signed plugins and deploys")
                var signatures = SignatureRows(host: hostPath, reps: reps, hostEnvironment: farm.hostEnvironment)
                rows += try signatures.run(
                    one: cSet(1), many: cSet(100), count: 100, template: cTemplate,
                    root: farm.root)
                raw += signatures.raw
                var deploy = DeployRow(host: hostPath, reps: reps)
                rows += try deploy.run(directory: cSet(10), root: farm.root)
                raw += deploy.raw
                if let healthPath = paths["--health-c-plugin"] {
                    progress("row 3: the interval health check's cost (100 services)")
                    let directory = try farm.makeSet(
                        "c-health-100", template: try readFile(healthPath), placeholder: "bench.c-service.s0000000",
                        count: HealthCostRow.services)
                    var health = HealthCostRow(host: hostPath, quick: quick)
                    rows += try health.run(directory: directory, root: farm.root)
                    raw += health.raw
                }
                if let logger = paths["--logger"] {
                    progress("row 3: a settings change delivered vs a restart")
                    var settings = SettingsRow(host: hostPath, logger: logger, reps: reps)
                    rows += try settings.run(root: farm.root)
                    raw += settings.raw
                }
            }
            progress("row 4: control channel")
            var control = ControlRow(
                host: hostPath, pingpong: pingpongPath, reps: reps, pipelined: quick ? 1_000 : 10_000,
                roundTrips: quick ? 500 : 5_000)
            rows += try control.run(directory: cSet(10), services: 10)
            raw += control.raw
            progress("row 4: control channel under load (\(ControlLoadRow.pipeliners) clients pipelining)")
            var load = ControlLoadRow(host: hostPath, roundTrips: quick ? 500 : 5_000)
            rows += try load.run(directory: cSet(10))
            raw += load.raw
            progress("rows 5 and 6: process isolation")
            var isolation = IsolationRow(host: hostPath, reps: reps, eventsPerRep: quick ? 2_000 : 20_000)
            let isolationRows = try isolation.run(
                directory: sets.first { $0.language == "C" && $0.count == 1 }!.directory)
            raw += isolation.raw
            rows += isolationRows.filter { $0.row == "5" }
            rows += startupRows.filter { $0.row == "6" }
            rows += isolationRows.filter { $0.row == "6" }
        }

        if wants("12"), let deepLinks = paths["--deeplinks"] {
            progress("row 12: the desktop's paths to a URL handler")
            var desktop = DesktopRow(host: hostPath, deepLinks: deepLinks, reps: startupReps)
            rows += try desktop.run(root: farm.root)
            raw += desktop.raw
        }

        if wants("13") {
            progress("row 13: system events (sleep and network)")
            var events = SystemEventsRow(
                host: hostPath, sleepBus: paths["--sleep-bus"], networkService: paths["--network-c-plugin"],
                reps: reps, hostEnvironment: farm.hostEnvironment)
            rows += try events.run(services: cSet(10), root: farm.root)
            raw += events.raw
        }

        if wants("11"), let lazyPath = paths["--lazy-c-plugin"] {
            progress("row 11: 1000 lazy C plugins")
            let lazy = StartupRows.PluginSet(
                language: "C", count: 1000,
                directory: try farm.makeSet(
                    "c-lazy-1000", template: try readFile(lazyPath), placeholder: "bench.c-service.s0000000",
                    count: 1000))
            var startup = StartupRows(
                host: hostPath, floor: floorPath, reps: startupReps, warmUp: !quick,
                hostEnvironment: farm.hostEnvironment)
            rows += try startup.lazyRows(lazy: lazy, eager: sets.first { $0.language == "C" && $0.count == 1000 }!)
            raw += startup.raw
        }
    } catch {
        farm.remove()
        fail(error.description)
    }
}
farm.remove()

let table = Report.markdown(rows)
let info = machine()
print(
    "Machine: " + info.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
        + (quick ? " (--quick: brief, not for quoting)" : ""))
print("")
print(table, terminator: "")
let json = Report.json(rows: rows, machine: info, quick: quick, raw: raw)
guard let file = fopen(jsonPath, "w") else { fail("cannot write \(jsonPath)") }
fputs(json, file)
fclose(file)
progress("wrote \(jsonPath)")
