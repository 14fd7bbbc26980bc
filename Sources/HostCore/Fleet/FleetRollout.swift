import Glibc
import MQTTCodec
import ServiceJSON

/// `host fleet rollout DIGEST --hosts GLOB|--file LIST --waves 1,10%,50%,100% --max-failures N
/// --wait 5m` (issue 41): sets each host's retained `servicehost/<id>/desired` (under `--prefix`'s
/// root instead when given) to the bundle's
/// manifest wave by wave, and waits for every host of a wave to report (`…/reported`) the
/// deploy of that digest `applied`, `rolledBack` or `refused`; a host silent past `--wait`
/// counts as a failure (`noReport`), so no wave waits for ever. When the failures are more than
/// `--max-failures`, the rollout stops and puts the failed wave back to the desired state each
/// of its hosts had before. Its progress is retained on `servicehost/rollouts/current`
/// (``FleetRolloutRecord``) before each wave is set, so `host fleet status` sees it from
/// anywhere and a rollout interrupted goes on from it (`--resume`, or the same command again).
struct FleetRollout {
    let invocation: FleetCommand.Invocation
    let connection: FleetCommand.Connection
    let clock: FleetClock
    let print: (String) -> Void

    init(
        _ invocation: FleetCommand.Invocation, connection: FleetCommand.Connection, clock: FleetClock,
        print: @escaping (String) -> Void
    ) {
        self.invocation = invocation
        self.connection = connection
        self.clock = clock
        self.print = print
    }

    func run() throws(FleetError) -> FleetCommand.ExitStatus {
        let options = invocation.options
        let digest = invocation.operands.first
        let broker = try FleetConnection(connection, clock: clock)
        let root = options.prefix
        var view = FleetView(try broker.retained(FleetView.filters(root: root, digest: digest)), root: root)
        var record: FleetRolloutRecord
        if let current = view.rollout, current.status == "running", options.resume || current.digest == digest {
            record = current
            print(
                "resuming the rollout of \(current.digest) at wave \(current.wave + 1)/\(current.waves.count)")
        } else if let current = view.rollout, current.status == "running" {
            throw FleetError(
                "a rollout of \(current.digest) is in progress (wave \(current.wave + 1)/\(current.waves.count)): go on with it with --resume, or stop it with host fleet cancel"
            )
        } else if options.resume {
            throw FleetError(
                "no rollout in progress to resume (\(FleetRolloutRecord.topic): \(view.rollout?.status ?? "none"))")
        } else {
            guard let digest, let manifest = view.manifests[digest] else {
                throw FleetError(
                    "\(digest ?? ""): no bundle published on \(FleetPublish.manifestsPrefix)\(digest ?? "") (host fleet publish it first)"
                )
            }
            let hosts = try self.hosts(view)
            let waves: [Int]
            do throws(UsageError) { waves = try Self.waves(options.waves, hosts: hosts.count) } catch {
                throw FleetError("--waves: \(error.message)")
            }
            var desired = (try? JSONValue(parsing: Array(manifest.utf8)))?.objectValue ?? [:]
            if let probation = options.probation { desired["probation"] = .number(probation) }
            record = FleetRolloutRecord(
                id: Hex.string((0..<8).map { _ in UInt8.random(in: 0...255) }), digest: digest,
                desired: JSONValue.object(desired).serialized, hosts: hosts, waves: waves,
                maxFailures: options.maxFailures, wait: options.wait, startedAt: clock.wall())
            print(
                "rollout of \(digest) to \(hosts.count) host\(hosts.count == 1 ? "" : "s") in \(waves.count) wave\(waves.count == 1 ? "" : "s") (\(waves.map(String.init).joined(separator: ", "))), at most \(record.maxFailures) failure\(record.maxFailures == 1 ? "" : "s"), waiting \(Self.text(record.wait)) for each"
            )
        }
        while record.wave < record.waves.count {
            let index = record.wave
            let members = record.members(index)
            // A cancel that came since the last wave ends the rollout before another is set.
            for message in try broker.arrivedSoFar() { view.take(message) }
            if let cancelled = Self.cancelled(view, record) { return cancelled }
            for host in members where record.previous[host] == nil { record.previous[host] = view.desired[host] ?? "" }
            record.status = "running"
            try save(&record, broker)
            let label = "wave \(index + 1)/\(record.waves.count)"
            print("\(label): \(members.count) host\(members.count == 1 ? "" : "s"): \(Self.list(members))")
            try broker.publish(
                members.map { (FleetView.topic($0, "desired", root: root), Array(record.desired.utf8)) }, retain: true)
            var outcomes: [String: FleetRolloutRecord.Outcome] = [:]
            for host in members { outcomes[host] = view.outcome(host, digest: record.digest) }
            let deadline = clock.now() + record.wait
            while outcomes.count < members.count, let message = try broker.receive(until: deadline) {
                view.take(message)
                if let cancelled = Self.cancelled(view, record) { return cancelled }
                for host in members where outcomes[host] == nil {
                    outcomes[host] = view.outcome(host, digest: record.digest)
                }
            }
            for host in members where outcomes[host] == nil {
                outcomes[host] = .init(
                    host: host, status: "noReport", reason: "noReport",
                    detail: "no report of \(record.digest) within \(Self.text(record.wait))")
            }
            let ended = members.compactMap { outcomes[$0] }
            let applied = ended.filter { $0.status == "applied" }.map(\.host)
            let failed = ended.filter { $0.status != "applied" }
            record.applied += applied
            record.failures += failed
            print("\(label): \(applied.count) applied, \(failed.count) failed")
            for failure in failed { print("  " + Self.text(failure)) }
            if record.failures.count > record.maxFailures {
                try broker.publish(
                    members.map {
                        (FleetView.topic($0, "desired", root: root), Array((record.previous[$0] ?? "").utf8))
                    },
                    retain: true)
                record.status = "stopped"
                try save(&record, broker)
                print(
                    "stopped: \(record.failures.count) failure\(record.failures.count == 1 ? "" : "s"), more than --max-failures \(record.maxFailures); \(label) put back to its previous desired state"
                )
                return .stopped
            }
            if index + 1 == record.waves.count { break }
            record.wave = index + 1
        }
        record.status = "completed"
        try save(&record, broker)
        print(
            "completed: \(record.applied.count) applied, \(record.failures.count) failed of \(record.hosts.count) host\(record.hosts.count == 1 ? "" : "s")"
        )
        return .done
    }

