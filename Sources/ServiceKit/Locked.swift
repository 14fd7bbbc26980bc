import Glibc

/// A value guarded by a `pthread_mutex_t`, for ServiceKit, ServiceKitTesting and the bundled
/// services (`package`: not part of the SDK's public API). `withLock` runs its body with the
/// lock held.
///
/// Why not `Synchronization.Mutex`: on Linux it locks with futex calls ThreadSanitizer cannot
/// see, so `scripts/test --sanitize thread` reports every value it guards as a race (CI did, for
/// ``TestAttachments``' table written by two tests at once), and such reports hide real ones.
/// `pthread_mutex_lock` is intercepted by the sanitizers and costs the same uncontended.
/// HostCore has its own (the host never links ServiceKit).
///
/// One allocation: the value is the buffer's header and the mutex its one element, so the
/// mutex has a stable address (a pthread mutex must not move) without a second allocation.
package final class Locked<Value>: @unchecked Sendable {  // Sendable: the value is only touched with the mutex held
    private let storage: ManagedBuffer<Value, pthread_mutex_t>

    /// A lock guarding `initialValue`.
    package init(_ initialValue: sending Value) {
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
    package func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        try storage.withUnsafeMutablePointers { (value, mutex) throws(E) -> Result in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}
