import Glibc
import ServiceABI

/// Writes `--trace FILE`: JSON Lines, one object per event delivered to a service.
///
/// Each line is written with one `write(2)` as soon as the delivery returns, so a trace
/// is complete up to the moment the host stopped, even after a crash.
public final class TraceWriter {
    private let descriptor: Int32

    /// Opens (creates or truncates) `path`.
    public init(path: String) throws(SystemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .current("open", path) }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Records one delivery: `{"seq":1,"event":"didBecomeActive","service":"…","state":"active","result":"ok"}`.
    public func record(seq: UInt64, event: EventKind, service: String, state: AppState, result: Int32) {
        let line = JSONText.object([
            "seq": String(seq), "event": JSONText.string(event.name), "service": JSONText.string(service),
            "state": JSONText.string(state.name), "result": JSONText.string(ResultCode.name(result)),
        ]) + "\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(descriptor, $0.baseAddress!, $0.count) }
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
}
