import Glibc

/// A value guarded by a `pthread_mutex_t`: `withLock` runs its body with the lock held.
///
/// Why not the standard library's `Synchronization.Mutex`: on Linux it locks with futex calls
/// ThreadSanitizer cannot see, so every value it guards is reported as a race under
/// `scripts/test --sanitize thread` (reports that hide real ones). `pthread_mutex_lock` is
/// intercepted by the sanitizers, and costs the same uncontended. Its API is the standard
/// one's (`withLock`); its name is its own, because a type that shadows `Mutex` inside one
/// module confused incremental builds (files compiled against either type crashed at run time).
final class Locked<Value>: @unchecked Sendable {  // Sendable: `value` is only touched with `lock` held
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    // Behind a pointer rather than a stored `var`: the body's inout access is then plain
    // memory the lock orders, not a class property access with its own exclusivity tracking.
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