    /// The rollout's hosts: `--file`'s list (one id a line, `#` comments) or the hosts seen
    /// whose id matches `--hosts`.
    func hosts(_ view: FleetView) throws(FleetError) -> [String] {
        if let file = invocation.options.file {
            let bytes: [UInt8]
            do { bytes = try InputFile.read(file, limit: 16 << 20) } catch { throw FleetError("--file \(error)") }
            var hosts: [String] = []
            for (number, line) in String(decoding: bytes, as: UTF8.self).split(
                separator: "\n", omittingEmptySubsequences: false
            ).enumerated() {
                let id = String(line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
                    .trimmingCharacters()
                guard !id.isEmpty else { continue }
                guard !id.contains("/"), !id.contains("+"), !id.contains("#"), !id.contains(" ") else {
                    throw FleetError(
                        "--file \(file), line \(number + 1): '\(id)' is not a host id (no /, +, # or space)")
                }
                guard !hosts.contains(id) else {
                    throw FleetError("--file \(file), line \(number + 1): \(id) is listed twice")
                }
                hosts.append(id)
            }
            guard !hosts.isEmpty else { throw FleetError("--file \(file) lists no host") }
            return hosts
        }
        let glob = invocation.options.hosts ?? "*"
        let hosts = view.hosts.filter { fnmatch(glob, $0, 0) == 0 }
        guard !hosts.isEmpty else {
            throw FleetError(
                "--hosts \(glob): no host on \(connection.broker) matches (\(view.hosts.count) seen on \(view.root)/+/state)"
            )
        }
        return hosts
    }

    /// How many hosts each wave reaches in all, from `1,10%,50%,100%` and the number of hosts:
    /// a count, or a percentage rounded up; a wave that adds nobody is left out.
    static func waves(_ text: String, hosts: Int) throws(UsageError) -> [Int] {
        var waves: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let count: Int
            if part.hasSuffix("%") {
                guard let percent = Double(part.dropLast()), percent > 0, percent <= 100 else {
                    throw UsageError("'\(part)' is not a percentage of the hosts (1% to 100%)")
                }
                count = Int((percent * Double(hosts) / 100).rounded(.up))
            } else {
                guard let number = Int(part), number > 0 else {
                    throw UsageError("'\(part)' is not a number of hosts or a percentage (1,10%,50%,100%)")
                }
                count = number
            }
            let reached = min(count, hosts)
            if let last = waves.last {
                guard count >= last else {
                    throw UsageError("'\(part)' reaches fewer hosts than the wave before it: waves add up")
                }
                if reached == last { continue }
            }
            waves.append(reached)
        }
        return waves.filter { $0 > 0 }
    }

