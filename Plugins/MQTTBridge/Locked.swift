import Glibc

/// A value guarded by a `pthread_mutex_t`: `withLock` runs its body with the lock held.
///
/// Why not `Synchronization.Mutex`: on Linux it locks with futex calls ThreadSanitizer cannot
/// see, so `scripts/test --sanitize thread` reported the connection thread and `stop` (both
/// inside `withLock`) as a data race. HostCore has the same type; a plugin cannot link HostCore
/// (only C types cross the boundary), so the bridge carries its own.
final class Locked<Value>: @unchecked Sendable {  // Sendable: `value` is only touched with `lock` held
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    /// A lock guarding `initialValue`.
    init(_ initialValue: consuming sending Value) {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` with the lock held and the value lent to it.
    func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value.pointee)
    }
}
