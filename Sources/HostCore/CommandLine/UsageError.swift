/// A command line the host cannot run: the message names the argument and the reason.
///
/// `--help` is reported the same way (as swift-argument-parser reports a clean exit), so
/// every parser stops where it is; `isHelp` tells the caller to print the help and exit 0.
public struct UsageError: Error, CustomStringConvertible, Equatable {
    /// What is wrong, e.g. "--log-level: unknown level 'loud' (use error, warn, info or debug)".
    public let message: String
    /// True for `--help` or `-h`: not an error; the caller prints its command's help.
    public let isHelp: Bool

    /// An error saying `message`.
    public init(_ message: String) {
        self.message = message
        isHelp = false
    }

    private init(help: Void) {
        message = "help requested"
        isHelp = true
    }

    /// `--help` or `-h` was given.
    public static let help = UsageError(help: ())

    public var description: String { message }
}