    /// The rollout's end when `host fleet cancel` cancelled it.
    static func cancelled(_ view: FleetView, _ record: FleetRolloutRecord) -> FleetCommand.ExitStatus? {
        guard let current = view.rollout, current.id == record.id, current.status == "cancelled" else { return nil }
        return .cancelled
    }

    func save(_ record: inout FleetRolloutRecord, _ broker: FleetConnection) throws(FleetError) {
        record.updatedAt = clock.wall()
        try broker.publish(FleetRolloutRecord.topic, Array(record.json().serialized.utf8), retain: true)
    }

    /// `host fleet cancel`: the rollout in progress ends. The hosts of its wave in progress that
    /// have not reported the bundle `applied` are put back to their previous desired state (one
    /// downloading stops; one in probation deploys the previous bundle when it ends); those that
    /// have keep it, as earlier waves do: its probation passed, and putting them back would be a
    /// second deploy nobody asked for (`host fleet rollout` of the previous digest does that).
    static func cancel(
        connection: FleetCommand.Connection, root: String, clock: FleetClock, print: (String) -> Void
    ) throws(FleetError) -> FleetCommand.ExitStatus {
        let broker = try FleetConnection(connection, clock: clock)
        let view = FleetView(try broker.retained(FleetView.filters(root: root)), root: root)
        guard var record = view.rollout, record.status == "running" else {
            throw FleetError(
                "no rollout in progress to cancel (\(FleetRolloutRecord.topic): \(view.rollout?.status ?? "none"))")
        }
        let members = record.members(record.wave)
        let applied = members.filter {
            view.outcome($0, digest: record.digest)?.status == "applied" && !record.applied.contains($0)
        }
        let back = members.filter { !applied.contains($0) && !record.applied.contains($0) }
        try broker.publish(
            back.map { (FleetView.topic($0, "desired", root: root), Array((record.previous[$0] ?? "").utf8)) },
            retain: true)
        record.applied += applied
        record.status = "cancelled"
        record.updatedAt = clock.wall()
        try broker.publish(FleetRolloutRecord.topic, Array(record.json().serialized.utf8), retain: true)
        print(
            "cancelled the rollout of \(record.digest) at wave \(record.wave + 1)/\(record.waves.count); \(back.count) host\(back.count == 1 ? "" : "s") put back to their previous desired state"
                + (applied.isEmpty ? "" : ", \(applied.count) keep it (applied: \(list(applied)))"))
        return .done
    }

    /// `h01` … : at most five ids, then how many more.
    static func list(_ hosts: [String]) -> String {
        hosts.count <= 5 ? hosts.joined(separator: " ") : hosts.prefix(4).joined(separator: " ") + " … \(hosts.last!)"
    }

    /// `h03 rolledBack: test.b signal (test.b did not start …)`.
    static func text(_ failure: FleetRolloutRecord.Outcome) -> String {
        var text = "\(failure.host) \(failure.status)"
        let what = [failure.service, failure.reason == failure.status ? nil : failure.reason].compactMap { $0 }
        if !what.isEmpty { text += ": " + what.joined(separator: " ") }
        if let detail = failure.detail { text += " (\(detail))" }
        return text
    }

    /// `5m`, `90s`, `1.5s`.
    static func text(_ seconds: Double) -> String {
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
        return seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }
}
