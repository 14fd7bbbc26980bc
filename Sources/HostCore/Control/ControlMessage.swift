import ServiceJSON

/// A control request as a client writes it on the socket: the command's name and its members,
/// before the host reads and checks them (``ControlRequest``).
///
/// ```text
/// {"id":1,"command":"open","url":"myapp://item/42"}
/// ```
public struct ControlMessage: Sendable, Equatable {
    /// The client's `id`, echoed in the reply.
    public var id: JSONValue?
    /// The command and its members.
    public var command: Command

    /// A request for `command`.
    public init(_ command: Command, id: JSONValue? = nil) {
        self.command = command
        self.id = id
    }

    /// A command as it goes on the wire: a row's name (``ControlCommands``) and its members.
    public struct Command: Sendable, Equatable {
        /// The command's name on the wire, which is also its name in `host ctl`.
        public var name: String
        /// The members after `command` and `id`.
        public var members: [String: JSONValue]

        /// `name` with `members`.
        public init(_ name: String, _ members: [String: JSONValue] = [:]) {
            self.name = name
            self.members = members
        }
    }

    /// The request as a JSON object.
    public var json: JSONValue {
        var object = command.members
        object[.command] = .string(command.name)
        if let id { object[.id] = id }
        return .object(object)
    }

    /// A user activity: `type`, and optionally `url` and `userInfo` (an object), as the
    /// `activity` and `scene` requests carry it.
    public struct Activity: Sendable, Equatable {
        public var type: String
        public var url: String?
        public var userInfo: JSONValue?

        /// An activity of `type`.
        public init(type: String, url: String? = nil, userInfo: JSONValue? = nil) {
            self.type = type
            self.url = url
            self.userInfo = userInfo
        }

        /// Adds `type`, `url` and `userInfo` to `object`.
        func encode(into object: inout [String: JSONValue]) {
            object[.type] = .string(type)
            if let url { object[.url] = .string(url) }
            if let userInfo { object[.userInfo] = userInfo }
        }

        /// The members as an object.
        var json: JSONValue {
            var members: [String: JSONValue] = [:]
            encode(into: &members)
            return .object(members)
        }

        /// `type`, `url` and `userInfo` of `members`.
        init(_ members: ControlRequest.Members) throws(InputError) {
            let userInfo = try members.optional(.userInfo)
            self.init(type: try members.requiredString(.type), url: try members.string(.url), userInfo: userInfo)
        }

        /// The activity the host delivers, its `userInfo` within `maxPayload`.
        func input(maxPayload: Int) throws(InputError) -> UserActivityInput {
            if let userInfo { try ControlRequest.checkSize(userInfo, .userInfo, maxPayload) }
            return try UserActivityInput(type: type, webpageURL: url, userInfo: userInfo)
        }
    }
}
