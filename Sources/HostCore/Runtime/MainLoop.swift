import CSystem
import Dispatch
import Glibc

/// The main thread's event loop (issue 13), run instead of `dispatchMain()`: one epoll set
/// holding the main queue's wake-up handle and the descriptors registered with ``watch(_:name:)``
/// (the control connections; each worker's channel, output and pidfd in the host, and a
/// worker's channel in the worker: issue 37), so a readable descriptor is served on the thread
/// that wakes for it, with no hand-off to another thread. A watch reports readability, and
/// writability too while ``Watch/setWritable(_:)`` says so.
///
/// The main queue keeps working as before: libdispatch writes to its handle (an eventfd)
/// whenever work is queued there (`DispatchQueue.main.async`, MainActor jobs, main-queue
/// timers), and the loop drains it with `_dispatch_main_queue_callback_4CF`, which is how
/// Foundation's CFRunLoop drives the main queue on Linux. The epoll set is level-triggered:
/// a handler that leaves bytes unread (it reads at most a buffer per wake-up, for fairness) is
/// called again after everything else that was ready.
public final class MainLoop: Sendable {
    /// The process's loop; its epoll set is made on first use, ``run()`` drives it.
    public static let shared = MainLoop()

    private let epoll: Int32
    /// Why the set could not be made: ``run()`` throws it, and every ``Watch/resume()`` fails.
    private let failure: SystemError?
    // A registered descriptor's handler, by token (0 is the main queue): looked up under the
    // lock on each wake-up, so a watch cancelled on another thread after epoll_wait reported
    // it is not called.
    private let handlers = Locked<[UInt64: @Sendable () -> Void]>([:])
    private let nextToken = Locked<UInt64>(1)

    private init() {
        let made = csystem_epoll_create()
        epoll = made
        failure = made < 0 ? .current("epoll_create1", "the main loop") : nil
    }

    /// One descriptor in the loop: a handler the main thread calls while the descriptor is
    /// readable, between ``resume()`` and ``suspend()`` or ``cancel()``. Starts suspended, like
    /// a `DispatchSource`. Its methods may be called from any thread.
    public final class Watch: Sendable {
        private let loop: MainLoop
        private let fd: Int32
        private let token: UInt64
        private let name: String
        /// Reports EPOLLPRI instead of readability (a PSI trigger).
        private let priority: Bool
        private struct State {
            var active = false
            var cancelled = false
            var writable = false
        }
        private let state = Locked(State())

        fileprivate init(loop: MainLoop, fd: Int32, token: UInt64, name: String, priority: Bool) {
            self.loop = loop
            self.fd = fd
            self.token = token
            self.name = name
            self.priority = priority
        }

        /// Sets what runs on the main thread each time the descriptor is readable or hung up,
        /// until the watch is cancelled; it keeps what it captures alive until then. Whatever
        /// the caller wrote before is visible to the handler (it is published under the lock the
        /// loop reads it with).
        public func setHandler(_ handler: @escaping @Sendable () -> Void) {
            // Under the watch's lock: a cancel either sees the handler to remove or stops it here.
            state.withLock { state in
                guard !state.cancelled else { return }
                loop.handlers.withLock { $0[token] = handler }
            }
        }

        /// Reports readability (again) to the handler; nothing once cancelled.
        /// - Throws: epoll_ctl's error (ENOMEM, ENOSPC past fs.epoll.max_user_watches), naming
        ///   the descriptor; the watch stays suspended.
        public func resume() throws(SystemError) {
            let result: Result<Void, SystemError> = state.withLock { state in
                guard !state.cancelled, !state.active else { return .success(()) }
                let added =
                    priority
                    ? csystem_epoll_add_priority(loop.epoll, fd, token)
                    : csystem_epoll_add_for(loop.epoll, fd, state.writable ? 1 : 0, token)
                guard added == 0 else {
                    return .failure(.current("epoll_ctl(ADD)", name))
                }
                state.active = true
                return .success(())
            }
            try result.get()
        }

