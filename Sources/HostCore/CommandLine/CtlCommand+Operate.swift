import ServiceJSON

/// `host ctl stats|blame|list --all|service|deploy|rollback|watch`: the requests that operate the host, and
/// the text they print.
extension CtlCommand {
    /// The options of the operating commands.
    struct OperateOptions {
        var all = false
        var force = false
        var logs = false
        var probation: Double?
        var cancel = false
    }

    static let listTable = OptionTable<OperateOptions>(
        "ctl list",
        [
            .flag("--all", "also every file and service looked at and not started, with why") { $0.all = true }
        ])
    static let serviceTable = OptionTable<OperateOptions>(
        "ctl service",
        [
            .flag("--force", "stop or restart a required service (policy: required)") { $0.force = true }
        ])
    static let watchTable = OptionTable<OperateOptions>(
        "ctl watch",
        [
            .flag("--logs", "log lines too, as they are written") { $0.logs = true }
        ])

    static let deployTable = OptionTable<OperateOptions>(
        "ctl deploy",
        [
            .value("--probation", "SECS", "how long the new set is watched before it is accepted (default 30)") {
                options, text throws(UsageError) in options.probation = try OptionValue.seconds(text)
            },
            .flag("--cancel", "stop the deploy in probation, rolling it back") { $0.cancel = true },
        ])

    /// `deploy DIR [--probation SECS]`, `deploy status`, `deploy --cancel`.
    static func deploy(_ arguments: Arguments) throws(UsageError) -> [String: JSONValue] {
        let parsed = try deployTable.parse(arguments.arguments, from: OperateOptions())
        let options = parsed.options
        if options.cancel {
            guard parsed.operands.isEmpty, options.probation == nil else {
                throw deployTable.error("--cancel takes no directory and no --probation")
            }
            return [ControlKey.action.rawValue: "cancel"]
        }
        guard parsed.operands.count == 1 else { throw deployTable.error("expected DIR, status or --cancel") }
        // "status" is the status; a folder named so is deployed as ./status.
        if parsed.operands[0] == "status" {
            guard options.probation == nil else { throw deployTable.error("status takes no --probation") }
            return [ControlKey.action.rawValue: "status"]
        }
        // The host resolves nothing against its own working directory: the client sends an absolute path.
        var members: [String: JSONValue] = [
            ControlKey.directory.rawValue: .string(WorkingDirectory.absolute(parsed.operands[0]))
        ]
        if let seconds = options.probation { members[.seconds] = .number(seconds) }
        return members
    }

    /// `service stop|start|restart|reset-failed ID [--force]`.
    static func service(_ arguments: Arguments) throws(UsageError) -> [String: JSONValue] {
        let parsed = try serviceTable.parse(arguments.arguments, from: OperateOptions())
        let actions = ControlRequest.Operate.ServiceAction.allCases.map(\.rawValue)
        guard parsed.operands.count == 2 else {
            throw serviceTable.error("expected \(actions.joined(separator: "|")) ID")
        }
        guard let action = ControlRequest.Operate.ServiceAction(rawValue: parsed.operands[0]) else {
            throw serviceTable.error(
                "unknown action '\(parsed.operands[0])' (one of \(actions.joined(separator: ", ")))"
                    + Suggestion.didYouMean(parsed.operands[0], among: actions))
        }
        if action != .stop && action != .restart && parsed.options.force {
            throw serviceTable.error("--force applies to stop and restart")
        }
        var members: [String: JSONValue] = [
            ControlKey.action.rawValue: .string(action.rawValue),
            ControlKey.service.rawValue: .string(parsed.operands[1]),
        ]
        if parsed.options.force { members[.force] = true }
        return members
    }

