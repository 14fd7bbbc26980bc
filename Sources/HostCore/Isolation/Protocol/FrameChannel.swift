import Glibc
import Synchronization

/// One end of the socketpair between the host and a worker: whole frames out, from any
/// thread. Its owner reads it (WorkerConnection in the host, WorkerInbound in a worker).
///
/// The worker's end writes with blocking sends (the host reads). The host's end never waits
/// for a worker (issue 36): made with a ``ChannelOutbox/Bound``, what the socket does not take
/// waits in the end's outbox, which its owner flushes when the socket has room; a worker
/// that leaves more than the bound unread is reported to `stalled`, once. The host's end is
/// written and flushed on the main thread.
final class FrameChannel: Sendable {
    /// What the host's end tells its owner, on the thread that saw it.
    struct Hooks: Sendable {
        /// Bytes began to wait: the owner should watch for room in the socket.
        var queued: @Sendable () -> Void
        /// The worker crossed the bound: it must go.
        var stalled: @Sendable (ChannelOutbox.Stall) -> Void
    }

    /// The socket. It closes with the channel, when no thread can be using it any more;
    /// ``shutdown()`` ends the connection before that.
    let socket: FileDescriptor
    /// nil: blocking writes (the worker's end).
    let bound: ChannelOutbox.Bound?
    // Held while a frame is written, so frames from several threads never interleave; holds
    // what waits on the host's end.
    private let outbox = Locked(ChannelOutbox())
    private let hooks = Locked<Hooks?>(nil)
    private let sequence = Atomic<UInt32>(0)

    init(socket: consuming FileDescriptor, bound: ChannelOutbox.Bound? = nil) {
        self.socket = socket
        self.bound = bound
    }

    /// Sets what the host's end tells its owner.
    func setHooks(_ hooks: Hooks) { self.hooks.withLock { $0 = hooks } }

    /// A new sequence number for a request (never 0, which marks one-way frames).
    func nextSequence() -> UInt32 {
        let next = sequence.add(1, ordering: .relaxed).newValue
        return next == 0 ? sequence.add(1, ordering: .relaxed).newValue : next
    }

    /// Writes one frame whole, or (on the host's end) as much as the socket takes and the rest
    /// later. Fails when the other side is gone.
    func send(_ writer: inout WireWriter, _ type: FrameType, sequence: UInt32 = 0) throws(WireError) {
        let bytes = writer.finish(type, sequence: sequence)
        guard let bound else {
            do {
                try outbox.withLock { _ throws(SystemError) in try socket.sendAll(bytes, path: Self.name) }
            } catch {
                throw WireError(.system(error))
            }
            return
        }
        let now = Clock.monotonic()
        let (result, waiting, stall) = outbox.withLock { box in
            let before = (count: box.count, stalled: box.stall != nil)
            let result = box.send(bytes, on: socket.rawValue, now: now, bound: bound)
            return (result, before.count == 0 && box.count > 0, before.stalled ? nil : box.stall)
        }
        if case .failure(let error) = result { throw WireError(.system(error)) }
        if let stall {
            report(stall)
        } else if waiting {
            hooks.withLock { $0 }?.queued()
        }
    }

    /// Writes what waits as far as the socket takes it, and reports a worker that left it
    /// unread past the time bound. Returns the seconds until that bound when bytes still wait.
    @discardableResult
    func flush() -> Double? {
        guard let bound else { return nil }
        let now = Clock.monotonic()
        let (stall, left) = outbox.withLock { box -> (ChannelOutbox.Stall?, Double?) in
            // A failed send means the worker is gone: its end of file comes next.
            _ = box.flush(on: socket.rawValue, now: now)
            return (box.checkTime(now: now, bound: bound), box.secondsLeft(now: now, bound: bound))
        }
        if let stall { report(stall) }
        return left
    }

    private func report(_ stall: ChannelOutbox.Stall) { hooks.withLock { $0 }?.stalled(stall) }

    /// Ends the connection both ways: the other side reads end of file, and so does this
    /// side's reader. Unlike a close, no other thread's call can meet a reused number.
    func shutdown() { _ = Glibc.shutdown(socket.rawValue, Int32(SHUT_RDWR)) }

    /// What errors call the channel.
    private static let name = "worker channel"
}
