import ServiceJSON

/// One command of the control plane, declared once (a row of ``ControlCommands/rows``): its
/// name, how its members are decoded and validated into a ``ControlRequest/Command``, the grant
/// a service needs to send it, whether a stuck main thread's snapshot answers it, and how
/// `host ctl` spells it (synopsis, operands, options, help).
///
/// The wire parser, the fast path (``PlainRequest``), the grant check of `sh_host.control`,
/// `host ctl`'s parser, usage and help, shell completion and the man page all read these rows.
public struct ControlCommandSpec: Sendable {
    /// The command's name on the wire, which is also its name in `host ctl`.
    public let name: String
    /// What a service must be granted to send it through `sh_host.control`.
    public let grant: ControlGrant
    /// Whether the snapshot answers it while the main thread is stuck (``ControlSnapshot``).
    public let fromSnapshot: Bool
    /// The request when it has no members: what ``PlainRequest`` reads without a `JSONValue`.
    let plain: ControlRequest.Command?
    /// Reads and checks the members (after `command` and `id`); the limit is `--max-payload`.
    let decode: @Sendable (ControlRequest.Members, _ maxPayload: Int) throws(InputError) -> ControlRequest.Command
    /// `host ctl NAME …`: the request's members from the arguments after the name.
    let arguments: @Sendable (CtlCommand.Arguments) throws(UsageError) -> [String: JSONValue]
    /// Its lines in `host ctl`'s usage.
    let usage: [CtlCommand.UsageLine]

    init(
        _ name: String, grant: ControlGrant, fromSnapshot: Bool = false, plain: ControlRequest.Command? = nil,
        usage: [CtlCommand.UsageLine],
        arguments: @escaping @Sendable (CtlCommand.Arguments) throws(UsageError) -> [String: JSONValue],
        decode:
            @escaping @Sendable (ControlRequest.Members, _ maxPayload: Int) throws(InputError) -> ControlRequest.Command
    ) {
        self.name = name
        self.grant = grant
        self.fromSnapshot = fromSnapshot
        self.plain = plain
        self.usage = usage
        self.arguments = arguments
        self.decode = decode
    }

    /// A command without members: `host ctl NAME` takes no arguments.
    static func plain(
        _ name: String, _ command: ControlRequest.Command, grant: ControlGrant, fromSnapshot: Bool = false, line: Int
    ) -> ControlCommandSpec {
        ControlCommandSpec(
            name, grant: grant, fromSnapshot: fromSnapshot, plain: command, usage: [CtlCommand.UsageLine(line, name)],
            arguments: { arguments throws(UsageError) in
                _ = try arguments.operands(0, "no arguments")
                return [:]
            },
            decode: { _, _ in command })
    }
}

/// What a service's configuration must grant (`"requests"` in services.json) for it to send a
/// command through `sh_host.control`.
public enum ControlGrant: String, Sendable, CaseIterable {
    /// `"events"`: what a client causes (events) and the read-only requests.
    case events
    /// `"all"`: everything else the socket takes.
    case all
    /// Never from a service (it needs `"all"` and is still refused): the command streams on a
    /// control connection, which a service's request has none of (`watch`).
    case connectionOnly

    /// Whether `granted` (nil: no grant) covers this.
    func allows(_ granted: ServiceConfiguration.RequestGrant?) -> Bool {
        switch granted {
        case nil: false
        case .all: true
        case .events: self == .events
        }
    }
}