    /// An operating reply as text; nil for the others.
    public static func operateText(of reply: ControlReply, command: ControlMessage.Command) -> String? {
        guard reply.ok == true else { return nil }
        var members: [String: JSONValue] = [:]
        if case .operated(let operated) = reply.body { members = operated.members }
        switch command.name {
        case "stats":
            return statsText(members[.stats])
        case "blame":
            let rows = members[.blame]?.arrayValue ?? []
            if rows.isEmpty { return "no services" }
            return rows.map { row in
                func ms(_ key: String) -> String { milliseconds(row[key]?.doubleValue ?? 0) }
                return "\(ms("total_ns").leftPadded(10)) \(row["service"]?.stringValue ?? "?")"
                    + "  (inspect \(ms("inspect_ns")), dlopen \(ms("dlopen_ns")), entry \(ms("entry_ns")),"
                    + " attach \(ms("attach_ns")), launch \(ms("launch_ns")))"
            }.joined(separator: "\n")
        case "list" where command.members[.all] == true:
            var lines = [text(of: reply, command: "list")]
            var skipped: [JSONValue] = []
            if case .services(let list) = reply.body { skipped = list.skipped ?? [] }
            for entry in skipped {
                let services = (entry["services"]?.arrayValue ?? []).compactMap(\.stringValue)
                let what = entry["path"]?.stringValue ?? services.joined(separator: ", ")
                let ids =
                    entry["path"]?.stringValue != nil && !services.isEmpty
                    ? " (\(services.joined(separator: ", ")))" : ""
                lines.append(
                    "skipped \(what)\(ids): \(entry["reason"]?.stringValue ?? "?"): \(entry["message"]?.stringValue ?? "")"
                )
            }
            return lines.filter { !$0.isEmpty }.joined(separator: "\n")
        case "service":
            let action = command.members[.action]?.stringValue ?? "?"
            let id = command.members[.service]?.stringValue ?? "?"
            let state = reply.services?.first?.state ?? "?"
            let restarted = (members[.restarted]?.arrayValue ?? members[.reset]?.arrayValue ?? []).compactMap(
                \.stringValue)
            let verb = ["stop": "stopped", "start": "started", "reset-failed": "reset"][action] ?? "restarted"
            let done =
                restarted.count > 1
                ? "\(verb) \(restarted.joined(separator: ", ")) (they share a worker)"
                : "\(verb) \(id)"
            return "\(done): \(state); app: \(reply.state ?? "?")"
        case "deploy":
            return deployText(members, action: command.members[.action]?.stringValue)
        case "configure":
            let id = command.members[.service]?.stringValue ?? "?"
            guard let restarted = members[.restarted]?.arrayValue?.compactMap(\.stringValue) else {
                return "configured \(id): settings delivered live (didChangeSettings)"
            }
            return "configured \(id): restarted with the new settings (\(restarted.joined(separator: ", ")))"
        case "rollback":
            let to = members[.to]?.intValue.map { "generation \($0)" } ?? "the plugin directories"
            return "rolled back from generation \(members[.generation]?.intValue ?? 0); running \(to)"
        case "watch":
            return ""
        default:
            return nil
        }
    }

    /// `deploy DIR`, `deploy status` and `deploy --cancel` as text.
    private static func deployText(_ members: [String: JSONValue], action: String?) -> String {
        func names(_ key: ControlKey) -> String {
            "[" + (members[key]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ") + "]"
        }
        switch action {
        case "cancel"?:
            return "generation \(members[.generation]?.intValue ?? 0) rolled back (cancelled)"
        case "status"?:
            let status = members[.deploy]
            var lines = [
                "current: " + (status?["current"]?.intValue.map { "generation \($0)" } ?? "plugin directories")
            ]
            // Where each deploy came from, as the reader named it when under the working directory.
            func from(_ object: JSONValue) -> String {
                object["from"]?.stringValue.map { ", from " + WorkingDirectory.relative($0) } ?? ""
            }
            if let probation = status?["probation"] {
                lines.append(
                    "in probation: generation \(probation["generation"]?.intValue ?? 0), "
                        + Seconds.text(probation["remaining"]?.doubleValue ?? 0) + " s left" + from(probation))
            }
            for entry in status?["generations"]?.arrayValue ?? [] {
                var line = "generation \(entry["generation"]?.intValue ?? 0): \(entry["outcome"]?.stringValue ?? "?")"
                let culprit = entry["culprit"]?.stringValue.map { "\($0): " } ?? ""
                if let reason = entry["reason"]?.stringValue { line += " (\(culprit)\(reason))" }
                lines.append(line + from(entry))
            }
            return lines.joined(separator: "\n")
        default:
            if let culprit = members[.rolledBack]?.stringValue {
                return "generation \(members[.generation]?.intValue ?? 0) switched to and rolled back at once: "
                    + "required service \(culprit) did not start (requiredFailed)"
            }
            return "generation \(members[.generation]?.intValue ?? 0) switched to, in probation for "
                + Seconds.text(members[.seconds]?.doubleValue ?? 0) + " s: added \(names(.added)), removed "
                + "\(names(.removed)), replaced \(names(.replaced)), kept \(names(.kept))"
        }
    }

