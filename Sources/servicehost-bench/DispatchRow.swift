import Foundation
@_spi(Benchmark) import HostCore

/// Row 1: one lifecycle event through the host's dispatcher to N in-process C services,
/// per service call, against (a) a Swift `[any DirectService]` array (PluggableApplicationDelegate),
/// (b) `NotificationCenter.post` to N observers (the AppLifecycleMediator) and (c) bench-floor's
/// C loop over the same services' function pointers (the floor).
///
/// Each round delivers willResignActive (reverse order) then didBecomeActive through the
/// host's real dispatcher (`benchmarkDeliver`, HostCore's `@_spi(Benchmark)`), without moving
/// the app's state: the dispatcher alone. Every baseline does exactly those two calls per
/// service per round. An extra row times the same two events as a real transition pair
/// (active → inactive → active), which also moves the state machine.
@MainActor
struct DispatchRow {
    let floor: String
    let reps: Int
    /// Service calls per repetition of each mechanism.
    let callsPerRep: Int

    // (a)'s target is issue 37's "done when" (≤ 2× at 1, 10 and 100 services); its table of
    // figures said 1.5×, which the rows before carried.

    /// The dispatcher's target against the C floor (issue 10): 4× at 1 service, 2× at 10, 1.2× at 100.
    static func floorTarget(_ count: Int) -> Double { count <= 1 ? 4 : count <= 10 ? 2 : 1.2 }

    /// Raw figures for bench-results.json.
    private(set) var raw: [(String, Double)] = []

