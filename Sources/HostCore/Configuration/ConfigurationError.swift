import ServiceJSON

/// Why a configuration file cannot be used, naming the file and, for a bad value, the key's
/// JSON path: `services.json: services.com.example.x.priorty: unknown key (did you mean "priority"?)`.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What is wrong.
    public enum Code: Equatable, Sendable {
        /// The file could not be opened or read.
        case unreadable(SystemError)
        /// The path is a directory, FIFO, socket or device.
        case notRegularFile(kind: String)
        /// The file is larger than ``HostConfiguration/maxFileSize``.
        case tooLarge(bytes: Int)
        /// The text is not JSON; `line` and `column` (bytes) count from 1.
        case syntax(line: Int, column: Int, reason: String)
        /// The file, or a directory on its path, could be changed by another user (it can
        /// mark services trusted): `detail` says how.
        case insecure(detail: String)
        /// A key or value is wrong: `path` is the key's JSON path (`services.com.example.x.priority`,
        /// `services.com.example.x.requires[1]`), empty for the document itself.
        case invalid(path: String, reason: String)
    }

    /// The configuration file as given.
    public let file: String
    /// What is wrong.
    public let code: Code

    /// An error about `file`.
    public init(file: String, code: Code) {
        self.file = file
        self.code = code
    }

    static func invalid(_ file: String, _ path: String, _ reason: String) -> ConfigurationError {
        ConfigurationError(file: file, code: .invalid(path: path, reason: reason))
    }

    /// The JSON path of the offending key, when the error is about one.
    public var keyPath: String? {
        if case .invalid(let path, _) = code { return path }
        return nil
    }

    /// "FILE: PATH: REASON", one line.
    public var description: String {
        switch code {
        case .unreadable(let error):
            "\(file): \(error.operation) failed: \(error.reason)"
        case .notRegularFile(let kind):
            "\(file): is a \(kind), not a regular file"
        case .tooLarge(let bytes):
            "\(file): is \(bytes) bytes; the limit is \(HostConfiguration.maxFileSize)"
        case .insecure(let detail):
            "\(file): refused: \(detail) (fix the permissions, or pass --allow-insecure-plugins)"
        case .syntax(let line, let column, let reason):
            "\(file): line \(line), column \(column): \(reason)"
        case .invalid(let path, let reason):
            path.isEmpty ? "\(file): \(reason)" : "\(file): \(path): \(reason)"
        }
    }
}
