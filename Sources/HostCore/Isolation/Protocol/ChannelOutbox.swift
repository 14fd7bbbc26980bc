import Glibc

/// The frames the host's end of a worker channel could not write yet (issue 36): the host
/// never waits for a worker to read, so what the socket does not take waits here, in order,
/// within a bound of bytes and of time. A worker past the bound does not read its channel
/// and is broken.
struct ChannelOutbox {
    /// How much a worker may leave unread.
    struct Bound: Sendable, Equatable {
        /// Bytes that may wait beyond what the socket holds.
        var bytes: Int
        /// Seconds bytes may wait without the socket taking any of them.
        var seconds: Double

        /// Two frames of the largest size: an event or reply of any size fits, with room behind it.
        static let standardBytes = 2 * (Wire.maxPayload + Wire.headerSize)
    }

    /// Why a worker crossed the bound, for its log line and its death.
    struct Stall: Sendable, Equatable, CustomStringConvertible {
        /// `bytes` or `time`: which bound it crossed.
        let bound: String
        /// Bytes waiting when it did.
        let bytes: Int
        /// Seconds since the socket last took a byte.
        let seconds: Double

        var description: String {
            bound == "bytes"
                ? "did not read its channel: \(bytes) bytes waited for it, over the limit"
                : "did not read its channel for \(Seconds.text(seconds)) s (\(bytes) bytes waited for it)"
        }
    }

    private var bytes: [UInt8] = []
    private var start = 0
    /// When the socket last took bytes, or the first bytes began to wait (monotonic seconds).
    private var progress = 0.0
    /// Set once the bound is crossed: nothing more is written.
    private(set) var stall: Stall?

    /// Bytes waiting.
    var count: Int { bytes.count - start }

    /// Writes `frame` now as far as the socket takes it, the rest after what already waits.
    /// Fails only when the worker is gone (EPIPE, ECONNRESET), or was found stalled.
    mutating func send(_ frame: [UInt8], on socket: Int32, now: Double, bound: Bound) -> Result<Void, SystemError> {
        if stall != nil { return .success(()) }  // the worker is being killed: nothing reads
        var written = 0
        if count == 0 {
            switch Self.write(frame, from: 0, to: socket) {
            case .failure(let error): return .failure(error)
            case .success(let n): written = n
            }
            if written == frame.count { return .success(()) }
            progress = now
        }
        bytes.append(contentsOf: frame[written...])
        if count > bound.bytes { stall = Stall(bound: "bytes", bytes: count, seconds: now - progress) }
        return .success(())
    }

    /// Writes what waits, as far as the socket takes it.
    mutating func flush(on socket: Int32, now: Double) -> Result<Void, SystemError> {
        guard count > 0, stall == nil else { return .success(()) }
        switch Self.write(bytes, from: start, to: socket) {
        case .failure(let error): return .failure(error)
        case .success(let n):
            if n > 0 { progress = now }
            start += n
        }
        if start == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 1 << 20)
            start = 0
        } else if start >= 1 << 20 {
            bytes.removeFirst(start)
            start = 0
        }
        return .success(())
    }

    /// Whether bytes waited longer than the bound allows without progress; records it if so.
    mutating func checkTime(now: Double, bound: Bound) -> Stall? {
        guard stall == nil, count > 0, now - progress >= bound.seconds else { return nil }
        stall = Stall(bound: "time", bytes: count, seconds: now - progress)
        return stall
    }

    /// Seconds until the time bound is crossed, when bytes wait.
    func secondsLeft(now: Double, bound: Bound) -> Double? {
        count > 0 && stall == nil ? max(0, progress + bound.seconds - now) : nil
    }

    /// One non-blocking send of `bytes[from...]`: the count the socket took (0 when full).
    private static func write(_ bytes: [UInt8], from: Int, to socket: Int32) -> Result<Int, SystemError> {
        bytes.withUnsafeBytes { buffer in
            let sent = Result { () throws(SystemError) in
                try retryingOnInterrupt("send", "worker channel") {
                    Glibc.send(
                        socket, buffer.baseAddress! + from, buffer.count - from, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
            }
            switch sent {
            case .success(let n): return .success(n)
            case .failure(let error) where error.errno == EAGAIN || error.errno == EWOULDBLOCK: return .success(0)
            case .failure(let error): return .failure(error)
            }
        }
    }
}