    /// The rows for `sets` (service count, directory of that many C plugins).
    mutating func run(_ sets: [(count: Int, directory: String)]) throws(BenchError) -> [Row] {
        var rows: [Row] = []
        for (count, directory) in sets {
            let host = HostCore.Host(log: Log(level: .error))
            let failures: [LoadFailure]
            do { failures = try host.load(LoadSettings(directories: [directory])).failures } catch {
                throw BenchError("loading \(directory): \(error)")
            }
            guard failures.isEmpty, host.services.count == count else {
                throw BenchError("loaded \(host.services.count) of \(count) services: \(failures)")
            }
            do { try host.launch() } catch { throw BenchError("launch: \(error)") }
            // The same services with timing switched on: statistics alone, then statistics and
            // a trace (to /dev/null: the write(2) per call, not the disk).
            let statsHost = try Self.launched(directory, count: count, trace: false)
            let tracedHost = try Self.launched(directory, count: count, trace: true)

            let direct = DirectServices.make(count: count)
            let center = NotificationCenterObservers(count: count)
            defer { center.remove() }
            let rounds = max(1, callsPerRep / (2 * count))
            let calls = rounds * 2 * count

            // The C floor runs in its own process, once per repetition (it warms up itself), so
            // every repetition has its own floor.
            let samples = try interleavedSamples(
                reps: reps,
                [
                    { timed(units: calls) { deliverRounds(host, rounds) } },
                    { timed(units: calls) { directRounds(direct, rounds) } },
                    { timed(units: calls) { center.post(rounds: rounds) } },
                    { timed(units: calls) { hostRounds(host, rounds) } },
                    { timed(units: calls) { deliverRounds(statsHost, rounds) } },
                    { timed(units: calls) { deliverRounds(tracedHost, rounds) } },
                    { [self] in try self.floorNanoseconds(directory, rounds: rounds) },
                ])
            let medians = samples.map(median)
            let (withStats, withTrace) = (medians[4], medians[5])
            let (ours, swiftArray, notificationCenter, transitions) = (medians[0], medians[1], medians[2], medians[3])
            let floorFigure = medians[6]
            let (oursSamples, floorSamples) = (samples[0], samples[6])

            // Allocations per event (an event is one willResignActive or didBecomeActive to all N).
            let allocationRounds = 1000
            let events = 2 * allocationRounds
            let hostAllocations = MallocCounter.callsPerUnit(units: events) { deliverRounds(host, allocationRounds) }
            let transitionAllocations = MallocCounter.callsPerUnit(units: events) { hostRounds(host, allocationRounds) }
            let directAllocations = MallocCounter.callsPerUnit(units: events) { directRounds(direct, allocationRounds) }
            let centerAllocations = MallocCounter.callsPerUnit(units: events) { center.post(rounds: allocationRounds) }

            let label = "dispatch, \(count) service\(count == 1 ? "" : "s"), per service call"
            rows += [
                .paired(
                    row: "1", measured: "\(label) vs (a) Swift `[any Service]` array", unit: .nanoseconds,
                    ours: oursSamples, baseline: samples[1], target: "≤ 2×", maxRatio: 2),
                .paired(
                    row: "1", measured: "\(label) vs (b) `NotificationCenter.post`", unit: .nanoseconds,
                    ours: oursSamples, baseline: samples[2], target: "≤ 0.05× (20× faster)", maxRatio: 0.05),
                .paired(
                    row: "1", measured: "\(label) vs (c) C loop over function pointers (floor)", unit: .nanoseconds,
                    ours: oursSamples, baseline: floorSamples, target: "≤ \(Self.floorTarget(count))×",
                    maxRatio: Self.floorTarget(count)),
                Row(
                    row: "1",
                    measured: "heap allocations per lifecycle event, \(count) service\(count == 1 ? "" : "s"), vs (a)",
                    unit: .count, ours: hostAllocations, baseline: directAllocations, target: "0", maxValue: 0),
                .paired(
                    row: "1",
                    measured: "the same two events as a transition pair (moves the state machine), "
                        + "\(count) service\(count == 1 ? "" : "s"), per service call, vs (c) floor",
                    unit: .nanoseconds, ours: samples[3], baseline: floorSamples, target: "—"),
            ]
            let statsAllocations = MallocCounter.callsPerUnit(units: events) {
                deliverRounds(statsHost, allocationRounds)
            }
            rows += [
                .paired(
                    row: "1", measured: "\(label), with --stats (one clock read per call) vs off", unit: .nanoseconds,
                    ours: samples[4], baseline: oursSamples, target: "—"),
                Row(
                    row: "1",
                    measured:
                        "heap allocations per lifecycle event, \(count) service\(count == 1 ? "" : "s"), with --stats",
                    unit: .count, ours: statsAllocations, baseline: hostAllocations, target: "0", maxValue: 0),
                .paired(
                    row: "1", measured: "\(label), with --trace (to /dev/null) and --stats vs off", unit: .nanoseconds,
                    ours: samples[5], baseline: oursSamples, target: "—"),
            ]
            let key = "dispatch.\(count)"
            raw += [
                ("\(key).host_stats_ns_per_call", withStats), ("\(key).host_trace_stats_ns_per_call", withTrace),
                ("\(key).host_stats_allocations_per_event", statsAllocations ?? .nan),
            ]
            raw += [
                ("\(key).host_ns_per_call", ours), ("\(key).swift_array_ns_per_call", swiftArray),
                ("\(key).notification_center_ns_per_call", notificationCenter),
                ("\(key).c_floor_ns_per_call", floorFigure),
            ]
            raw += [
                ("\(key).host_transition_ns_per_call", transitions),
                ("\(key).host_transition_allocations_per_event", transitionAllocations ?? .nan),
            ]
            raw += [
                ("\(key).host_allocations_per_event", hostAllocations ?? .nan),
                ("\(key).swift_array_allocations_per_event", directAllocations ?? .nan),
                ("\(key).notification_center_allocations_per_event", centerAllocations ?? .nan),
            ]
        }
        return rows
    }

    /// A host on `directory`, launched, with statistics on and, with `trace`, a trace to /dev/null.
    private static func launched(_ directory: String, count: Int, trace: Bool) throws(BenchError) -> HostCore.Host {
        let writer: TraceWriter?
        do { writer = trace ? try TraceWriter(path: "/dev/null") : nil } catch { throw BenchError("trace: \(error)") }
        let host = HostCore.Host(log: Log(level: .error), trace: writer)
        do { try host.load(LoadSettings(directories: [directory])) } catch {
            throw BenchError("loading \(directory): \(error)")
        }
        guard host.services.count == count else {
            throw BenchError("loaded \(host.services.count) of \(count) services")
        }
        host.enableStatistics()
        do { try host.launch() } catch { throw BenchError("launch: \(error)") }
        return host
    }

