import Glibc
import ServiceJSON
import ServiceABI

/// `host ctl [--control PATH] [--json] COMMAND …`: drives a running host.
public enum CtlCommand {
    /// What to send, where, and how to print the reply.
    public struct Invocation {
        public var control: String?
        public var json = false
        public var request: JSONValue
    }

    /// The usage of `host ctl`.
    public static let usage = """
    host ctl [--control PATH] [--json] COMMAND
      state | list | reload
      activate | resign | background | foreground | terminate | memory-warning
      push [--tap [ACTION]] FILE|-     ACTION: default, dismiss or an action id
      open URL
      activity TYPE [--url URL] [--user-info JSON]
      token HEX | token-error MESSAGE
      post NAME [JSON]
    \(sceneUsage)
    """

    /// Parses the arguments after `ctl`; `readInput` reads FILE or `-` (stdin) for push.
    public static func parse(_ arguments: [String], readInput: (String) throws -> [UInt8]) throws(UsageError) -> Invocation {
        var rest = arguments[...]
        var control: String?
        var json = false
        while let first = rest.first, first.hasPrefix("--") {
            rest.removeFirst()
            switch first {
            case "--control":
                guard let path = rest.popFirst() else { throw UsageError("ctl: --control needs a path") }
                control = path
            case "--json": json = true
            default: throw UsageError("ctl: unknown option \(first)")
            }
        }
        guard let command = rest.popFirst() else { throw UsageError("ctl: give a command\n\(usage)") }
        var request: [String: JSONValue] = ["command": .string(command)]
        let operands = Array(rest)
        func expect(_ count: Int, _ shape: String) throws(UsageError) {
            guard operands.count == count else { throw UsageError("ctl \(command): expected \(shape)") }
        }
        switch command {
        case "state", "list", "reload", "activate", "resign", "background", "foreground", "terminate", "memory-warning":
            try expect(0, "no arguments")
        case "push":
            var items = operands[...]
            if items.first == "--tap" {
                items.removeFirst()
                request["tap"] = true
                if items.count == 2 { request["action"] = .string(actionID(items.removeFirst())) }
            }
            guard items.count == 1, let source = items.first else {
                throw UsageError("ctl push: expected [--tap [ACTION]] FILE|-")
            }
            let bytes: [UInt8]
            do { bytes = try readInput(source) } catch {
                throw UsageError("ctl push: cannot read \(source == "-" ? "standard input" : source): \(error)")
            }
            do { request["payload"] = try JSONValue(parsing: bytes) } catch {
                throw UsageError("ctl push: \(source == "-" ? "standard input" : source) is not valid JSON: \(error)")
            }
        case "open":
            try expect(1, "URL")
            request["url"] = .string(operands[0])
        case "activity":
            var items = operands[...]
            guard let type = items.popFirst(), !type.hasPrefix("--") else { throw UsageError("ctl activity: expected TYPE") }
            request["type"] = .string(type)
            while let option = items.popFirst() {
                guard let value = items.popFirst() else { throw UsageError("ctl activity: \(option) needs a value") }
                switch option {
                case "--url": request["url"] = .string(value)
                case "--user-info":
                    do { request["userInfo"] = try JSONValue(parsing: value) } catch {
                        throw UsageError("ctl activity: --user-info is not valid JSON: \(error)")
                    }
                default: throw UsageError("ctl activity: unknown option \(option)")
                }
            }
        case "token":
            try expect(1, "HEX")
            request["hex"] = .string(operands[0])
        case "token-error":
            try expect(1, "MESSAGE")
            request["message"] = .string(operands[0])
        case "post":
            guard operands.count == 1 || operands.count == 2 else { throw UsageError("ctl post: expected NAME [JSON]") }
            request["name"] = .string(operands[0])
            if operands.count == 2 {
                do { request["payload"] = try JSONValue(parsing: operands[1]) } catch {
                    throw UsageError("ctl post: the payload is not valid JSON: \(error)")
                }
            }
        case "scene":
            request.merge(try sceneRequest(operands)) { _, new in new }
        default:
            throw UsageError("ctl: unknown command \(command)\n\(usage)")
        }
        return Invocation(control: control, json: json, request: .object(request))
    }

