import Glibc
import ServiceJSON

/// `host fleet status [GLOB] [--json]` (issue 41): every host the broker retains a state or a
/// report of (whose id matches GLOB), as a table: host, online, generation (with "(drift)" when
/// it is not the one the fleet applied), status and failing services (a deploy's culprit with
/// its reason, a service failed or restarting, a health check not healthy); then the rollout's
/// record. `--json`: `{"hosts": […], "rollout": …}`.
enum FleetStatus {
    static func run(
        _ invocation: FleetCommand.Invocation, connection: FleetCommand.Connection, clock: FleetClock,
        print: (String) -> Void
    ) throws(FleetError) -> FleetCommand.ExitStatus {
        let broker = try FleetConnection(connection, clock: clock)
        let root = invocation.options.prefix
        let view = FleetView(try broker.retained(FleetView.filters(root: root)), root: root)
        let glob = invocation.operands.first ?? "*"
        let hosts = view.hosts.filter { fnmatch(glob, $0, 0) == 0 }
        if invocation.options.json {
            print(json(view, hosts: hosts).serialized)
        } else {
            print(text(view, hosts: hosts))
        }
        return .done
    }

    static func json(_ view: FleetView, hosts: [String]) -> JSONValue {
        .object([
            "hosts": .array(
                hosts.map { host in
                    let report = view.reports[host]
                    let deploy = report?["deploy"]
                    return .object([
                        "host": .string(host), "online": view.online[host].map(JSONValue.bool) ?? .null,
                        "generation": report?["generation"]?["number"] ?? .null,
                        "digest": report?["generation"]?["digest"] ?? .null,
                        "drift": .bool(Self.drifted(report)),
                        "desired": report?["desired"] ?? .null, "status": report?["status"] ?? .null,
                        "reason": deploy?["reason"] ?? .null, "culprit": deploy?["culprit"] ?? .null,
                        "detail": deploy?["detail"] ?? .null,
                        "failing": .array(view.failing(host).map(\.json)),
                    ])
                }),
            "rollout": view.rollout?.json(full: false) ?? .null,
        ])
    }

    /// Whether the host reported running another generation than the fleet applied (a deploy
    /// or rollback by hand since; MQTTBridge's `generation.drift`).
    static func drifted(_ report: JSONValue?) -> Bool { report?["generation"]?["drift"]?.boolValue == true }

    static func text(_ view: FleetView, hosts: [String]) -> String {
        var rows = [["HOST", "ONLINE", "GENERATION", "STATUS", "FAILING"]]
        for host in hosts {
            let report = view.reports[host]
            let failing = view.failing(host).map { failure in
                (failure.service ?? "deploy") + (failure.reason.map { " (\($0))" } ?? "")
            }
            rows.append([
                host, view.online[host].map { $0 ? "yes" : "no" } ?? "-",
                (report?["generation"]?["number"]?.intValue.map(String.init) ?? "-")
                    + (Self.drifted(report) ? " (drift)" : ""),
                report?["status"]?.stringValue ?? "-", failing.isEmpty ? "-" : failing.joined(separator: ", "),
            ])
        }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            (0..<4).map { row[$0] + String(repeating: " ", count: widths[$0] - row[$0].count + 2) }.joined() + row[4]
        }
        if let rollout = view.rollout {
            lines.append(
                "rollout of \(rollout.digest): \(rollout.status) at wave \(rollout.wave + 1)/\(rollout.waves.count), \(rollout.applied.count) applied, \(rollout.failures.count) failed of \(rollout.hosts.count)"
            )
            for failure in rollout.failures { lines.append("  " + FleetRollout.text(failure)) }
        }
        return lines.joined(separator: "\n")
    }
}
