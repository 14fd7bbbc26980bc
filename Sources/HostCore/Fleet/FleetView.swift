import MQTTCodec
import ServiceJSON

/// What the broker retains about a fleet (issue 41), as `host fleet` reads it: each host's
/// `servicehost/<id>/state` (online, or the will's `offline`), `…/reported` and `…/desired`,
/// the published bundles' manifests and the rollout's record.
struct FleetView {
    /// Whether each host is online, by id (its state's `status`; `offline` is the bridge's will).
    var online: [String: Bool] = [:]
    var reports: [String: JSONValue] = [:]
    /// Each host's desired state as published (its text).
    var desired: [String: String] = [:]
    var manifests: [String: String] = [:]
    var rollout: FleetRolloutRecord?
    /// Where the hosts' topics are, `<root>/<hostId>/…` (`--prefix`; the bridges' `prefix`
    /// setting without the host id): `servicehost` by default.
    let root: String

    static let defaultRoot = "servicehost"

    /// The topics read, the hosts' under `root`.
    static func filters(root: String = defaultRoot, digest: String? = nil) -> [String] {
        [FleetRolloutRecord.topic, "\(root)/+/state", "\(root)/+/reported", "\(root)/+/desired"]
            + (digest.map { [FleetPublish.manifestsPrefix + $0] } ?? [])
    }

    /// Topics under `servicehost/` that are no host's.
    static let reserved: Set<String> = ["all", "bundles", "manifests", "rollouts", "fleet"]

    init(_ messages: [MQTTPublish] = [], root: String = defaultRoot) {
        self.root = root
        for message in messages { take(message) }
    }

    /// The topic of `host`'s `kind` (`state`, `reported`, `desired`).
    static func topic(_ host: String, _ kind: String, root: String) -> String { "\(root)/\(host)/\(kind)" }

    /// The host a message is about, when it is one of `<root>/<id>/<kind>`'s.
    mutating func take(_ message: MQTTPublish) {
        let text = String(decoding: message.payload, as: UTF8.self)
        if message.topic == FleetRolloutRecord.topic {
            rollout = message.payload.isEmpty ? nil : FleetRolloutRecord(text)
            return
        }
        if message.topic.hasPrefix(FleetPublish.manifestsPrefix) {
            manifests[String(message.topic.dropFirst(FleetPublish.manifestsPrefix.count))] = text
            return
        }
        guard message.topic.hasPrefix(root + "/") else { return }
        let parts = message.topic.dropFirst(root.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else { return }
        let host = String(parts[0])
        // Under `servicehost/`, the fleet's own topics are no host's.
        if root == Self.defaultRoot, Self.reserved.contains(host) { return }
        switch parts[1] {
        case "state":
            if message.payload.isEmpty {
                online[host] = nil
            } else {
                let state = try? JSONValue(parsing: message.payload)
                online[host] = state?["status"]?.stringValue == "online"
            }
        case "reported":
            reports[host] = message.payload.isEmpty ? nil : try? JSONValue(parsing: message.payload)
        case "desired":
            desired[host] = message.payload.isEmpty ? nil : text
        default: break
        }
    }

    /// Every host seen, by id.
    var hosts: [String] { Set(online.keys).union(reports.keys).sorted() }

    /// How the deploy of `digest` ended on `host`, from its report; nil while it goes on.
    func outcome(_ host: String, digest: String) -> FleetRolloutRecord.Outcome? {
        guard let report = reports[host], report["deploy"]?["digest"]?.stringValue == digest,
            let status = report["status"]?.stringValue
        else { return nil }
        let deploy = report["deploy"]
        switch status {
        case "applied": return .init(host: host, status: status)
        case "rolledBack", "refused":
            return .init(
                host: host, status: status, reason: deploy?["reason"]?.stringValue,
                service: deploy?["culprit"]?.stringValue, detail: deploy?["detail"]?.stringValue)
        default: return nil
        }
    }

    /// The services of `host`'s report that fail: a deploy's culprit (rolled back or refused),
    /// a service failed or restarting, a health check not healthy.
    func failing(_ host: String) -> [FleetRolloutRecord.Outcome] {
        guard let report = reports[host] else { return [] }
        var failing: [FleetRolloutRecord.Outcome] = []
        let status = report["status"]?.stringValue
        if status == "rolledBack" || status == "refused" {
            let deploy = report["deploy"]
            failing.append(
                .init(
                    host: host, status: status ?? "", reason: deploy?["reason"]?.stringValue,
                    service: deploy?["culprit"]?.stringValue, detail: deploy?["detail"]?.stringValue))
        }
        for service in report["services"]?.arrayValue ?? [] {
            let id = service["id"]?.stringValue
            let state = service["state"]?.stringValue ?? ""
            let health = service["health"]?["status"]?.stringValue
            if state == "failed" || state == "restarting" {
                failing.append(
                    .init(
                        host: host, status: state, reason: state, service: id,
                        detail: service["lastFailure"]?.stringValue ?? service["lastFailure"]?.serialized))
            } else if let health, health != "healthy" {
                failing.append(
                    .init(
                        host: host, status: state, reason: health, service: id,
                        detail: service["health"]?["reason"]?.stringValue))
            }
        }
        return failing
    }
}

/// A rollout's progress, retained on `servicehost/rollouts/current`: any `host fleet` sees it,
/// and a rollout interrupted goes on from it (`--resume`).
struct FleetRolloutRecord: Equatable {
    static let topic = "servicehost/rollouts/current"

