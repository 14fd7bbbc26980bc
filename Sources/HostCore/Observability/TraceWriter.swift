import Glibc
import ServiceABI

/// Writes `--trace FILE` and feeds `host ctl watch`: JSON Lines, one object per event
/// delivered to a service.
///
/// Each line is written with one `write(2)` as soon as the delivery returns, so a trace
/// is complete up to the moment the host stopped, even after a crash.
public final class TraceWriter: Sendable {
    // The trace file's owner; its descriptor closes when the writer goes away.
    private final class File: Sendable {
        let descriptor: FileDescriptor
        init(_ descriptor: consuming FileDescriptor) { self.descriptor = descriptor }
    }
    private let file: File?
    /// The `host ctl watch` clients, who get every line too.
    let watchers: WatchHub?

    /// Opens (creates or truncates) `path`.
    public convenience init(path: String) throws(SystemError) { try self.init(path: path, watchers: nil) }

    /// Writes to `path` (created or truncated) when given, and to `watchers`' clients.
    public init(path: String?, watchers: WatchHub?) throws(SystemError) {
        file = try path.map { path throws(SystemError) in
            File(try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644))
        }
        self.watchers = watchers
    }

    /// Whether a line would go anywhere now (a file, or a watching client).
    var isActive: Bool { file != nil || watchers?.isWatching == true }

    /// Records a completion arriving (on any thread): `{"seq":…,"event":…,"service":…,"completion":"newData"}`.
    /// `result` nil means the deadline passed first.
    public func recordCompletion(seq: UInt64, event: EventKind, service: String, result: Int32?) {
        guard isActive else { return }
        let answer = result.map { ResultCode.answerName($0, for: event) } ?? "timeout"
        write(
            JSONText.object([
                "seq": String(seq), "event": JSONText.string(event.name), "service": JSONText.string(service),
                "completion": JSONText.string(answer),
            ]))
    }

    /// Records one delivery: `{"seq":1,"t":52310,"event":"didBecomeActive","service":"…","state":"active",
    /// "result":"ok","dur_ns":840}`; `t` is when the call began, in nanoseconds since the host
    /// started, `dur_ns` how long the service took. A scene event also names its scene:
    /// `"scene":"car"` after `event`.
    public func record(
        seq: UInt64, event: EventKind, service: String, state: AppState, result: Int32,
        scene: String? = nil, time: UInt64 = 0, duration: UInt64 = 0
    ) {
        var members: KeyValuePairs<String, String> = [:]
        if let scene {
            members = [
                "seq": String(seq), "t": String(time), "event": JSONText.string(event.name),
                "scene": JSONText.string(scene),
                "service": JSONText.string(service), "state": JSONText.string(state.name),
                "result": JSONText.string(ResultCode.name(result)), "dur_ns": String(duration),
            ]
        } else {
            members = [
                "seq": String(seq), "t": String(time), "event": JSONText.string(event.name),
                "service": JSONText.string(service), "state": JSONText.string(state.name),
                "result": JSONText.string(ResultCode.name(result)), "dur_ns": String(duration),
            ]
        }
        write(JSONText.object(members))
    }

    private func write(_ object: String) {
        if let file {
            var bytes = Array((object + "\n").utf8)
            _ = bytes.withUnsafeMutableBytes { Glibc.write(file.descriptor.rawValue, $0.baseAddress!, $0.count) }
        }
        if let watchers, watchers.isWatching { watchers.publish(trace: object) }
    }
}

/// Names of the ABI's result codes.
public enum ResultCode {
    /// "ok", "false", "error", "unsupported", … or the number for unknown codes.
    public static func name(_ code: Int32) -> String {
        switch code {
        case Int32(SH_OK): "ok"
        case Int32(SH_FALSE): "false"
        case Int32(SH_ERROR): "error"
        case Int32(SH_UNSUPPORTED): "unsupported"
        case Int32(SH_INVALID): "invalid"
        case Int32(SH_NOT_FOUND): "notFound"
        case Int32(SH_TOO_SMALL): "tooSmall"
        default: String(code)
        }
    }

    /// The name of a completion's result for `event`: fetch results and presentation
    /// options have their own names.
    public static func answerName(_ code: Int32, for event: EventKind) -> String {
        if code < 0 { return name(code) }
        switch event {
        case .didReceiveRemoteNotification:
            return FetchResult(code)?.name ?? "invalid(\(code))"
        case .willPresentNotification:
            let names = PresentationOptions(code).names
            return names.isEmpty ? "none" : names.joined(separator: "+")
        case .healthCheck:
            return HealthStatus(rawValue: code)?.name ?? "invalid(\(code))"
        default:
            return name(code)
        }
    }
}