    /// `stats` as a table: one line per service and event kind.
    private static func statsText(_ stats: JSONValue?) -> String {
        var lines: [String] = []
        for service in stats?["services"]?.arrayValue ?? [] {
            lines.append(service["service"]?.stringValue ?? "?")
            let events = service["events"]?.arrayValue ?? []
            if events.isEmpty { lines.append("  no deliveries") }
            for event in events {
                let count = event["count"]?.intValue ?? 0
                let total = event["total_ns"]?.doubleValue ?? 0
                lines.append(
                    "  " + (event["event"]?.stringValue ?? "?").rightPadded(34) + "\(count)".leftPadded(8) + " calls"
                        + "\(event["failures"]?.intValue ?? 0)".leftPadded(6) + " failed  avg "
                        + microseconds(count > 0 ? total / Double(count) : 0) + "  max "
                        + microseconds(event["max_ns"]?.doubleValue ?? 0))
            }
        }
        // Each sandboxed worker's cgroup (issue 43), one line each under its services.
        let workers = stats?["workers"]?.arrayValue ?? []
        if !workers.isEmpty { lines.append("workers") }
        for worker in workers {
            let services = (worker["services"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")
            func limited(_ value: String, _ key: String, _ limit: (JSONValue) -> String?) -> String {
                value + (worker[key].flatMap(limit).map { " of " + $0 } ?? "")
            }
            var parts = ["pid \(worker["pid"]?.intValue ?? 0)"]
            if let bytes = worker["memoryBytes"]?.doubleValue {
                parts.append(
                    limited("memory " + mebibytes(bytes), "memoryMax") { $0.doubleValue.map(mebibytes) })
            }
            if let kills = worker["oomKills"]?.intValue, kills > 0 { parts.append("\(kills) OOM kills") }
            if let usec = worker["cpuUsec"]?.doubleValue {
                parts.append(limited("cpu " + milliseconds(usec * 1000), "cpuQuota") { $0.intValue.map { "\($0)%" } })
            }
            if let periods = worker["throttledPeriods"]?.intValue, periods > 0 { parts.append("\(periods) throttled") }
            if let tasks = worker["tasks"]?.intValue {
                parts.append(limited("tasks \(tasks)", "tasksMax") { $0.intValue.map(String.init) })
            }
            lines.append("  " + services + ": " + parts.joined(separator: ", "))
        }
        return lines.isEmpty ? "no services" : lines.joined(separator: "\n")
    }

    private static func mebibytes(_ bytes: Double) -> String { "\((bytes / 10_485.76).rounded() / 100) MiB" }

    /// One streamed record as text: a trace record as "seq t event service result dur", a log
    /// line as written.
    public static func watchText(_ record: JSONValue) -> String {
        if let log = record["log"]?.stringValue { return log }
        let seconds = (record["t"]?.doubleValue ?? 0) / 1e9
        var line = "\(Seconds.text(seconds)) #\(record["seq"]?.intValue ?? 0) \(record["event"]?.stringValue ?? "?")"
        if let scene = record["scene"]?.stringValue { line += " [\(scene)]" }
        line += " \(record["service"]?.stringValue ?? "?")"
        if let completion = record["completion"]?.stringValue { return line + " completed: \(completion)" }
        return line + " \(record["result"]?.stringValue ?? "?") in " + microseconds(record["dur_ns"]?.doubleValue ?? 0)
    }

    private static func milliseconds(_ nanoseconds: Double) -> String {
        let value = (nanoseconds / 1e4).rounded() / 100
        return "\(value) ms"
    }

    private static func microseconds(_ nanoseconds: Double) -> String {
        let value = (nanoseconds / 10).rounded() / 100
        return "\(value) µs"
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
    fileprivate func rightPadded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
