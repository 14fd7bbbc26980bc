import Glibc

/// Calls `body`, again each time it fails with `EINTR`, and returns what it returned.
///
/// `body` is one system call in the C convention: -1 with `errno` set on failure (`read`,
/// `open`, `flock`, `poll`, `waitpid`, …). `EINTR` means a signal arrived before the call did
/// anything, so calling it again is always right; every other failure is thrown.
/// Never wrap `close(2)`: on Linux the descriptor is gone even when it reports `EINTR`.
/// The one loop on `EINTR` for the host and its benchmark (a source rule keeps others out; a
/// plugin, which does not link the host, keeps its own copy).
/// - Parameters:
///   - operation: the call's name for the error: "read", "accept".
///   - path: the file or socket the call is about, for the error.
/// - Throws: `operation` on `path`, with the `errno` the call left.
@inlinable @inline(__always)
public func retryingOnInterrupt<Value: FixedWidthInteger & SignedInteger>(
    _ operation: String, _ path: String, _ body: () -> Value
) throws(SystemError) -> Value {
    while true {
        let result = body()
        if result != -1 { return result }
        if errno != EINTR { throw .current(operation, path) }
    }
}
