import Foundation
// The host's log events, declared once: tests name them by case (`records.named(.hostReady)`).
@_exported import LogEvents

/// One line of a host's `--log-format json` log: what tests assert on instead of the English
/// text of `LEVEL [SOURCE] MESSAGE` lines, which may change.
public struct LogRecord: CustomStringConvertible {
    /// `error`, `warn`, `info` or `debug`.
    public let level: String
    /// `host`, `loader`, `control` or a service id.
    public let source: String
    /// What happened, for the host's own lines (`worker.crashed`); nil for a service's lines.
    public let event: String?
    /// The text for people.
    public let message: String
    /// The event's details (`{"service":"test.a"}`); empty when the line has none.
    public let fields: [String: Any]

    /// The record of one JSON line, or nil when the line is not a log object with `level`,
    /// `source` and `message` strings (an in-process plugin may write raw text to stderr).
    public init?(line: some StringProtocol) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let level = object["level"] as? String, let source = object["source"] as? String,
            let message = object["message"] as? String
        else { return nil }
        self.level = level
        self.source = source
        self.message = message
        event = object["event"] as? String
        fields = object["fields"] as? [String: Any] ?? [:]
    }

    /// The records of a stderr text, in order; lines that are not log objects are skipped.
    public static func parse(_ text: String) -> [LogRecord] {
        text.split(separator: "\n").compactMap { LogRecord(line: $0) }
    }

    /// A string field.
    public func string(_ key: String) -> String? { fields[key] as? String }
    /// A list-of-strings field.
    public func strings(_ key: String) -> [String]? { fields[key] as? [String] }
    /// A number field.
    public func int(_ key: String) -> Int? { fields[key] as? Int }

    /// `level [source] event: message {fields}`, for failure messages.
    public var description: String {
        let fieldText =
            fields.isEmpty
            ? ""
            : " "
                + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                .joined(separator: " ")
        return "\(level) [\(source)] \(event.map { $0 + ": " } ?? "")\(message)\(fieldText)"
    }
}

extension Array where Element == LogRecord {
    /// The records of the host's own lines of `event`.
    public func named(_ event: LogEvent) -> [LogRecord] { filter { $0.event == event.name } }

    /// The messages of the lines a service wrote itself (no event), in order.
    public func messages(from source: String) -> [String] {
        filter { $0.source == source && $0.event == nil }.map(\.message)
    }

    /// The lines services wrote whose message starts with `prefix`.
    public func messages(startingWith prefix: String) -> [LogRecord] {
        filter { $0.event == nil && $0.message.hasPrefix(prefix) }
    }

    /// One record a line, for failure messages.
    public var text: String { map(\.description).joined(separator: "\n") }
}

extension CommandResult {
    /// The records of stderr, when the process ran with `--log-format json`.
    public var records: [LogRecord] { LogRecord.parse(stderr) }
}
