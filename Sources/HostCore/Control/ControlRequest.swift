import ServiceABI
import ServiceJSON

/// One request of the control protocol: a JSON object on one line, `{"command": …}`.
///
/// Parsed off the main thread; everything it holds is validated and Sendable. Which commands
/// there are, and how each is read, is ``ControlCommands``' table.
public struct ControlRequest: Sendable {
    /// What to do: one case per command family, its values checked.
    public enum Command: Sendable {
        case state, list, reload
        case lifecycle(Lifecycle)
        case memoryWarning
        case push(PushPayload, tapAction: String?)
        case open(OpenURLInput)
        case activity(UserActivityInput)
        /// performActionForShortcutItem: the quick action's id.
        case action(String)
        case token(DeviceToken)
        case tokenError(String)
        case post(name: String, payload: JSONValue?)
        /// A request for the service that answers `name`; `payload` is its JSON text.
        case request(name: String, payload: [UInt8]?)
        case scene(SceneCommand)
        /// Sets the notification authorization (nil: reads it).
        case authorization(AuthorizationStatus?)
        case operate(Operate)
    }

    /// The lifecycle commands.
    public enum Lifecycle: String, Sendable, CaseIterable {
        case activate, resign, background, foreground, terminate
    }

    /// The lifecycle commands.
    public typealias LifecycleCommand = Lifecycle

    /// The longest notification name a `post` may carry, in bytes (README, Limits).
    public static let maxName = 255
    /// The longest `token-error` message, in bytes (README, Limits).
    public static let maxMessage = 4096

    /// The client's `id`, echoed in the reply.
    public let id: JSONValue?
    /// The command.
    public let command: Command
    /// Its row in ``ControlCommands/rows``.
    let row: Int

    init(id: JSONValue?, command: Command, row: Int) {
        self.id = id
        self.command = command
        self.row = row
    }

    /// The command's row: its name, its grant.
    public var spec: ControlCommandSpec { ControlCommands.rows[row] }

    /// Parses one request line. A refusal carries the request's id when it could be read.
    public static func parse(_ line: [UInt8], maxPayload: Int) -> Result<ControlRequest, ControlRefusal> {
        line.withUnsafeBytes { parse($0, maxPayload: maxPayload) }
    }

    /// Parses one request line, read in place.
    public static func parse(_ line: UnsafeRawBufferPointer, maxPayload: Int) -> Result<ControlRequest, ControlRefusal>
    {
        if let plain = PlainRequest.parse(line) { return .success(plain) }
        return parseFully(line, maxPayload: maxPayload)
    }

    /// Parses one request line through `JSONValue`: every request the fast path
    /// (``PlainRequest``) leaves, and the reference it is tested against.
    static func parseFully(_ line: UnsafeRawBufferPointer, maxPayload: Int) -> Result<ControlRequest, ControlRefusal> {
        guard line.withMemoryRebound(to: UInt8.self, { String(validating: $0, as: UTF8.self) }) != nil else {
            return .failure(ControlRefusal(id: nil, message: "the request is not valid UTF-8"))
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: line) } catch {
            return .failure(ControlRefusal(id: nil, message: "malformed JSON: \(error)"))
        }
        guard case .object(let object) = value else {
            return .failure(
                ControlRefusal(id: nil, message: "a request must be a JSON object like {\"command\":\"state\"}"))
        }
        let id = object[.id]
        do throws(InputError) {
            // Worded only for an error: joining every name cost more than the rest of a request.
            var choices: String { "one of \(ControlCommands.names.joined(separator: ", "))" }
            guard let name = object[.command]?.stringValue else {
                throw InputError("missing \"\(ControlKey.command.rawValue)\" (\(choices))")
            }
            guard let row = ControlCommands.row(named: name) else {
                throw InputError("unknown command \"\(name)\" (\(choices))")
            }
            let command = try ControlCommands.rows[row].decode(Members(command: name, object: object), maxPayload)
            return .success(ControlRequest(id: id, command: command, row: row))
        } catch {
            return .failure(ControlRefusal(id: id, message: error.message))
        }
    }

    static func checkSize(_ value: JSONValue, _ key: ControlKey, _ limit: Int) throws(InputError) {
        try checkSize(value.serialized.utf8.count, key, limit)
    }

    static func checkSize(_ size: Int, _ key: ControlKey, _ limit: Int) throws(InputError) {
        if size > limit {
            throw InputError("\(key.rawValue) is \(size) bytes, over the limit of \(limit) (--max-payload)")
        }
    }

    /// Typed access to a request's members, with errors naming the command and the key.
    struct Members {
        let command: String
        let object: [String: JSONValue]

        /// The member, or nil when it is missing or null.
        func optional(_ key: ControlKey) throws(InputError) -> JSONValue? {
            guard let value = object[key], value != .null else { return nil }
            return value
        }

        func required(_ key: ControlKey) throws(InputError) -> JSONValue {
            guard let value = try optional(key) else { throw InputError("\(command): missing \"\(key.rawValue)\"") }
            return value
        }

        func string(_ key: ControlKey) throws(InputError) -> String? {
            guard let value = try optional(key) else { return nil }
            guard let text = value.stringValue else {
                throw InputError("\(command): \"\(key.rawValue)\" must be a string")
            }
            return text
        }

        func requiredString(_ key: ControlKey) throws(InputError) -> String {
            guard let text = try string(key) else { throw InputError("\(command): missing \"\(key.rawValue)\"") }
            return text
        }

        func bool(_ key: ControlKey) throws(InputError) -> Bool? {
            guard let value = try optional(key) else { return nil }
            guard let flag = value.boolValue else {
                throw InputError("\(command): \"\(key.rawValue)\" must be true or false")
            }
            return flag
        }

        func number(_ key: ControlKey) throws(InputError) -> Double? {
            guard let value = try optional(key) else { return nil }
            guard let number = value.doubleValue, number.isFinite else {
                throw InputError("\(command): \"\(key.rawValue)\" must be a number")
            }
            return number
        }

        /// An array member; empty when missing.
        func list(_ key: ControlKey) throws(InputError) -> [JSONValue] {
            guard let value = try optional(key) else { return [] }
            guard let items = value.arrayValue else {
                throw InputError("\(command): \"\(key.rawValue)\" must be an array")
            }
            return items
        }
    }
}

/// A request the host refuses, answered with `{"ok": false, "error": …}`.
public struct ControlRefusal: Error, Sendable {
    /// The request's id, when it could be read.
    public let id: JSONValue?
    /// Why.
    public let message: String
}
