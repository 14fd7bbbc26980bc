import Glibc
import ServiceABI

/// Writes `--trace FILE`: JSON Lines, one object per event delivered to a service.
///
/// Each line is written with one `write(2)` as soon as the delivery returns, so a trace
/// is complete up to the moment the host stopped, even after a crash.
public final class TraceWriter: Sendable {
    private let descriptor: FileDescriptor

    /// Opens (creates or truncates) `path`.
    public init(path: String) throws(SystemError) {
        descriptor = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
    }

    /// Records a completion arriving (on any thread): `{"seq":…,"event":…,"service":…,"completion":"newData"}`.
    /// `result` nil means the deadline passed first.
    public func recordCompletion(seq: UInt64, event: EventKind, service: String, result: Int32?) {
        let answer = result.map { ResultCode.answerName($0, for: event) } ?? "timeout"
        write(JSONText.object([
            "seq": String(seq), "event": JSONText.string(event.name), "service": JSONText.string(service),
            "completion": JSONText.string(answer),
        ]))
    }

    /// Records one delivery: `{"seq":1,"event":"didBecomeActive","service":"…","state":"active","result":"ok"}`;
    /// a scene event also names its scene: `"scene":"car"` after `event`.
    public func record(seq: UInt64, event: EventKind, service: String, state: AppState, result: Int32,
                       scene: String? = nil) {
        if let scene {
            return write(JSONText.object([
                "seq": String(seq), "event": JSONText.string(event.name), "scene": JSONText.string(scene),
                "service": JSONText.string(service), "state": JSONText.string(state.name),
                "result": JSONText.string(ResultCode.name(result)),
            ]))
        }
        write(JSONText.object([
            "seq": String(seq), "event": JSONText.string(event.name), "service": JSONText.string(service),
            "state": JSONText.string(state.name), "result": JSONText.string(ResultCode.name(result)),
        ]))
    }

    private func write(_ object: String) {
        var bytes = Array((object + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(descriptor.rawValue, $0.baseAddress!, $0.count) }
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
        default:
            return name(code)
        }
    }
}
