import Glibc
import Synchronization

/// One end of the socketpair between the host and a worker: whole frames out, from any
/// thread; bytes in, read by one thread (the end's reader).
final class FrameChannel: Sendable {
    /// The socket. It closes with the channel, when no thread can be using it any more;
    /// ``shutdown()`` ends the connection before that.
    let socket: FileDescriptor
    // Held while a frame is written, so frames from several threads never interleave.
    private let writing = Locked<Void>(())
    private let sequence = Atomic<UInt32>(0)

    init(socket: consuming FileDescriptor) { self.socket = socket }

    /// A new sequence number for a request (never 0, which marks one-way frames).
    func nextSequence() -> UInt32 {
        let next = sequence.add(1, ordering: .relaxed).newValue
        return next == 0 ? sequence.add(1, ordering: .relaxed).newValue : next
    }

    /// Writes one frame whole. Fails when the other side is gone or, on the host's end, when
    /// the send timeout passes (a worker that stopped reading).
    func send(_ writer: inout WireWriter, _ type: FrameType, sequence: UInt32 = 0) throws(WireError) {
        let bytes = writer.finish(type, sequence: sequence)
        do {
            try writing.withLock { _ throws(SystemError) in
                try socket.sendAll(bytes, path: Self.name)
            }
        } catch {
            throw WireError(.system(error))
        }
    }

    /// Reads what is there (blocking until something is): the byte count, 0 at end of file.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(WireError) -> Int {
        do { return try socket.read(into: buffer, path: Self.name) } catch { throw WireError(.system(error)) }
    }

    /// A send timeout, so a peer that stops reading cannot block the host's main thread forever.
    func setSendTimeout(seconds: Double) { UnixSocket.setSendTimeout(socket, seconds: seconds) }

    /// Ends the connection both ways: the other side reads end of file, and so does this
    /// side's reader. Unlike a close, no other thread's call can meet a reused number.
    func shutdown() { _ = Glibc.shutdown(socket.rawValue, Int32(SHUT_RDWR)) }

    /// What errors call the channel.
    private static let name = "worker channel"
}
