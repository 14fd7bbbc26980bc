import Glibc
import Synchronization

/// How much the host says on stderr.
public enum LogLevel: Int32, Comparable, CaseIterable, Sendable {
    case error = 0, warn = 1, info = 2, debug = 3

    /// The level's name on the command line and in log lines.
    public var name: String {
        switch self {
        case .error: "error"
        case .warn: "warn"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// The level called `name`, or nil.
    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Writes log lines to a file descriptor (stderr by default): `LEVEL [SOURCE] MESSAGE`.
///
/// Thread-safe: each line is one `write(2)`, so lines from several threads never interleave.
public final class Log: Sendable {
    /// The most detailed level written.
    public let level: LogLevel
    private let descriptor: Int32

    /// A log writing lines at `level` and above to `descriptor`.
    public init(level: LogLevel, descriptor: Int32 = STDERR_FILENO) {
        self.level = level
        self.descriptor = descriptor
    }

    /// Whether a line at `level` would be written; check before building an expensive message.
    public func enabled(_ level: LogLevel) -> Bool { level <= self.level }

    /// Writes one line. `source` is "host", "loader" or a service id. The message is only
    /// built when the level is enabled, so a debug line costs nothing at info level.
    public func write(_ level: LogLevel, _ source: String, _ message: @autoclosure () -> String) {
        guard enabled(level) else { return }
        let message = message()
        var line = "\(level.name) [\(source)] "
        // One line per call: a message with newlines is kept on one line.
        for character in message { line.append(character == "\n" ? " " : character) }
        line.append("\n")
        var utf8 = Array(line.utf8)
        utf8.withUnsafeMutableBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = (try? retryingOnInterrupt("write", "log") {
                    Glibc.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
                }) ?? -1
                if n <= 0 { return }
                done += n
            }
        }
    }

    /// An error line.
    public func error(_ source: String, _ message: @autoclosure () -> String) { write(.error, source, message()) }
    /// A warning line.
    public func warn(_ source: String, _ message: @autoclosure () -> String) { write(.warn, source, message()) }
    /// An info line.
    public func info(_ source: String, _ message: @autoclosure () -> String) { write(.info, source, message()) }
    /// A debug line.
    public func debug(_ source: String, _ message: @autoclosure () -> String) { write(.debug, source, message()) }
}
