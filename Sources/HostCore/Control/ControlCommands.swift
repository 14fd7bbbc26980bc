import ServiceABI
import ServiceJSON
import ServiceVocabulary

/// The control plane's commands, one row each (as ``EventKind``'s rows are the events): the
/// one declaration the wire parser, ``PlainRequest``, the grants of `sh_host.control`, `host
/// ctl` (its parser, usage and help), shell completion and the man page read.
///
/// Adding a command is a row here (with a case of ``ControlRequest/Command`` when it carries
/// new values) and its `perform` in ``ControlHandler``. The rows' order is the order clients
/// are told the names in; `UsageLine`s place each in `host ctl`'s usage.
public enum ControlCommands {
    /// Every command.
    public static let rows: [ControlCommandSpec] =
        [
            .plain("state", .state, grant: .events, fromSnapshot: true, line: 0),
            ControlCommandSpec(
                "list", grant: .events, fromSnapshot: true, plain: .list,
                usage: [
                    CtlCommand.UsageLine(0, "list"),
                    CtlCommand.UsageLine(
                        14, "list \(CtlCommand.synopsis(CtlCommand.listTable))",
                        options: CtlCommand.OptionsHelp(
                            title: "list", table: CtlCommand.listTable.help,
                            manual: CommandSpec(
                                words: ["ctl", "list"], synopsis: "[--all]",
                                summary: "Lists the services; --all adds every file and service not started, with why.",
                                options: CtlCommand.listTable.specs))),
                ],
                arguments: CtlCommand.list,
                decode: { members, _ throws(InputError) in try members.bool(.all) == true ? .operate(.listAll) : .list }
            ),
            .plain("reload", .reload, grant: .all, line: 0),
        ]
        + ControlRequest.Lifecycle.allCases.map { move in .plain(move.rawValue, .lifecycle(move), grant: .all, line: 1)
        }
        + [
            .plain("memory-warning", .memoryWarning, grant: .events, line: 1),
            ControlCommandSpec(
                "push", grant: .events,
                usage: [
                    CtlCommand.UsageLine(
                        2, "push \(CtlCommand.synopsis(CtlCommand.pushTable)) FILE|-",
                        options: CtlCommand.OptionsHelp(
                            title: "push", table: CtlCommand.pushTable.help,
                            manual: CommandSpec(
                                words: ["ctl", "push"], synopsis: "[--tap [ACTION]] FILE|-",
                                summary: "Delivers a push notification read from FILE or standard input.",
                                options: CtlCommand.pushTable.specs, operandIsPath: true)))
                ],
                arguments: CtlCommand.push,
                decode: { members, maxPayload throws(InputError) in
                    let payload = try members.required(.payload)
                    let tap = try members.bool(.tap) ?? false
                    let action = try members.string(.action)
                    // The text form is the payload's exact bytes; an object is taken as its serialization.
                    let text: [UInt8]
                    if case .string(let string) = payload {
                        text = Array(string.utf8)
                    } else {
                        text = Array(payload.serialized.utf8)
                    }
                    try ControlRequest.checkSize(text.count, .payload, maxPayload)
                    return .push(try PushPayload(parsing: text), tapAction: action ?? (tap ? SH_ACTION_DEFAULT : nil))
                }),
            ControlCommandSpec(
                "open", grant: .events, usage: [CtlCommand.UsageLine(3, "open URL")],
                arguments: { arguments throws(UsageError) in
                    [ControlKey.url.rawValue: .string(try arguments.operands(1, "URL")[0])]
                },
                decode: { members, _ throws(InputError) in .open(try OpenURLInput(try members.requiredString(.url))) }),
            ControlCommandSpec(
                "activity", grant: .events,
                usage: [
                    CtlCommand.UsageLine(
                        4, "activity TYPE \(CtlCommand.synopsis(CtlCommand.activityTable))",
                        options: CtlCommand.OptionsHelp(
                            title: "activity, scene activity", table: CtlCommand.activityTable.help,
                            manual: CommandSpec(
                                words: ["ctl", "activity"], synopsis: "TYPE [--url URL] [--user-info JSON]",
                                summary: "Continues a user activity.", options: CtlCommand.activityTable.specs)))
                ],
                arguments: CtlCommand.activity,
                decode: { members, maxPayload throws(InputError) in
                    .activity(try ControlMessage.Activity(members).input(maxPayload: maxPayload))
                }),
            ControlCommandSpec(
                "action", grant: .events, usage: [CtlCommand.UsageLine(4, "action ID")],
                arguments: { arguments throws(UsageError) in
                    [ControlKey.shortcut.rawValue: .string(try arguments.operands(1, "ID")[0])]
                },
                decode: { members, _ throws(InputError) in
                    let id = try members.requiredString(.shortcut)
                    if let problem = ShortcutID.problem(with: id) {
                        throw InputError("\"\(ControlKey.shortcut.rawValue)\": the quick action id \(problem)")
                    }
                    return .action(id)
                }),
            ControlCommandSpec(
                "token", grant: .all, usage: [CtlCommand.UsageLine(5, "token HEX")],
                arguments: { arguments throws(UsageError) in
                    [ControlKey.hex.rawValue: .string(try arguments.operands(1, "HEX")[0])]
                },
                decode: { members, _ throws(InputError) in
                    .token(try DeviceToken(hex: try members.requiredString(.hex)))
                }),
            ControlCommandSpec(
                "token-error", grant: .all, usage: [CtlCommand.UsageLine(5, "token-error MESSAGE")],
                arguments: { arguments throws(UsageError) in
                    [ControlKey.message.rawValue: .string(try arguments.operands(1, "MESSAGE")[0])]
                },
                decode: { members, _ throws(InputError) in
                    let message = try members.requiredString(.message)
                    guard message.utf8.count <= ControlRequest.maxMessage else {
                        throw InputError(
                            "token-error: the message is \(message.utf8.count) bytes, over the limit of \(ControlRequest.maxMessage)"
                        )
                    }
                    return .tokenError(message)
                }),
            ControlCommandSpec(
                "post", grant: .events, usage: [CtlCommand.UsageLine(6, "post NAME [JSON]")],
                arguments: CtlCommand.nameAndPayload,
                decode: { members, maxPayload throws(InputError) in
                    let (name, payload) = try ControlCommands.nameAndPayload(members, maxPayload)
                    return .post(name: name, payload: payload)
                }),
            ControlCommandSpec(
                "request", grant: .events, usage: [CtlCommand.UsageLine(7, "request NAME [JSON]")],
                arguments: CtlCommand.nameAndPayload,
                decode: { members, maxPayload throws(InputError) in
                    let (name, payload) = try ControlCommands.nameAndPayload(members, maxPayload)
                    return .request(name: name, payload: payload.map { Array($0.serialized.utf8) })
                }),
            ControlCommandSpec(
                "scene", grant: .all, usage: CtlCommand.sceneUsageLines, arguments: CtlCommand.scene,
                decode: { members, maxPayload throws(InputError) in
                    .scene(try SceneCommand(members, maxPayload: maxPayload))
                }),
            ControlCommandSpec(
                "authorization", grant: .all,
                usage: [
                    CtlCommand.UsageLine(
                        8, "authorization [" + AuthorizationStatus.allCases.map(\.name).joined(separator: "|") + "]")
                ],
                arguments: CtlCommand.authorization,
                decode: { members, _ throws(InputError) in
                    guard let name = try members.string(.status) else { return .authorization(nil) }
                    guard let status = AuthorizationStatus(name: name) else {
                        throw InputError(
                            "authorization: unknown status \"\(name)\" (one of "
                                + AuthorizationStatus.allCases.map(\.name).joined(separator: ", ") + ")")
                    }
                    return .authorization(status)
                }),
        ] + operating

