import Glibc

/// A value guarded by a `pthread_mutex_t`: `withLock` runs its body with the lock held.
///
/// The bridge's own copy of the host's and the SDK's `Locked` (Sources/Locking), which is not
/// part of the SDK's public API: a plugin carries its own. Not `Synchronization.Mutex`, whose
/// futex calls ThreadSanitizer cannot see (every value it guards is reported as a race).
///
/// One allocation: the value is the buffer's header and the mutex its one element, so the
/// mutex has a stable address (a pthread mutex must not move) without a second allocation.
final class Locked<Value>: @unchecked Sendable {  // Sendable: the value is only touched with the mutex held
    private let storage: ManagedBuffer<Value, pthread_mutex_t>

    /// A lock guarding `initialValue`.
    init(_ initialValue: sending Value) {
        storage = ManagedBuffer.create(minimumCapacity: 1) { _ in initialValue }
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            _ = pthread_mutex_init(mutex, nil)
        }
    }

    deinit {
        storage.withUnsafeMutablePointerToElements { mutex in
            _ = pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
    }

    /// Runs `body` with the lock held and the value lent to it.
    func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        try storage.withUnsafeMutablePointers { (value, mutex) throws(E) -> Result in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}
