import ServiceJSON

/// `host ctl scene …`: the request it sends and the text it prints.
extension CtlCommand {
    /// The options of `scene connect`: the scene's role and connection options.
    struct SceneConnect {
        var role: String?
        var urls: [String] = []
        var activities: [ControlMessage.Activity] = []
    }

    static let sceneConnectTable = OptionTable<SceneConnect>(
        "ctl scene connect",
        [
            .value("--role", "ROLE", "main, car or external") { $0.role = $1 },
            .value("--url", "URL", "a URL to open in it (repeatable)") { $0.urls.append($1) },
            .value("--activity", "TYPE[,URL]", "a user activity to continue in it (repeatable)") {
                options, text throws(UsageError) in
                let parts = text.split(separator: ",", maxSplits: 1).map(String.init)
                guard let type = parts.first, !type.isEmpty else { throw UsageError("expected TYPE[,URL]") }
                options.activities.append(ControlMessage.Activity(type: type, url: parts.count > 1 ? parts[1] : nil))
            },
        ])

    /// The usage lines of `host ctl scene`.
    static let sceneUsageLines = [
        UsageLine(9, "scene list"),
        UsageLine(
            10, "scene connect NAME \(synopsis(sceneConnectTable))",
            options: OptionsHelp(
                title: "scene connect", table: sceneConnectTable.help,
                manual: CommandSpec(
                    words: ["ctl", "scene"], synopsis: "ACTION NAME …",
                    summary: "Connects, moves and disconnects scenes.",
                    options: sceneConnectTable.specs,
                    operands: ["list", "connect"] + SceneMove.allCases.map(\.rawValue) + ["open", "activity"]))),
        UsageLine(11, "scene " + SceneMove.allCases.map(\.rawValue).joined(separator: "|") + " NAME"),
        UsageLine(12, "scene open NAME URL"),
        UsageLine(13, "scene activity NAME TYPE \(synopsis(activityTable))"),
    ]

    /// The usage of `host ctl scene`.
    static var sceneUsage: String { sceneUsageLines.map { "  " + $0.text }.joined(separator: "\n") }

    /// The `scene` request's members from the arguments after `scene`.
    static func scene(_ arguments: Arguments) throws(UsageError) -> [String: JSONValue] {
        let arguments = arguments.arguments
        guard let action = arguments.first else { throw UsageError("ctl scene: give an action\n\(sceneUsage)") }
        let rest = Array(arguments.dropFirst())
        var members: [String: JSONValue] = [ControlKey.action.rawValue: .string(action)]
        switch action {
        case "list":
            guard rest.isEmpty else { throw UsageError("ctl scene list: expected no arguments") }
        case "connect":
            let parsed = try sceneConnectTable.parse(rest, from: SceneConnect())
            guard parsed.operands.count == 1 else { throw sceneConnectTable.error("expected NAME") }
            members[.name] = .string(parsed.operands[0])
            if let role = parsed.options.role { members[.role] = .string(role) }
            if !parsed.options.urls.isEmpty { members[.urls] = .array(parsed.options.urls.map(JSONValue.string)) }
            if !parsed.options.activities.isEmpty {
                members[.activities] = .array(parsed.options.activities.map(\.json))
            }
        case "activity":
            let table = OptionTable("ctl scene activity", activityTable.options)
            let parsed = try table.parse(rest, from: ControlMessage.Activity(type: ""))
            guard parsed.operands.count == 2 else { throw table.error("expected NAME TYPE") }
            var activity = parsed.options
            activity.type = parsed.operands[1]
            members[.name] = .string(parsed.operands[0])
            activity.encode(into: &members)
        default:
            // open NAME URL; activate, resign, …: NAME (the host names the actions it knows).
            let expected = action == "open" ? "NAME URL" : "NAME"
            let table = OptionTable<Void>("ctl scene \(action)", [])
            let operands = try table.parse(rest, from: ()).operands
            guard operands.count == (action == "open" ? 2 : 1) else { throw table.error("expected \(expected)") }
            members[.name] = .string(operands[0])
            if action == "open" { members[.url] = .string(operands[1]) }
        }
        return members
    }

    /// A `scene` reply as text: the scene list, or the scene and the app state after the
    /// request, then what happened to each URL or activity.
    static func sceneText(of reply: ControlReply) -> String {
        let app = "app: \(reply.state ?? "?")"
        guard case .scene(let scene) = reply.body else { return "" }
        if let scenes = scene.scenes {
            var lines = scenes.map(sceneLine) + [scenes.isEmpty ? "no scene is connected; \(app)" : app]
            let elsewhere = (scene.savedScenes ?? []).filter { name in !scenes.contains { $0.name == name } }
            if !elsewhere.isEmpty { lines.append("saved state, not connected: " + elsewhere.joined(separator: ", ")) }
            return lines.joined(separator: "\n")
        }
        var lines: [String] = []
        // open, activity: the event line, as for `host ctl open`.
        if scene.delivery.event != nil { lines.append(eventText(scene.delivery, state: nil)) }
        if let entry = scene.scene ?? nil { lines.append(sceneLine(entry) + "; " + app) }
        for delivery in scene.deliveries ?? [] {
            lines.append("  " + eventText(delivery, state: nil))
        }
        return lines.joined(separator: "\n")
    }

    /// "car: role car, foregroundActive, configuration car (chosen by dev.servicehost.cardisplay)".
    private static func sceneLine(_ scene: ControlReply.SceneEntry) -> String {
        var line = "\(scene.name): role \(scene.role), \(scene.state), configuration \(scene.configuration)"
        if let by = scene.configuredBy { line += " (chosen by \(by))" }
        if scene.savedState { line += ", saved state" }
        return line
    }
}
