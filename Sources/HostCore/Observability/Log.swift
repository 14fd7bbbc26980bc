import Glibc
// The log events are declared once, in LogEvents, which the tests read too. Re-exported so the
// host's code and its users name them as members (`event: .workerCrashed`).
@_exported import LogEvents
import Synchronization

/// How log lines are written.
public enum LogFormat: String, CaseIterable, Sendable {
    /// `LEVEL [SOURCE] MESSAGE`, for people.
    case text
    /// One JSON object per line, for log shippers and tests:
    /// `{"level":"error","source":"host","event":"worker.crashed","message":"…","fields":{"service":"…"}}`;
    /// `event` and `fields` are there when the line has them.
    case json
}

/// One named value a log line carries (in the JSON format's `fields`).
///
/// Encoded only when a JSON line is written: text lines carry no fields, and the `active with`
/// line's list of every service id cost ~1 µs per service to escape for nothing.
public struct LogField: Sendable {
    let key: String
    private let value: Value

    private enum Value: Sendable {
        case string(String)
        // Already encoded JSON.
        case encoded(String)
        case strings([String])
    }

    /// A string value.
    public static func string(_ key: String, _ value: String) -> LogField { LogField(key: key, value: .string(value)) }
    /// A number.
    public static func int(_ key: String, _ value: some BinaryInteger) -> LogField {
        LogField(key: key, value: .encoded("\(value)"))
    }
    /// A list of strings.
    public static func strings(_ key: String, _ values: [String]) -> LogField {
        LogField(key: key, value: .strings(values))
    }

    /// The value as JSON text.
    var json: String {
        switch value {
        case .string(let text): JSONText.string(text)
        case .encoded(let json): json
        case .strings(let values): JSONText.array(values.map(JSONText.string))
        }
    }
}

/// Writes log lines to a file descriptor (stderr by default), as text (`LEVEL [SOURCE] MESSAGE`)
/// or as one JSON object per line.
///
/// Thread-safe: each line is one `write(2)`, so lines from several threads never interleave.
public final class Log: Sendable {
    /// The most detailed level written.
    public let level: LogLevel
    /// The format of the lines.
    public let format: LogFormat
    /// What each line starts with (`--log-time`).
    public let time: LogTime
    /// Whether lines get journald's `<N>` priority prefix (stderr is the journal).
    public let journal: Bool
    /// `host ctl watch --logs` clients, who get every line written.
    public let watchers: WatchHub?
    private let descriptor: Int32

    /// A log writing lines at `level` and above to `descriptor`, stamped with `time`, with
    /// journald's priority prefix when `descriptor` is the journal, copied to `watchers`.
    public init(
        level: LogLevel, format: LogFormat = .text, time: LogTime = .none, descriptor: Int32 = STDERR_FILENO,
        journal: Bool? = nil, watchers: WatchHub? = nil
    ) {
        self.level = level
        self.format = format
        self.time = time
        self.descriptor = descriptor
        self.journal = journal ?? Journal.isStream(descriptor)
        self.watchers = watchers
    }

    /// Whether a line at `level` would be written; check before building an expensive message.
    public func enabled(_ level: LogLevel) -> Bool { level <= self.level }

    /// Writes one line. `source` is "host", "loader" or a service id; `event` names what
    /// happened for machines (`worker.crashed`), with `fields` its details, each one the event
    /// declares. The message is only built when the level is enabled, so a debug line costs
    /// nothing at info level.
    public func write(
        _ level: LogLevel, _ source: String, _ message: @autoclosure () -> String,
        event: LogEvent? = nil, fields: [LogField] = []
    ) {
        // Debug builds (every test run) stop at a field the event does not declare.
        assert(
            fields.allSatisfy { field in event?.fields.contains(field.key) ?? false },
            "\(event?.name ?? "a line without an event") does not declare the field(s) \(fields.map(\.key)); see LogEvent"
        )
        guard enabled(level) else { return }
        let message = message()
        let stamp = time.stamp()
        var line: String
        switch format {
        case .text:
            line = (stamp.map { $0 + " " } ?? "") + "\(level.name) [\(source)] " + Self.oneLine(message)
        case .json:
            line =
                "{" + (stamp.map { "\"time\":\(JSONText.string($0))," } ?? "")
                + "\"level\":\"\(level.name)\",\"source\":\(JSONText.string(source))"
            if let event { line += ",\"event\":\(JSONText.string(event.name))" }
            line += ",\"message\":\(JSONText.string(message))"
            if !fields.isEmpty {
                line +=
                    ",\"fields\":{" + fields.map { JSONText.string($0.key) + ":" + $0.json }.joined(separator: ",")
                    + "}"
            }
            line += "}"
        }
        line.append("\n")
        if let watchers, watchers.isWatching { watchers.publish(log: line) }
        // sd-daemon(3): the journal stores a line starting with <N> at priority N.
        if journal { line = "<\(Journal.priority(level))>" + line }
        var utf8 = Array(line.utf8)
        utf8.withUnsafeMutableBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n =
                    (try? retryingOnInterrupt("write", "log") {
                        Glibc.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
                    }) ?? -1
                if n <= 0 { return }
                done += n
            }
        }
    }

    /// `message` on one line: each newline becomes a space, except the LF of a CR LF pair (one
    /// Character, which is not "\n", so it was kept when this was done per Character). Done on
    /// the UTF-8 bytes: per Character, every line paid grapheme breaking (and the start-up paid
    /// its first use).
    static func oneLine(_ message: String) -> String {
        // `memchr` over the string's own bytes: the generic walk was ~30 instructions a byte, and
        // the start line lists every service (~750 instructions per plugin at every start).
        var message = message
        guard message.withUTF8({ $0.count > 0 && memchr($0.baseAddress!, 0x0A, $0.count) != nil }) else {
            return message
        }
        var bytes = Array(message.utf8)
        for index in bytes.indices where bytes[index] == 0x0A && (index == 0 || bytes[index - 1] != 0x0D) {
            bytes[index] = 0x20
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An error line.
    public func error(
        _ source: String, _ message: @autoclosure () -> String, event: LogEvent? = nil, _ fields: LogField...
    ) {
        write(.error, source, message(), event: event, fields: fields)
    }
    /// A warning line.
    public func warn(
        _ source: String, _ message: @autoclosure () -> String, event: LogEvent? = nil, _ fields: LogField...
    ) {
        write(.warn, source, message(), event: event, fields: fields)
    }
    /// An info line.
    public func info(
        _ source: String, _ message: @autoclosure () -> String, event: LogEvent? = nil, _ fields: LogField...
    ) {
        write(.info, source, message(), event: event, fields: fields)
    }
    /// A debug line.
    public func debug(
        _ source: String, _ message: @autoclosure () -> String, event: LogEvent? = nil, _ fields: LogField...
    ) {
        write(.debug, source, message(), event: event, fields: fields)
    }
}
