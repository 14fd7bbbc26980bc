import Dispatch
import Glibc

/// The output of one control connection (its replies, and for `host ctl watch` its stream):
/// bytes are queued without ever blocking whoever produces them (the main thread, a logging
/// thread) and written without blocking as fast as the client reads, everything queued
/// meanwhile in one `send`: replies are appended in place (``append(_:)``) and written by the
/// thread that made them (``flush()``, once per burst); what the socket had no room for is
/// written by a write source on the connection's queue when it has. A client whose unread
/// output passes ``bound`` is dropped, so one client that does not read never holds the host
/// or the other clients back.
final class ConnectionOutput: Sendable {
    /// The most unread output a client may have before it is dropped (README, Limits).
    static let bound = 1 << 20

    /// Why the output ended.
    enum Drop: Sendable {
        /// More than ``bound`` bytes were waiting for the client to read.
        case tooSlow
        /// A write failed: the client went away.
        case gone
    }

    private struct State {
        var pending: [UInt8] = []
        /// The buffer of the last send, emptied, kept for its capacity: swapped with `pending`
        /// so a burst allocates nothing.
        var spare: [UInt8] = []
        /// Bytes taken out of `pending` by the send in progress (still unread by the client).
        var sending = 0
        /// Every byte the client's socket took so far: shutdown waits only while this grows.
        var sent = 0
        var flushing = false
        /// Nothing more is taken or written.
        var ended = false
        /// Whether ``end(dropping:)`` ran (it runs once).
        var finished = false
        /// Whether `writable` is resumed (waiting for room in the socket).
        var armed = false
        /// Callers of ``waitUntilWritten(before:)``, signalled once nothing is pending.
        var waiters: [DispatchSemaphore] = []
    }
    private let state = Locked(State())
    private let socket: Int32
    private let queue: DispatchQueue
    // Immutable after init; DispatchSource's methods are thread-safe. Resumed by whichever
    // thread's send found the socket full, suspended by its handler (on `queue`), both under
    // the lock together with `armed`, which therefore always says whether the source runs; one
    // writer at a time (`flushing`, also set by the handler).
    nonisolated(unsafe) private let writable: DispatchSourceWrite
    // Called once, on `queue` or the flushing thread, when the output ends by a drop.
    private let dropped: @Sendable (Drop) -> Void
    // Called by the writing thread each time everything queued is written.
    private let drained: @Sendable () -> Void

    /// The output of `socket`, which `owner` keeps open until the write source is cancelled
    /// (its cancel handler holds the owner).
    init(
        socket: Int32, queue: DispatchQueue, owner: AnyObject & Sendable, dropped: @escaping @Sendable (Drop) -> Void,
        drained: @escaping @Sendable () -> Void
    ) {
        self.socket = socket
        self.queue = queue
        self.dropped = dropped
        self.drained = drained
        writable = DispatchSource.makeWriteSource(fileDescriptor: socket, queue: queue)
        writable.setCancelHandler { withExtendedLifetime(owner) {} }
        writable.setEventHandler { [weak self] in self?.becameWritable() }
    }

    /// The bytes queued and not yet taken by the client's socket.
    var backlog: Int { state.withLock { $0.pending.count + $0.sending } }

    /// Whether nothing is waiting to be written.
    var isEmpty: Bool { state.withLock { $0.pending.isEmpty && $0.sending == 0 } }

    /// Whether everything queued is written, or the output ended (nothing more will be).
    var isWritten: Bool { state.withLock { $0.ended || ($0.pending.isEmpty && $0.sending == 0) } }

    /// The bytes the client's socket took so far.
    var sentBytes: Int { state.withLock { $0.sent } }

    /// Queues bytes (any thread, never blocks) and has the connection's queue write them;
    /// drops the client past ``bound``.
    func enqueue(_ bytes: [UInt8]) {
        enum Next { case nothing, flush, drop }
        let next: Next = state.withLock { state in
            guard !state.ended else { return .nothing }
            state.pending += bytes
            if state.pending.count + state.sending > Self.bound {
                state.ended = true
                state.pending = []
                return .drop
            }
            if state.flushing || state.armed { return .nothing }
            state.flushing = true
            return .flush
        }
        switch next {
        case .nothing: break
        case .flush: queue.async { self.write() }
        case .drop: queue.async { self.end(dropping: .tooSlow) }
        }
    }

