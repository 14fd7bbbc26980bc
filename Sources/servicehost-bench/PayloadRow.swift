import Foundation
import HostCore
import ServiceJSON

/// Row 2: a push payload (1 KiB, 4 KiB) through the host's real path, per event:
/// `PushPayload(parsing:)` (the one parse, as `host ctl push --payload FILE` or a control
/// request does), then `Host.push(_:tap:completion:)` while active → willPresentNotification
/// to every C service, each of which completes at once; the event ends when the merged
/// outcome reaches its completion on the main thread. The baseline parses the same bytes
/// once with ServiceJSON's `JSONValue(parsing:)`.
///
/// "Parsed at most once per event, never per service" is structural: the host flattens the
/// already parsed value into one `sh_json` tape per event (`EventArena.push`), which every
/// service reads. The row proves it by measurement: at 1 and 10 services, the cost each added
/// service adds, (t(10) − t(1)) ÷ 9, is compared with one parse; a parse per service would
/// make it at least 1×.
@MainActor
struct PayloadRow {
    let reps: Int
    /// Events per repetition.
    let events: Int

    private(set) var raw: [(String, Double)] = []

    mutating func run(one: String, ten: String) throws(BenchError) -> [Row] {
        let hosts = [try loaded(one, count: 1), try loaded(ten, count: 10)]
        var rows: [Row] = []
        let events = self.events
        for size in [1024, 4096] {
            let bytes = Self.payload(bytes: size)
            let samples = try interleavedSamples(
                reps: reps,
                [
                    { timed(units: events) { Self.parseOnly(bytes, events) } },
                    { timed(units: events) { Self.pushEvents(hosts[0], bytes, events) } },
                    { timed(units: events) { Self.pushEvents(hosts[1], bytes, events) } },
                ])
            let (parse, one, ten) = (median(samples[0]), median(samples[1]), median(samples[2]))
            let perService = (ten - one) / 9
            let perServiceSamples = zip(samples[2], samples[1]).map { ($0 - $1) / 9 }
            let label = "\(size / 1024) KiB"
            rows += [
                .paired(
                    row: "2",
                    measured:
                        "payload event, \(label) push to 10 C services (parse + Host.push → willPresentNotification, "
                        + "all completions in), per event, vs parsing the JSON once", unit: .nanoseconds,
                    ours: samples[2], baseline: samples[0], target: "—"),
                .paired(
                    row: "2",
                    measured: "payload event, \(label) push to 1 C service, per event, vs parsing the JSON once",
                    unit: .nanoseconds, ours: samples[1], baseline: samples[0], target: "—"),
                .paired(
                    row: "2",
                    measured: "payload event, \(label): cost per added service ((t(10) − t(1)) ÷ 9) vs one parse "
                        + "(a parse per service would be ≥ 1×)", unit: .nanoseconds,
                    ours: perServiceSamples, baseline: samples[0], target: "parsed ≤ 1× per event: < 1×", maxRatio: 1),
            ]
            raw += [
                ("payload.\(size).parse_ns", parse), ("payload.\(size).host_1_service_ns_per_event", one),
                ("payload.\(size).host_10_services_ns_per_event", ten),
                ("payload.\(size).per_added_service_ns", perService),
            ]
        }
        return rows
    }

    private func loaded(_ directory: String, count: Int) throws(BenchError) -> HostCore.Host {
        let host = HostCore.Host(log: Log(level: .error))
        let failures: [LoadFailure]
        do { failures = try host.load(LoadSettings(directories: [directory])).failures } catch {
            throw BenchError("loading \(directory): \(error)")
        }
        guard failures.isEmpty, host.services.count == count else {
            throw BenchError("loading \(directory): \(failures)")
        }
        do { try host.launch() } catch { throw BenchError("launch: \(error)") }
        // launch() ends active; check that a push reaches every service.
        var outcome: EventOutcome?
        host.push(try! PushPayload(parsing: Self.payload(bytes: 1024)), tap: nil) { outcome = $0 }
        while outcome == nil { _ = RunLoop.main.run(mode: .default, before: Date.distantFuture) }
        guard let outcome, outcome.handled, outcome.receivers.count == count else {
            throw BenchError(
                "a push to \(directory) did not reach its \(count) service(s): \(String(describing: outcome))")
        }
        return host
    }

    @inline(never)
    static func parseOnly(_ bytes: [UInt8], _ events: Int) {
        for _ in 0..<events {
            guard let value = try? JSONValue(parsing: bytes), case .object = value else { fatalError("bad payload") }
        }
    }

    /// `events` payload events, pipelined as a control connection would: every push is
    /// delivered at once, then the main queue runs until every outcome is in.
    @inline(never)
    static func pushEvents(_ host: HostCore.Host, _ bytes: [UInt8], _ events: Int) {
        var done = 0
        for _ in 0..<events {
            guard let payload = try? PushPayload(parsing: bytes) else { fatalError("bad payload") }
            host.push(payload, tap: nil) { _ in done += 1 }
        }
        while done < events { _ = RunLoop.main.run(mode: .default, before: Date.distantFuture) }
    }

    /// An APNs-shaped payload of exactly `bytes` bytes: an alert, and custom data (an array of
    /// small objects with strings and numbers) filled up to the size.
    static func payload(bytes size: Int) -> [UInt8] {
        let head =
            #"{"aps":{"alert":{"title":"Order shipped","body":"Your order #4711 is on its way"},"sound":"default","badge":3},"#
            + #""items":["#
        var text = head
        var index = 0
        while true {
            let item =
                (index == 0 ? "" : ",")
                + #"{"id":\#(1000 + index),"sku":"SKU-\#(index)-A","qty":\#(index % 7),"price":\#(index).99}"#
            if text.utf8.count + item.utf8.count + #"],"pad":""}"#.utf8.count > size { break }
            text += item
            index += 1
        }
        let tail = #"],"pad":""#
        let padding = size - text.utf8.count - tail.utf8.count - 2
        text += tail + String(repeating: "x", count: max(0, padding)) + #""}"#
        return Array(text.utf8)
    }
}
