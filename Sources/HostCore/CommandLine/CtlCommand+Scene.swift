import ServiceJSON

/// `host ctl scene …`: the request it sends and the text it prints.
extension CtlCommand {
    /// The usage lines of `host ctl scene`.
    static let sceneUsage = """
      scene list
      scene connect NAME [--role ROLE] [--url URL]... [--activity TYPE[,URL]]...
      scene activate|resign|background|foreground|disconnect NAME
      scene open NAME URL
      scene activity NAME TYPE [--url URL] [--user-info JSON]
    """

    /// The members of a `scene` request from the operands after `scene`.
    static func sceneRequest(_ operands: [String]) throws(UsageError) -> [String: JSONValue] {
        var items = operands[...]
        guard let action = items.popFirst() else { throw UsageError("ctl scene: give an action\n\(sceneUsage)") }
        var request: [String: JSONValue] = ["action": .string(action)]
        if action == "list" {
            guard items.isEmpty else { throw UsageError("ctl scene list: expected no arguments") }
            return request
        }
        guard let name = items.popFirst(), !name.hasPrefix("--") else { throw UsageError("ctl scene \(action): expected NAME") }
        request["name"] = .string(name)
        switch action {
        case "connect":
            var urls: [JSONValue] = []
            var activities: [JSONValue] = []
            while let option = items.popFirst() {
                guard let value = items.popFirst() else { throw UsageError("ctl scene connect: \(option) needs a value") }
                switch option {
                case "--role": request["role"] = .string(value)
                case "--url": urls.append(.string(value))
                case "--activity":
                    let parts = value.split(separator: ",", maxSplits: 1).map(String.init)
                    guard let type = parts.first, !type.isEmpty else {
                        throw UsageError("ctl scene connect: --activity expects TYPE[,URL]")
                    }
                    var activity: [String: JSONValue] = ["type": .string(type)]
                    if parts.count > 1 { activity["url"] = .string(parts[1]) }
                    activities.append(.object(activity))
                default: throw UsageError("ctl scene connect: unknown option \(option)")
                }
            }
            if !urls.isEmpty { request["urls"] = .array(urls) }
            if !activities.isEmpty { request["activities"] = .array(activities) }
        case "open":
            guard items.count == 1 else { throw UsageError("ctl scene open: expected NAME URL") }
            request["url"] = .string(items.removeFirst())
        case "activity":
            guard let type = items.popFirst(), !type.hasPrefix("--") else {
                throw UsageError("ctl scene activity: expected NAME TYPE")
            }
            request["type"] = .string(type)
            while let option = items.popFirst() {
                guard let value = items.popFirst() else { throw UsageError("ctl scene activity: \(option) needs a value") }
                switch option {
                case "--url": request["url"] = .string(value)
                case "--user-info":
                    do { request["userInfo"] = try JSONValue(parsing: value) } catch {
                        throw UsageError("ctl scene activity: --user-info is not valid JSON: \(error)")
                    }
                default: throw UsageError("ctl scene activity: unknown option \(option)")
                }
            }
        default:
            // activate, resign, …: the host names the actions it knows.
            guard items.isEmpty else { throw UsageError("ctl scene \(action): expected NAME only") }
        }
        return request
    }

    /// A `scene` reply as text: the scene list, or the scene and the app state after the
    /// request, then what happened to each URL or activity.
    static func sceneText(of reply: JSONValue) -> String {
        let app = "app: \(reply["state"]?.stringValue ?? "?")"
        if let scenes = reply["scenes"]?.arrayValue {
            return (scenes.map(sceneLine) + [scenes.isEmpty ? "no scene is connected; \(app)" : app]).joined(separator: "\n")
        }
        var lines: [String] = []
        if reply["event"] != nil {
            // open, activity: the event line, as for `host ctl open`.
            lines.append(text(of: reply.removing("state"), command: "open"))
        }
        if let scene = reply["scene"], scene != .null { lines.append(sceneLine(scene) + "; " + app) }
        for delivery in reply["deliveries"]?.arrayValue ?? [] {
            lines.append("  " + text(of: delivery.adding("ok", true), command: "open"))
        }
        return lines.joined(separator: "\n")
    }

    /// "car: role car, foregroundActive, configuration car (chosen by dev.servicehost.cardisplay)".
    private static func sceneLine(_ scene: JSONValue) -> String {
        var line = "\(scene["name"]?.stringValue ?? "?"): role \(scene["role"]?.stringValue ?? "?"), "
            + "\(scene["state"]?.stringValue ?? "?"), configuration \(scene["configuration"]?.stringValue ?? "?")"
        if let by = scene["configuredBy"]?.stringValue { line += " (chosen by \(by))" }
        return line
    }
}

private extension JSONValue {
    func removing(_ key: String) -> JSONValue {
        guard case .object(var object) = self else { return self }
        object[key] = nil
        return .object(object)
    }

    func adding(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var object) = self else { return self }
        object[key] = value
        return .object(object)
    }
}
