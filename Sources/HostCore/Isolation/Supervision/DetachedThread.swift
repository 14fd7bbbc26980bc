import Glibc

/// Starts a detached POSIX thread running `body`: for loops that block in system calls
/// (a worker's reader, the signal thread), which must not hold a Dispatch worker thread.
///
/// A thread that cannot be started (`EAGAIN`: a process or cgroup limit on threads) is an
/// error naming the thread, for the caller to report; never a trap.
enum DetachedThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a thread of its own; `name` says which thread in the error.
    static func start(_ name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                let body = Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue()
                body.run()
                return nil
            }, box)
        guard result == 0 else {
            // The thread never ran: the box (and what `body` holds) is released here.
            Unmanaged<Body>.fromOpaque(box).release()
            throw SystemError(operation: "pthread_create", path: name, errno: result)
        }
        pthread_detach(thread)
    }
}