    /// Every command name, as clients spell them.
    public static let names = rows.map(\.name)

    private static let index = Dictionary(uniqueKeysWithValues: rows.enumerated().map { ($1.name, $0) })

    /// The row of the command named `name`.
    static func row(named name: String) -> Int? { index[name] }

    /// The commands without members, read by ``PlainRequest`` straight from a line's bytes.
    static let plain = PlainTable(rows)

    /// The rows with a `plain` request, kept in memory allocated once and never freed, so that
    /// reading it costs no retain and release (a `static let` array is retained at each use,
    /// two atomic operations per table per request on the pipelined path).
    struct PlainTable: @unchecked Sendable {
        // @unchecked: the buffers are written once, in `init`, and only read after.
        /// Each name's bytes in ``names`` (`start`, `count`) and its row.
        let entries: UnsafeBufferPointer<(start: Int, count: Int, row: Int)>
        /// The names, one after another.
        let names: UnsafeBufferPointer<UInt8>
        /// Each entry's request.
        let commands: UnsafeBufferPointer<ControlRequest.Command>

        init(_ rows: [ControlCommandSpec]) {
            var entries: [(start: Int, count: Int, row: Int)] = []
            var names: [UInt8] = []
            var commands: [ControlRequest.Command] = []
            for (row, spec) in rows.enumerated() {
                guard let command = spec.plain else { continue }
                entries.append((names.count, spec.name.utf8.count, row))
                names += spec.name.utf8
                commands.append(command)
            }
            self.entries = UnsafeBufferPointer(Self.immortal(entries))
            self.names = UnsafeBufferPointer(Self.immortal(names))
            self.commands = UnsafeBufferPointer(Self.immortal(commands))
        }

        private static func immortal<Element>(_ elements: [Element]) -> UnsafeMutableBufferPointer<Element> {
            let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: elements.count)
            _ = buffer.initialize(from: elements)
            return buffer
        }
    }

    /// `post` and `request`: `name` (non-empty, at most ``ControlRequest/maxName`` bytes) and
    /// an optional `payload` within `maxPayload`.
    private static func nameAndPayload(
        _ members: ControlRequest.Members, _ maxPayload: Int
    ) throws(InputError) -> (String, JSONValue?) {
        let command = members.command
        let payload = try members.optional(.payload)
        let name = try members.requiredString(.name)
        if let payload { try ControlRequest.checkSize(payload, .payload, maxPayload) }
        guard !name.isEmpty else { throw InputError("\(command): \"\(ControlKey.name.rawValue)\" is empty") }
        guard name.utf8.count <= ControlRequest.maxName else {
            throw InputError(
                "\(command): the name is \(name.utf8.count) bytes, over the limit of \(ControlRequest.maxName)")
        }
        return (name, payload)
    }
}