        /// Reports writability to the handler too (EPOLLOUT, level-triggered: it is called while
        /// the descriptor has room), until called with false: for a handler with bytes to write
        /// that the descriptor did not take yet. The handler tells which by trying.
        public func setWritable(_ writable: Bool) {
            state.withLock { state in
                guard !state.cancelled, state.writable != writable else { return }
                state.writable = writable
                // Cannot fail for a descriptor still open and in the set; a closed one is gone anyway.
                if state.active { _ = csystem_epoll_modify(loop.epoll, fd, writable ? 1 : 0, token) }
            }
        }

        /// Stops reporting readability until ``resume()``.
        ///
        /// Out of the set while suspended rather than registered for no events: epoll reports a
        /// hang-up whatever was asked for, which would call the handler of a connection waiting
        /// for its client to read. Removing a descriptor that is in the set fails only once it
        /// is closed, which removes it anyway.
        public func suspend() {
            state.withLock { state in
                guard !state.cancelled, state.active else { return }
                _ = csystem_epoll_remove(loop.epoll, fd)
                state.active = false
            }
        }

        /// Leaves the loop for good (before the descriptor is closed) and lets the handler go;
        /// a handler already running finishes.
        public func cancel() {
            let wasActive = state.withLock { state in
                defer {
                    state.cancelled = true
                    state.active = false
                }
                return state.active && !state.cancelled
            }
            // Cannot fail for a descriptor still open and in the set; the handler goes anyway.
            if wasActive { _ = csystem_epoll_remove(loop.epoll, fd) }
            loop.handlers.withLock { _ = $0.removeValue(forKey: token) }
        }
    }

    /// A watch of `fd`, suspended and without a handler: set one with ``Watch/setHandler(_:)``,
    /// then call ``Watch/resume()``. `name` names the descriptor in errors. With `priority` the
    /// handler is called for EPOLLPRI (urgent data, a PSI trigger firing) instead of readability.
    public func watch(_ fd: Int32, name: String, priority: Bool = false) -> Watch {
        let token = nextToken.withLock { next in
            defer { next += 1 }
            return next
        }
        return Watch(loop: self, fd: fd, token: token, name: name, priority: priority)
    }

    /// Serves the main queue and every watch on the calling thread (the main thread) forever.
    /// - Throws: when the epoll set cannot be made or waited on (errno kept); the caller
    ///   should say so and exit.
    public func run() throws(SystemError) -> Never {
        if let failure { throw failure }
        let queueHandle = _dispatch_get_main_queue_handle_4CF()
        // Emptied before each drain, never waited on: libdispatch only writes to it.
        _ = fcntl(queueHandle, F_SETFL, fcntl(queueHandle, F_GETFL) | O_NONBLOCK)
        guard csystem_epoll_add(epoll, queueHandle, 0) == 0 else {
            throw .current("epoll_ctl(ADD)", "the main queue's handle")
        }
        let capacity = 64
        let tokens = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity)
        let events = UnsafeMutablePointer<UInt32>.allocate(capacity: capacity)
        // Anything queued before the loop ran (its pokes are in the handle too).
        _dispatch_main_queue_callback_4CF(nil)
        while true {
            // A signal interrupts the wait (SIGTERM is recorded by its handler, read on the signal thread).
            let count = try retryingOnInterrupt("epoll_wait", "the main loop") {
                csystem_epoll_wait(epoll, tokens, events, Int32(capacity), -1)
            }
            for index in 0..<Int(count) {
                let token = tokens[index]
                if token == 0 {
                    var value: UInt64 = 0
                    _ = Glibc.read(queueHandle, &value, 8)
                    _dispatch_main_queue_callback_4CF(nil)
                } else if let handler = handlers.withLock({ $0[token] }) {
                    handler()
                }
            }
        }
    }
}
