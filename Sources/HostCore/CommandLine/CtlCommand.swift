import Glibc
import ServiceABI
import ServiceJSON

/// `host ctl [--control PATH] [--json] [--timeout SECS] COMMAND …`: drives a running host.
public enum CtlCommand {
    /// What to send, where, and how to print the reply.
    public struct Invocation {
        /// `--control PATH`; nil: the default socket.
        public var control: String?
        /// `--json`: print the reply as it came.
        public var json = false
        /// `--timeout SECS`: how long to wait for the host's reply (for `watch`, its first).
        public var timeout = CtlCommand.defaultTimeout
        /// The request.
        public var message = ControlMessage(ControlMessage.Command("state"))
        /// Whether the reply is followed by a stream of records (`watch`).
        public var streams: Bool { message.command.name == "watch" }
        /// The request as it goes on the wire.
        public var request: JSONValue { message.json }
    }

    /// The options before the command.
    public static let table = OptionTable<Invocation>(
        "ctl",
        [
            .value("--control", "PATH", "the control socket (default: the host's)") { $0.control = $1 },
            .flag("--json", "print the host's reply as it came") { $0.json = true },
            .value(
                "--timeout", "SECS",
                "give up when the host has not replied within SECS\n(default 30; for watch, its first reply)"
            ) {
                options, text throws(UsageError) in options.timeout = try OptionValue.seconds(text)
            },
        ])

    /// How long `host ctl` waits for a reply unless `--timeout` says: a host whose main thread a
    /// service holds answers nothing, and a script should not wait for it forever.
    public static let defaultTimeout = 30.0

    /// The options of `push`.
    struct Push {
        var tap = false
        var action: String?
    }

    static let pushTable = OptionTable<Push>(
        "ctl push",
        [
            .optionalValue("--tap", "ACTION", "the user tapped it; ACTION: default, dismiss or an action id") {
                options, action in
                options.tap = true
                options.action = action.map(actionID)
            }
        ])

    /// The options of `activity` (and `scene activity`).
    static let activityTable = OptionTable<ControlMessage.Activity>(
        "ctl activity",
        [
            .value("--url", "URL", "its webpage URL") { $0.url = $1 },
            .value("--user-info", "JSON", "its user info, a JSON object") { options, text throws(UsageError) in
                options.userInfo = try json(text)
            },
        ])

    /// One line of `host ctl`'s usage: commands on the same `position` share a line (`state |
    /// list | reload`); `options`, when the command has an option table, is its part of the help
    /// and its man page entry.
    struct UsageLine: Sendable {
        let position: Int
        let text: String
        let options: OptionsHelp?

        init(_ position: Int, _ text: String, options: OptionsHelp? = nil) {
            self.position = position
            self.text = text
            self.options = options
        }
    }

    /// A command's options in `host ctl --help` (under `title`) and in the man page.
    struct OptionsHelp: Sendable {
        let title: String
        let table: String
        let manual: CommandSpec
    }

    /// Every row's usage lines, in their order in the usage.
    private static var usageLines: [UsageLine] {
        ControlCommands.rows.flatMap(\.usage).enumerated().sorted { ($0.1.position, $0.0) < ($1.1.position, $1.0) }.map(
            \.1)
    }

    /// The man page entries of the commands with options, in the order of their usage lines.
    static var manual: [CommandSpec] { usageLines.compactMap { $0.options?.manual } }

    /// The commands' synopses, one line per usage position (`state | list | reload`), built from
    /// the command table: `host ctl`'s usage and the CONTROL part of `host --help`.
    static var commandLines: [String] {
        var lines: [(position: Int, text: String)] = []
        for line in usageLines {
            if let last = lines.last, last.position == line.position {
                lines[lines.count - 1].text += " | " + line.text
            } else {
                lines.append((line.position, line.text))
            }
        }
        return lines.map(\.text)
    }

    /// The usage of `host ctl`, its lines built from the command table.
    public static var usage: String {
        (["host ctl [--control PATH] [--json] [--timeout SECS] COMMAND"] + commandLines.map { "  " + $0 }).joined(
            separator: "\n")
    }

