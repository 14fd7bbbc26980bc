import Glibc

/// Calls `body`, again each time it fails with `EINTR`, and returns what it returned: -1 with
/// `errno` set for any other failure.
///
/// The bridge's copy of the host's one `EINTR` loop (HostCore's `retryingOnInterrupt`): a
/// plugin does not link the host. `body` is one system call in the C convention (`read`,
/// `send`, …); never wrap `close(2)`, whose descriptor is gone even when it reports `EINTR`.
@inline(__always)
func retryingOnInterrupt<Value: FixedWidthInteger & SignedInteger>(_ body: () -> Value) -> Value {
    while true {
        let result = body()
        if result != -1 || errno != EINTR { return result }
    }
}
