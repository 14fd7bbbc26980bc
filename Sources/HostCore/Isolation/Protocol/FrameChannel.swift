import Glibc
import Synchronization

/// One end of the socketpair between the host and a worker: whole frames out, from any
/// thread; bytes in, read by one thread (the end's reader).
final class FrameChannel: Sendable {
    /// The socket.
    let descriptor: Int32
    // Held while a frame is written, so frames from several threads never interleave.
    private let writing = Mutex<Void>(())
    private let sequence = Atomic<UInt32>(0)

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// A new sequence number for a request (never 0, which marks one-way frames).
    func nextSequence() -> UInt32 {
        let next = sequence.add(1, ordering: .relaxed).newValue
        return next == 0 ? sequence.add(1, ordering: .relaxed).newValue : next
    }

    /// Writes one frame whole. Fails when the other side is gone or, on the host's end, when
    /// the send timeout passes (a worker that stopped reading).
    func send(_ writer: inout WireWriter, _ type: FrameType, sequence: UInt32 = 0) throws(WireError) {
        let bytes = writer.finish(type, sequence: sequence)
        let failure: Int32? = writing.withLock { _ in
            bytes.withUnsafeBytes { buffer in
                var done = 0
                while done < buffer.count {
                    // MSG_NOSIGNAL: a dead peer is an error here, never a SIGPIPE that kills the host.
                    let n = Glibc.send(descriptor, buffer.baseAddress! + done, buffer.count - done, Int32(MSG_NOSIGNAL))
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return n < 0 ? errno : EPIPE }
                    done += n
                }
                return nil
            }
        }
        if let failure { throw WireError(.system(SystemError(operation: "send", path: "worker channel", errno: failure))) }
    }

    /// Reads what is there (blocking until something is): the byte count, 0 at end of file.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(WireError) -> Int {
        while true {
            let n = Glibc.read(descriptor, buffer.baseAddress!, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw WireError(.system(.current("read", "worker channel")))
        }
    }

    /// A send timeout, so a peer that stops reading cannot block the host's main thread forever.
    func setSendTimeout(seconds: Double) {
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Closes the socket; the other side reads end of file.
    func close() { _ = Glibc.close(descriptor) }
}