    /// Lets `write` append bytes to the output (any thread, never blocks), to be written by
    /// the next ``flush()``; drops the client past ``bound``.
    func append(_ write: (inout [UInt8]) -> Void) {
        let drop: Bool = state.withLock { state in
            guard !state.ended else { return false }
            write(&state.pending)
            guard state.pending.count + state.sending > Self.bound else { return false }
            state.ended = true
            state.pending = []
            return true
        }
        if drop { queue.async { self.end(dropping: .tooSlow) } }
    }

    /// Writes what is queued now, on the calling thread, with one non-blocking `send`
    /// (unless a write is already under way or waiting for room: that one takes it).
    func flush() {
        let start = state.withLock { state in
            guard !state.ended, !state.flushing, !state.armed, !state.pending.isEmpty else { return false }
            state.flushing = true
            return true
        }
        if start { write() }
    }

    /// Waits (not on `queue`) until everything queued so far is written, the output ended,
    /// or `deadline` passed; false when it passed.
    func waitUntilWritten(before deadline: DispatchTime) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        let done = state.withLock { state in
            if state.ended || (state.pending.isEmpty && state.sending == 0) { return true }
            state.waiters.append(semaphore)
            return false
        }
        return done || semaphore.wait(timeout: deadline) == .success
    }

    /// Ends the output (any thread): nothing more is written; `drop` says why, nil when the
    /// connection simply closes.
    func end(dropping drop: Drop? = nil) {
        let (first, waiters, activate) = state.withLock { state in
            defer {
                state.ended = true
                state.finished = true
                state.pending = []
                state.waiters = []
            }
            let activate = !state.armed && !state.finished
            state.armed = true
            return (!state.finished, state.waiters, activate)
        }
        guard first else { return }
        for waiter in waiters { waiter.signal() }
        writable.cancel()
        // A suspended (or never activated) source delivers its cancellation only once resumed.
        if activate { writable.resume() }
        if let drop { dropped(drop) }
    }

    private func becameWritable() {
        let proceed = state.withLock { state in
            guard state.armed && !state.finished else { return false }
            // This thread writes now (a flush on another thread waits its turn), and the
            // source is suspended under the lock that says so: ``end(dropping:)`` reads
            // `armed` to know whether the source runs.
            state.armed = false
            state.flushing = true
            writable.suspend()
            return true
        }
        guard proceed else { return }
        write()
    }

    /// Sends until nothing is pending or the socket is full; the caller set `flushing`.
    private func write() {
        while true {
            // The whole queue at once: one send for every reply and line that came meanwhile.
            // nil once ended: a drop on its way reports itself.
            let taken: [UInt8]? = state.withLock { state in
                guard !state.ended else { return nil }
                guard !state.pending.isEmpty else {
                    state.flushing = false
                    return []
                }
                state.sending = state.pending.count
                let chunk = state.pending
                state.pending = state.spare
                state.spare = []
                return chunk
            }
            guard var chunk = taken else { return }
            if chunk.isEmpty { return finished() }
            let sent = chunk.withUnsafeBytes {
                send(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            let full = sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            if sent < 0 && !full { return end(dropping: .gone) }
            if sent == chunk.count {
                chunk.removeAll(keepingCapacity: true)
                state.withLock { state in
                    state.sending = 0
                    state.sent += sent
                    if state.spare.capacity < chunk.capacity { state.spare = chunk }
                }
                continue
            }
            // The client's socket is full: the rest goes first once it has room. Moved in
            // place, both buffers kept: a burst larger than the socket allocates nothing.
            chunk.removeFirst(max(sent, 0))
            state.withLock { state in
                state.sending = 0
                state.sent += max(sent, 0)
                guard !state.ended else { return }
                chunk.append(contentsOf: state.pending)
                state.pending.removeAll(keepingCapacity: true)
                state.spare = state.pending
                state.pending = chunk
                state.flushing = false
                state.armed = true
                writable.resume()
            }
            return
        }
    }

    private func finished() {
        let waiters = state.withLock { state in
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
        drained()
    }
}
