import Dispatch
import Glibc
import Synchronization

/// The output of one `host ctl watch` client: lines are queued without blocking whoever
/// publishes them (the main thread, any logging thread) and written on the connection's queue
/// as fast as the client reads. A client whose unread output passes ``bound`` is dropped, so
/// one stuck client never holds the host or the other clients back.
final class WatchStream: Sendable {
    /// The most unread output a client may have before it is dropped.
    static let bound = 1 << 20

    private struct State {
        var pending: [UInt8] = []
        var flushing = false
        var dropped = false
    }
    private let state = Locked(State())
    private let queue: DispatchQueue
    // Writes without blocking (MSG_DONTWAIT); returns send(2)'s result.
    private let write: @Sendable (UnsafeRawBufferPointer) -> Int
    // Called once, outside any lock, when the client is dropped (too slow, or gone).
    private let dropped: @Sendable (_ tooSlow: Bool) -> Void

    init(
        queue: DispatchQueue, write: @escaping @Sendable (UnsafeRawBufferPointer) -> Int,
        dropped: @escaping @Sendable (_ tooSlow: Bool) -> Void
    ) {
        self.queue = queue
        self.write = write
        self.dropped = dropped
    }

    /// Queues one line (any thread, never blocks).
    func enqueue(_ bytes: [UInt8]) {
        enum Next { case nothing, flush, drop }
        let next: Next = state.withLock { state in
            guard !state.dropped else { return .nothing }
            state.pending += bytes
            if state.pending.count > Self.bound {
                state.dropped = true
                state.pending = []
                return .drop
            }
            if state.flushing { return .nothing }
            state.flushing = true
            return .flush
        }
        switch next {
        case .nothing: break
        case .flush: queue.async { self.flush() }
        case .drop: dropped(true)
        }
    }

    /// Ends the stream without a drop message (the client went away).
    func end() {
        state.withLock {
            $0.dropped = true
            $0.pending = []
        }
    }

    private func flush() {
        while true {
            let chunk: [UInt8]? = state.withLock { state in
                guard !state.dropped, !state.pending.isEmpty else {
                    state.flushing = false
                    return nil
                }
                return state.pending
            }
            guard let chunk else { return }
            let sent = chunk.withUnsafeBytes { write($0) }
            if sent > 0 {
                state.withLock { state in if !state.dropped { state.pending.removeFirst(sent) } }
                continue
            }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                // The client's socket is full: try again shortly (the bound limits what waits).
                queue.asyncAfter(deadline: .now() + .milliseconds(10)) { self.flush() }
                return
            }
            let first = state.withLock { state in
                defer { state.dropped = true }
                return !state.dropped
            }
            if first { dropped(false) }
            return
        }
    }
}
