import Glibc

/// Starts a detached POSIX thread running `body`: for loops that block in system calls
/// (a worker's reader, the signal thread), which must not hold a Dispatch worker thread.
enum DetachedThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func start(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                let body = Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue()
                body.run()
                return nil
            }, box)
        precondition(result == 0, "pthread_create failed: \(String(cString: strerror(result)))")
        pthread_detach(thread)
    }
}