    /// bench-floor's ns per call over the same plugin files, in its own process: one
    /// measured repetition after its own warm-up.
    private func floorNanoseconds(_ directory: String, rounds: Int) throws(BenchError) -> Double {
        var child = try Child(floor, ["dispatch", directory, String(rounds), "1"], capture: 1)
        let status = child.finish(signal: nil)
        let text = child.text.split(separator: "\n").first.map(String.init) ?? ""
        guard status == 0, let figure = Double(text) else {
            throw BenchError("bench-floor dispatch failed (\(status)): \(child.text)")
        }
        return figure
    }
}

/// The host's real dispatcher alone: `rounds` × (willResignActive, didBecomeActive), the
/// app's state untouched (it stays active).
@MainActor @inline(never)
func deliverRounds(_ host: HostCore.Host, _ rounds: Int) {
    for _ in 0..<rounds {
        host.benchmarkDeliver(.willResignActive, times: 1)
        host.benchmarkDeliver(.didBecomeActive, times: 1)
    }
}

/// The host's state machine and dispatcher: `rounds` transition pairs, two events each.
@MainActor @inline(never)
func hostRounds(_ host: HostCore.Host, _ rounds: Int) {
    for _ in 0..<rounds {
        try! host.transition(to: .inactive)
        try! host.transition(to: .active)
    }
}

// MARK: (a) a Swift array of services

/// ServiceKit's `ApplicationService`, redeclared here: the mechanism of
/// PluggableApplicationDelegate, where the app delegate calls each service directly. Sendable
/// (a marker, no witness): the global table of the classes is, and they hold nothing.
protocol DirectService: AnyObject, Sendable {
    init()
    func willFinishLaunching() -> Bool
    func didFinishLaunching() -> Bool
    func didBecomeActive()
    func willResignActive()
    func didEnterBackground()
    func willEnterForeground()
    func willTerminate()
    func didReceive(_ name: String)
}

extension DirectService {
    func willFinishLaunching() -> Bool { true }
    func didFinishLaunching() -> Bool { true }
    func didEnterBackground() {}
    func willEnterForeground() {}
    func willTerminate() {}
    func didReceive(_ name: String) {}
}

enum DirectServices {
    /// `count` services, each of its own class up to 100 (DirectServiceTypes.swift).
    static func make(count: Int) -> [any DirectService] {
        (0..<count).map { directServiceTypes[$0 % directServiceTypes.count].init() }
    }
}

/// The same two events per round as `hostRounds`, in the same orders.
@inline(never)
func directRounds(_ services: [any DirectService], _ rounds: Int) {
    for _ in 0..<rounds {
        for service in services.reversed() { service.willResignActive() }
        for service in services { service.didBecomeActive() }
    }
}

// MARK: (b) NotificationCenter

/// N observers of two notifications on `NotificationCenter.default`, the AppLifecycleMediator's
/// mechanism; synchronous delivery (`queue: nil`).
final class NotificationCenterObservers {
    private let willResign = Notification.Name("bench.willResignActive")
    private let didBecome = Notification.Name("bench.didBecomeActive")
    private var tokens: [NSObjectProtocol] = []

    init(count: Int) {
        for _ in 0..<count {
            tokens.append(NotificationCenter.default.addObserver(forName: willResign, object: nil, queue: nil) { _ in })
            tokens.append(NotificationCenter.default.addObserver(forName: didBecome, object: nil, queue: nil) { _ in })
        }
    }

    @inline(never)
    func post(rounds: Int) {
        for _ in 0..<rounds {
            NotificationCenter.default.post(name: willResign, object: nil)
            NotificationCenter.default.post(name: didBecome, object: nil)
        }
    }

    func remove() { for token in tokens { NotificationCenter.default.removeObserver(token) } }
}