    /// How one host's deploy ended (`applied`, `rolledBack`, `refused`, `noReport`), or what fails on it.
    struct Outcome: Equatable {
        var host: String
        var status: String
        var reason: String? = nil
        var service: String? = nil
        var detail: String? = nil

        var json: JSONValue {
            var object: [String: JSONValue] = ["host": .string(host), "status": .string(status)]
            if let reason { object["reason"] = .string(reason) }
            if let service { object["service"] = .string(service) }
            if let detail { object["detail"] = .string(detail) }
            return .object(object)
        }

        init(host: String, status: String, reason: String? = nil, service: String? = nil, detail: String? = nil) {
            self.host = host
            self.status = status
            self.reason = reason
            self.service = service
            self.detail = detail
        }

        init?(_ value: JSONValue) {
            guard let host = value["host"]?.stringValue, let status = value["status"]?.stringValue else { return nil }
            self.init(
                host: host, status: status, reason: value["reason"]?.stringValue,
                service: value["service"]?.stringValue, detail: value["detail"]?.stringValue)
        }
    }

    /// This run's id: a rollout resumed keeps it.
    var id: String
    var digest: String
    /// The desired state each host is given (the manifest, with `probation`), as text.
    var desired: String
    var hosts: [String]
    /// How many hosts each wave reaches in all (the last is `hosts.count` or fewer).
    var waves: [Int]
    /// The wave in progress (or the last one), from 0.
    var wave = 0
    /// `running`, `completed`, `stopped` (too many failures), `cancelled`.
    var status = "running"
    var maxFailures: Int
    /// Seconds a wave waits for its hosts' reports.
    var wait: Double
    var applied: [String] = []
    var failures: [Outcome] = []
    /// Each host's desired state before the rollout set it ("" for none), to put it back.
    var previous: [String: String] = [:]
    var startedAt: Double
    var updatedAt: Double

    /// The hosts of wave `index`.
    func members(_ index: Int) -> [String] {
        Array(hosts[(index == 0 ? 0 : waves[index - 1])..<waves[index]])
    }

    /// The record; with `full` false (status), without the desired state and the previous ones.
    func json(full: Bool = true) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(id), "digest": .string(digest), "hosts": .array(hosts.map(JSONValue.string)),
            "waves": .array(waves.map { .number(Double($0)) }), "wave": .number(Double(wave + 1)),
            "status": .string(status), "maxFailures": .number(Double(maxFailures)), "wait": .number(wait),
            "applied": .array(applied.map(JSONValue.string)), "failures": .array(failures.map(\.json)),
            "startedAt": .number(startedAt.rounded()), "updatedAt": .number(updatedAt.rounded()),
        ]
        if full {
            object["desired"] = .string(desired)
            object["previous"] = .object(previous.mapValues(JSONValue.string))
        }
        return .object(object)
    }

    init(
        id: String, digest: String, desired: String, hosts: [String], waves: [Int], maxFailures: Int, wait: Double,
        startedAt: Double
    ) {
        self.id = id
        self.digest = digest
        self.desired = desired
        self.hosts = hosts
        self.waves = waves
        self.maxFailures = maxFailures
        self.wait = wait
        self.startedAt = startedAt
        updatedAt = startedAt
    }

    /// The record in `text`, or nil when it is not one (a damaged record is not resumed).
    init?(_ text: String) {
        guard let value = try? JSONValue(parsing: Array(text.utf8)), let id = value["id"]?.stringValue,
            let digest = value["digest"]?.stringValue, let desired = value["desired"]?.stringValue,
            let hosts = value["hosts"]?.arrayValue?.compactMap(\.stringValue),
            let waves = value["waves"]?.arrayValue?.compactMap(\.intValue), !waves.isEmpty,
            waves.allSatisfy({ (0...hosts.count).contains($0) }), zip(waves, waves.dropFirst()).allSatisfy({ $0 < $1 }),
            let wave = value["wave"]?.intValue, (1...waves.count).contains(wave),
            let status = value["status"]?.stringValue
        else { return nil }
        self.init(
            id: id, digest: digest, desired: desired, hosts: hosts, waves: waves,
            maxFailures: value["maxFailures"]?.intValue ?? 0, wait: value["wait"]?.doubleValue ?? 300,
            // Whole seconds, as json() writes them: a record read back equals itself.
            startedAt: (value["startedAt"]?.doubleValue ?? 0).rounded())
        self.wave = wave - 1
        self.status = status
        applied = value["applied"]?.arrayValue?.compactMap(\.stringValue) ?? []
        failures = value["failures"]?.arrayValue?.compactMap(Outcome.init) ?? []
        previous = value["previous"]?.objectValue?.compactMapValues(\.stringValue) ?? [:]
        updatedAt = value["updatedAt"]?.doubleValue?.rounded() ?? startedAt
    }
}