    /// The text of `host ctl --help`: the usage, then every option.
    public static var help: String {
        let sections = usageLines.compactMap(\.options).map { "\($0.title)\n\($0.table)" }
        return """
            \(usage)

            OPTIONS
            \(table.help)
            \(sections.joined(separator: "\n"))

            exit status: \(ExitStatus.summary)
            """
    }

    /// The exit statuses of `host ctl`, declared once: its help, `host --help`, the man page
    /// and the README's tables are held against these.
    public enum ExitStatus: Int32, CaseIterable, Sendable {
        case handled = 0
        /// The host refused the request or it failed, or the host could not be reached.
        case error = 1
        /// A bad `host ctl` command line (a JSON argument that is not JSON included): nothing sent.
        case badArguments = 2
        case notHandled = 3

        /// "handled", "error", …
        public var meaning: String {
            switch self {
            case .handled: "handled"
            case .error: "error"
            case .badArguments: "bad arguments"
            case .notHandled: "delivered but not handled"
            }
        }

        /// "0 handled, 1 error, 2 bad arguments, 3 delivered but not handled".
        public static var summary: String { allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: ", ") }
    }

    /// "[--url URL] [--user-info JSON]".
    static func synopsis<Options>(_ table: OptionTable<Options>) -> String {
        table.options.map { "[\($0.synopsis)]" }.joined(separator: " ")
    }

    /// The arguments after a command's name, as its row reads them.
    struct Arguments {
        /// The command's name.
        let name: String
        let arguments: [String]
        /// Reads FILE or `-` (standard input) for push.
        let readInput: (String) throws -> [UInt8]

        /// Exactly `count` operands and no option, else "ctl NAME: expected SHAPE".
        func operands(_ count: Int, _ shape: String) throws(UsageError) -> [String] {
            let operands = try OptionTable<Void>("ctl \(name)", []).parse(arguments, from: ()).operands
            guard operands.count == count else { throw UsageError("ctl \(name): expected \(shape)") }
            return operands
        }
    }

    /// Parses the arguments after `ctl`; `readInput` reads FILE or `-` (stdin) for push.
    public static func parse(_ arguments: [String], readInput: (String) throws -> [UInt8]) throws(UsageError)
        -> Invocation
    {
        var rest = arguments[...]
        var invocation = Invocation()
        _ = try table.parse(&rest, into: &invocation, untilOperand: true)
        guard let name = rest.popFirst() else { throw UsageError("ctl: give a command\n\(usage)") }
        guard let row = ControlCommands.row(named: name) else {
            throw UsageError(
                "ctl: unknown command '\(name)'" + Suggestion.didYouMean(name, among: ControlCommands.names)
                    + "\n\(usage)")
        }
        let read = { (readInput: @escaping (String) throws -> [UInt8]) throws(UsageError) -> [String: JSONValue] in
            try ControlCommands.rows[row].arguments(Arguments(name: name, arguments: Array(rest), readInput: readInput))
        }
        let members = try withoutActuallyEscaping(readInput, do: read)
        invocation.message = ControlMessage(ControlMessage.Command(name, members))
        return invocation
    }

    /// `list [--all]`.
    static func list(_ arguments: Arguments) throws(UsageError) -> [String: JSONValue] {
        let parsed = try listTable.parse(arguments.arguments, from: OperateOptions())
        guard parsed.operands.isEmpty else { throw listTable.error("expected no arguments") }
        return parsed.options.all ? [ControlKey.all.rawValue: true] : [:]
    }

    /// `push [--tap [ACTION]] FILE|-`: the payload read from the file or standard input.
    static func push(_ arguments: Arguments) throws(UsageError) -> [String: JSONValue] {
        var parsed = try pushTable.parse(arguments.arguments, from: Push())
        // `--tap ACTION FILE`: the action may follow as an argument of its own.
        if parsed.options.tap, parsed.options.action == nil, parsed.operands.count == 2 {
            parsed.options.action = actionID(parsed.operands.removeFirst())
        }
        guard parsed.operands.count == 1, let source = parsed.operands.first else {
            throw pushTable.error("expected [--tap [ACTION]] FILE|-")
        }
        let name = source == "-" ? "standard input" : source
        let bytes: [UInt8]
        do { bytes = try arguments.readInput(source) } catch { throw pushTable.error("cannot read \(name): \(error)") }
        // Sent as its text, not parsed here: the host parses it once and services receive
        // these bytes. Only UTF-8 fits in the request's string (JSON accepts nothing else).
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw pushTable.error("\(name) is not valid UTF-8")
        }
        var members: [String: JSONValue] = [ControlKey.payload.rawValue: .string(text)]
        if parsed.options.tap { members[.tap] = true }
        if let action = parsed.options.action { members[.action] = .string(action) }
        return members
    }

    /// `activity TYPE [--url URL] [--user-info JSON]`.
    static func activity(_ arguments: Arguments) throws(UsageError) -> [String: JSONValue] {
        let parsed = try activityTable.parse(arguments.arguments, from: ControlMessage.Activity(type: ""))
        guard parsed.operands.count == 1 else { throw activityTable.error("expected TYPE") }
        var activity = parsed.options
        activity.type = parsed.operands[0]
        var members: [String: JSONValue] = [:]
        activity.encode(into: &members)
        return members
    }

    /// `post NAME [JSON]`, `request NAME [JSON]`: a payload that is not JSON is a bad argument.
    static func nameAndPayload(_ arguments: Arguments) throws(UsageError) -> [String: JSONValue] {
        let name = arguments.name
        let parsed = try OptionTable<Void>("ctl \(name)", []).parse(arguments.arguments, from: ()).operands
        guard parsed.count == 1 || parsed.count == 2 else { throw UsageError("ctl \(name): expected NAME [JSON]") }
        var members: [String: JSONValue] = [ControlKey.name.rawValue: .string(parsed[0])]
        if parsed.count == 2 {
            do { members[.payload] = try JSONValue(parsing: parsed[1]) } catch {
                throw UsageError("ctl \(name): the payload is not valid JSON: \(error)")
            }
        }
        return members
    }

    /// `authorization [STATUS]`.
    static func authorization(_ arguments: Arguments) throws(UsageError) -> [String: JSONValue] {
        let parsed = try OptionTable<Void>("ctl authorization", []).parse(arguments.arguments, from: ()).operands
        guard parsed.count <= 1 else { throw UsageError("ctl authorization: expected [STATUS]") }
        return parsed.first.map { [ControlKey.status.rawValue: .string($0)] } ?? [:]
    }

    /// A JSON value given on the command line.
    static func json(_ text: String) throws(UsageError) -> JSONValue {
        do { return try JSONValue(parsing: text) } catch { throw UsageError("not valid JSON: \(error)") }
    }

    private static func actionID(_ name: String) -> String {
        switch name {
        case "default": SH_ACTION_DEFAULT
        case "dismiss": SH_ACTION_DISMISS
        default: name
        }
    }

    /// The exit status for a reply: handled, error, or delivered but not handled.
    public static func status(of reply: ControlReply) -> Int32 {
        guard reply.ok == true else { return ExitStatus.error.rawValue }
        return (reply.handled == false ? ExitStatus.notHandled : ExitStatus.handled).rawValue
    }

    /// The reply as text for a person.
    public static func text(of reply: ControlReply, command: String) -> String {
        if reply.ok != true { return reply.error ?? reply.json.serialized }
        switch command {
        case "scene":
            return sceneText(of: reply)
        case "request":
            // The answer itself, as JSON: what a script pipes on.
            let delivery = reply.delivery
            return reply.handled == true ? (delivery.result ?? .null).serialized : (delivery.note ?? "not answered")
        case "state":
            var status: ControlReply.Status?
            if case .status(let body) = reply.body { status = body }
            var lines = ["state: \(reply.state ?? "?")", "services: \(status?.serviceCount ?? 0)"]
            if let token = status?.deviceToken { lines.append("device token: \(token)") }
            if let busy = status?.busy { lines.append("busy: \(busy.service) in \(busy.event)") }
            if let stuck = status?.stuck {
                lines.append(
                    "stuck: \(stuck.service) has not returned from \(stuck.event) for \(JSONValue.number((stuck.seconds ?? 0).rounded(.towardZero)).serialized) s"
                        + " (its deadline is \(stuck.deadline.map { JSONValue.number($0).serialized } ?? "?") s)")
            }
            return lines.joined(separator: "\n")
        case "list":
            return (reply.services ?? []).map { service in
                var line =
                    "\(service.id) \(service.version) (\(service.state)) events: "
                    + service.events.joined(separator: ",")
                if let trigger = service.activatedBy { line += " opened (lazy) by: \(trigger)" }
                if let stuckIn = service.stuckIn { line += " stuck in: \(stuckIn)" }
                if let health = service.isolation["health"], let status = health["status"]?.stringValue {
                    line += " health: \(status)" + (health["reason"]?.stringValue.map { " (\($0))" } ?? "")
                }
                if let failure = service.failure {
                    line += " failed: \(failure.summary); not restarted until its file changes"
                    if let resetAt = service.isolation["resetAt"]?.stringValue { line += " or \(resetAt)" }
                } else if let error = service.lastError {
                    line += " last error: \(error)"
                }
                return line
            }.joined(separator: "\n")
        case "authorization":
            var authorization: ControlReply.Authorization?
            if case .authorization(let body) = reply.body { authorization = body }
            var line = "authorization: \(authorization?.status ?? "?")"
            line +=
                "; allowed: "
                + ((authorization?.allowed ?? []).isEmpty ? "none" : authorization!.allowed.joined(separator: ", "))
            if let receivers = reply.delivery.receivers {
                line +=
                    receivers.isEmpty
                    ? "; nobody handles the change" : "; delivered to " + receivers.joined(separator: ", ")
            }
            if let note = reply.delivery.note { line += "; \(note)" }
            return line
        case "reload":
            var report: ControlReply.Reload?
            if case .reload(let body) = reply.body { report = body }
            var lines = [
                "added: \((report?.added ?? []).joined(separator: ", "))",
                "removed: \((report?.removed ?? []).joined(separator: ", "))",
                "replaced: \((report?.replaced ?? []).joined(separator: ", "))",
            ]
            if let live = report?.reconfigured, !live.isEmpty {
                lines.append("settings delivered live: \(live.joined(separator: ", "))")
            }
            if let waiting = report?.restartNeeded, !waiting.isEmpty {
                lines.append("restart needed (isolation keys read at start): \(waiting.joined(separator: ", "))")
            }
            lines += (report?.failures ?? []).map { "failed: \($0)" }
            return lines.joined(separator: "\n")
        default:
            return eventText(of: reply)
        }
    }

    /// An event reply: "openURL; handled by …; answers: …", with `state` when the reply has it.
    static func eventText(of reply: ControlReply) -> String { eventText(reply.delivery, state: reply.state) }

    /// A delivery as text, with the app state after it when there is one.
    static func eventText(_ reply: ControlReply.Delivery, state: String?) -> String {
        var parts: [String] = []
        if let event = reply.event { parts.append(event) }
        if let state { parts.append("state: \(state)") }
        if let by = reply.handledBy {
            parts.append("handled by \(by)")
        } else if let receivers = reply.receivers, !receivers.isEmpty {
            parts.append("delivered to " + receivers.joined(separator: ", "))
        }
        if let result = reply.result?.stringValue { parts.append("result: \(result)") }
        if let options = reply.presentation?.arrayValue {
            parts.append(
                "presentation: "
                    + (options.isEmpty ? "none" : options.compactMap(\.stringValue).joined(separator: ", ")))
        }
        if let answers = reply.answers {
            parts.append("answers: " + answers.keys.sorted().map { "\($0)=\(answers[$0]!)" }.joined(separator: ", "))
        }
        if let note = reply.note { parts.append(note) }
        return parts.joined(separator: "; ")
    }
}
