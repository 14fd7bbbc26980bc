import Glibc

/// Calls `body`, again each time it fails with `EINTR`, and returns what it returned: -1 with
/// `errno` set for any other failure.
///
/// The tests' copy of the host's one `EINTR` loop (HostCore's `retryingOnInterrupt`): the
/// end-to-end tests run the host's binary and do not link its code. `body` is one system call
/// in the C convention (`write`, `waitpid`, …); never wrap `close(2)`.
func retryingOnInterrupt<Value: FixedWidthInteger & SignedInteger>(_ body: () -> Value) -> Value {
    while true {
        let result = body()
        if result != -1 || errno != EINTR { return result }
    }
}