    private static func actionID(_ name: String) -> String {
        switch name {
        case "default": SH_ACTION_DEFAULT
        case "dismiss": SH_ACTION_DISMISS
        default: name
        }
    }

    /// The exit status for a reply: 0 handled, 1 error, 3 delivered but not handled.
    public static func status(of reply: JSONValue) -> Int32 {
        guard reply["ok"]?.boolValue == true else { return 1 }
        return reply["handled"]?.boolValue == false ? 3 : 0
    }

    /// The reply as text for a person.
    public static func text(of reply: JSONValue, command: String) -> String {
        if reply["ok"]?.boolValue != true { return reply["error"]?.stringValue ?? reply.serialized }
        switch command {
        case "scene":
            return sceneText(of: reply)
        case "state":
            var lines = ["state: \(reply["state"]?.stringValue ?? "?")", "services: \(reply["services"]?.intValue ?? 0)"]
            if let token = reply["deviceToken"]?.stringValue { lines.append("device token: \(token)") }
            if let busy = reply["busy"] {
                lines.append("busy: \(busy["service"]?.stringValue ?? "?") in \(busy["event"]?.stringValue ?? "?")")
            }
            if let stuck = reply["stuck"] {
                lines.append("stuck: \(stuck["service"]?.stringValue ?? "?") has not returned from"
                    + " \(stuck["event"]?.stringValue ?? "?") for \(stuck["seconds"]?.intValue ?? 0) s"
                    + " (its deadline is \(stuck["deadline"].map { $0.serialized } ?? "?") s)")
            }
            return lines.joined(separator: "\n")
        case "list":
            return (reply["services"]?.arrayValue ?? []).map { service in
                var line = "\(service["id"]?.stringValue ?? "?") \(service["version"]?.stringValue ?? "") "
                    + "(\(service["state"]?.stringValue ?? "?")) events: "
                    + (service["events"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ",")
                if let stuckIn = service["stuckIn"]?.stringValue { line += " stuck in: \(stuckIn)" }
                if let summary = service["failure"]?["summary"]?.stringValue {
                    line += " failed: \(summary); not restarted until its file changes"
                } else if let error = service["lastError"]?.stringValue {
                    line += " last error: \(error)"
                }
                return line
            }.joined(separator: "\n")
        case "reload":
            let names = { (key: String) in (reply[key]?.arrayValue ?? []).compactMap(\.stringValue) }
            var lines = ["added: \(names("added").joined(separator: ", "))", "removed: \(names("removed").joined(separator: ", "))",
                         "replaced: \(names("replaced").joined(separator: ", "))"]
            lines += names("failures").map { "failed: \($0)" }
            return lines.joined(separator: "\n")
        default:
            var parts: [String] = []
            if let event = reply["event"]?.stringValue { parts.append(event) }
            if let state = reply["state"]?.stringValue { parts.append("state: \(state)") }
            if let by = reply["handledBy"]?.stringValue { parts.append("handled by \(by)") }
            else if let receivers = reply["receivers"]?.arrayValue, !receivers.isEmpty {
                parts.append("delivered to " + receivers.compactMap(\.stringValue).joined(separator: ", "))
            }
            if let result = reply["result"]?.stringValue { parts.append("result: \(result)") }
            if let options = reply["presentation"]?.arrayValue {
                parts.append("presentation: " + (options.isEmpty ? "none" : options.compactMap(\.stringValue).joined(separator: ", ")))
            }
            if let answers = reply["answers"]?.objectValue {
                parts.append("answers: " + answers.keys.sorted().map { "\($0)=\(answers[$0]?.stringValue ?? "?")" }.joined(separator: ", "))
            }
            if let note = reply["note"]?.stringValue { parts.append(note) }
            return parts.joined(separator: "; ")
        }
    }
}
