/// A command line the host cannot run: the message names the argument and the reason.
public struct UsageError: Error, CustomStringConvertible, Equatable {
    /// What is wrong, e.g. "--log-level: unknown level 'loud' (use error, warn, info or debug)".
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// Walks arguments, accepting both `--name value` and `--name=value`.
struct ArgumentCursor {
    private var arguments: ArraySlice<String>

    init(_ arguments: [String]) { self.arguments = arguments[...] }

    /// The next argument, split into option name and inline value when it is `--name=value`.
    mutating func next() -> (name: String, inlineValue: String?)? {
        guard let argument = arguments.popFirst() else { return nil }
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
        }
        return (argument, nil)
    }

    /// The value of option `name`: inline, or the following argument.
    mutating func value(of name: String, inline: String?) throws(UsageError) -> String {
        if let inline { return inline }
        guard let value = arguments.popFirst() else { throw UsageError("\(name) needs a value") }
        return value
    }
}
