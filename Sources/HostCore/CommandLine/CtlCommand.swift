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
        public var message = ControlMessage(.state)
        /// The request as it goes on the wire.
        public var request: JSONValue { message.json }
    }

    /// The options before the command.
    public static let table = OptionTable<Invocation>(
        "ctl",
        [
            .value("--control", "PATH", "the control socket (default: the host's)") { $0.control = $1 },
            .flag("--json", "print the host's reply as it came") { $0.json = true },
            .value("--timeout", "SECS", "give up when the host has not replied within SECS\n(default 30; for watch, its first reply)") {
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
            .optionalValue("--tap", "ACTION", "the user tapped it; ACTION: default, dismiss or an action id") { options, action in
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

    /// The usage of `host ctl`, its lines built from the option tables.
    public static var usage: String {
        """
        host ctl [--control PATH] [--json] [--timeout SECS] COMMAND
          state | list | reload
          activate | resign | background | foreground | terminate | memory-warning
          push \(synopsis(pushTable)) FILE|-
          open URL
          activity TYPE \(synopsis(activityTable))
          token HEX | token-error MESSAGE
          post NAME [JSON]
          request NAME [JSON]
          authorization [notDetermined|denied|authorized|provisional]
        \(sceneUsage)
        \(operateUsage)
        """
    }

    /// The text of `host ctl --help`: the usage, then every option.
    public static var help: String {
        """
        \(usage)

        OPTIONS
        \(table.help)
        push
        \(pushTable.help)
        activity, scene activity
        \(activityTable.help)
        scene connect
        \(sceneConnectTable.help)
        list
        \(listTable.help)
        service
        \(serviceTable.help)
        watch
        \(watchTable.help)

        exit status: 0 handled, 1 error, 2 bad arguments, 3 delivered but not handled
        """
    }

    /// "[--url URL] [--user-info JSON]".
    static func synopsis<Options>(_ table: OptionTable<Options>) -> String {
        table.options.map { "[\($0.synopsis)]" }.joined(separator: " ")
    }

    /// Parses the arguments after `ctl`; `readInput` reads FILE or `-` (stdin) for push.
    public static func parse(_ arguments: [String], readInput: (String) throws -> [UInt8]) throws(UsageError) -> Invocation {
        var rest = arguments[...]
        var invocation = Invocation()
        _ = try table.parse(&rest, into: &invocation, untilOperand: true)
        guard let name = rest.popFirst() else { throw UsageError("ctl: give a command\n\(usage)") }
        let arguments = Array(rest)
        func operands(_ count: Int, _ shape: String) throws(UsageError) -> [String] {
            let operands = try OptionTable<Void>("ctl \(name)", []).parse(arguments, from: ()).operands
            guard operands.count == count else { throw UsageError("ctl \(name): expected \(shape)") }
            return operands
        }
        let command: ControlMessage.Command
        switch name {
        case _ where try operate(name, arguments) != nil:
            command = try operate(name, arguments)!
        case _ where ControlMessage.Command.plain(name) != nil:
            _ = try operands(0, "no arguments")
            command = ControlMessage.Command.plain(name)!
        case "push":
            command = try push(arguments, readInput: readInput)
        case "open":
            command = .open(url: try operands(1, "URL")[0])
        case "activity":
            let parsed = try activityTable.parse(arguments, from: ControlMessage.Activity(type: ""))
            guard parsed.operands.count == 1 else { throw activityTable.error("expected TYPE") }
            var activity = parsed.options
            activity.type = parsed.operands[0]
            command = .activity(activity)
        case "token":
            command = .token(hex: try operands(1, "HEX")[0])
        case "token-error":
            command = .tokenError(message: try operands(1, "MESSAGE")[0])
        case "post", "request":
            let parsed = try OptionTable<Void>("ctl \(name)", []).parse(arguments, from: ()).operands
            guard parsed.count == 1 || parsed.count == 2 else { throw UsageError("ctl \(name): expected NAME [JSON]") }
            var payload: JSONValue?
            if parsed.count == 2 {
                do { payload = try JSONValue(parsing: parsed[1]) } catch {
                    throw UsageError("ctl \(name): the payload is not valid JSON: \(error)")
                }
            }
            command = name == "post" ? .post(name: parsed[0], payload: payload) : .request(name: parsed[0], payload: payload)
        case "scene":
            command = .scene(try scene(arguments))
        case "authorization":
            let parsed = try OptionTable<Void>("ctl authorization", []).parse(arguments, from: ()).operands
            guard parsed.count <= 1 else { throw UsageError("ctl authorization: expected [STATUS]") }
            command = .authorization(status: parsed.first)
        default:
            throw UsageError(
                "ctl: unknown command '\(name)'" + Suggestion.didYouMean(name, among: ControlMessage.Command.names)
                    + "\n\(usage)")
        }
        invocation.message = ControlMessage(command)
        return invocation
    }

    /// `push [--tap [ACTION]] FILE|-`: the payload read from the file or standard input.
    private static func push(_ arguments: [String], readInput: (String) throws -> [UInt8]) throws(UsageError) -> ControlMessage.Command {
        var parsed = try pushTable.parse(arguments, from: Push())
        // `--tap ACTION FILE`: the action may follow as an argument of its own.
        if parsed.options.tap, parsed.options.action == nil, parsed.operands.count == 2 {
            parsed.options.action = actionID(parsed.operands.removeFirst())
        }
        guard parsed.operands.count == 1, let source = parsed.operands.first else {
            throw pushTable.error("expected [--tap [ACTION]] FILE|-")
        }
        let name = source == "-" ? "standard input" : source
        let bytes: [UInt8]
        do { bytes = try readInput(source) } catch { throw pushTable.error("cannot read \(name): \(error)") }
        // Sent as its text, not parsed here: the host parses it once and services receive
        // these bytes. Only UTF-8 fits in the request's string (JSON accepts nothing else).
        guard let text = String(validating: bytes, as: UTF8.self) else { throw pushTable.error("\(name) is not valid UTF-8") }
        return .push(payload: .string(text), tap: parsed.options.tap, action: parsed.options.action)
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

    /// The exit status for a reply: 0 handled, 1 error, 3 delivered but not handled.
    public static func status(of reply: ControlReply) -> Int32 {
        guard reply.ok == true else { return 1 }
        return reply.handled == false ? 3 : 0
    }

    /// The reply as text for a person.
    public static func text(of reply: ControlReply, command: String) -> String {
        if reply.ok != true { return reply.error ?? reply.json.serialized }
        switch command {
        case "scene":
            return sceneText(of: reply)
        case "request":
            // The answer itself, as JSON: what a script pipes on.
            return reply.handled == true ? (reply.result ?? .null).serialized : (reply.note ?? "not answered")
        case "state":
            var lines = ["state: \(reply.state ?? "?")", "services: \(reply.status?.serviceCount ?? 0)"]
            if let token = reply.status?.deviceToken { lines.append("device token: \(token)") }
            if let busy = reply.status?.busy { lines.append("busy: \(busy.service) in \(busy.event)") }
            if let stuck = reply.status?.stuck {
                lines.append(
                    "stuck: \(stuck.service) has not returned from \(stuck.event) for \(JSONValue.number((stuck.seconds ?? 0).rounded(.towardZero)).serialized) s"
                        + " (its deadline is \(stuck.deadline.map { JSONValue.number($0).serialized } ?? "?") s)")
            }
            return lines.joined(separator: "\n")
        case "list":
            return (reply.services ?? []).map { service in
                var line = "\(service.id) \(service.version) (\(service.state)) events: " + service.events.joined(separator: ",")
                if let trigger = service.activatedBy { line += " opened (lazy) by: \(trigger)" }
                if let stuckIn = service.stuckIn { line += " stuck in: \(stuckIn)" }
                if let failure = service.failure {
                    line += " failed: \(failure.summary); not restarted until its file changes"
                } else if let error = service.lastError {
                    line += " last error: \(error)"
                }
                return line
            }.joined(separator: "\n")
        case "authorization":
            var line = "authorization: \(reply.authorization?.status ?? "?")"
            line += "; allowed: " + ((reply.authorization?.allowed ?? []).isEmpty ? "none" : reply.authorization!.allowed.joined(separator: ", "))
            if let receivers = reply.receivers { line += receivers.isEmpty ? "; nobody handles the change" : "; delivered to " + receivers.joined(separator: ", ") }
            if let note = reply.note { line += "; \(note)" }
            return line
        case "reload":
            let report = reply.reload
            var lines = [
                "added: \((report?.added ?? []).joined(separator: ", "))",
                "removed: \((report?.removed ?? []).joined(separator: ", "))",
                "replaced: \((report?.replaced ?? []).joined(separator: ", "))",
            ]
            lines += (report?.failures ?? []).map { "failed: \($0)" }
            return lines.joined(separator: "\n")
        default:
            return eventText(of: reply)
        }
    }

    /// An event reply: "openURL; handled by …; answers: …", with `state` when the reply has it.
    static func eventText(of reply: ControlReply) -> String {
        var parts: [String] = []
        if let event = reply.event { parts.append(event) }
        if let state = reply.state { parts.append("state: \(state)") }
        if let by = reply.handledBy {
            parts.append("handled by \(by)")
        } else if let receivers = reply.receivers, !receivers.isEmpty {
            parts.append("delivered to " + receivers.joined(separator: ", "))
        }
        if let result = reply.result?.stringValue { parts.append("result: \(result)") }
        if let options = reply.presentation?.arrayValue {
            parts.append("presentation: " + (options.isEmpty ? "none" : options.compactMap(\.stringValue).joined(separator: ", ")))
        }
        if let answers = reply.answers {
            parts.append("answers: " + answers.keys.sorted().map { "\($0)=\(answers[$0]!)" }.joined(separator: ", "))
        }
        if let note = reply.note { parts.append(note) }
        return parts.joined(separator: "; ")
    }
}
