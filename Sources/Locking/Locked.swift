import Glibc

/// A value guarded by a `pthread_mutex_t`: `withLock` runs its body with the lock held.
///
/// The one lock of the host (HostCore) and the SDK (ServiceKit, ServiceKitTesting), `package`:
/// not part of the SDK's public API. A plugin does not use it: it links only the SDK's public
/// API (MQTTBridge keeps a copy of its own).
///
/// Why not the standard library's `Synchronization.Mutex`: on Linux it locks with futex calls
/// ThreadSanitizer cannot see, so every value it guards is reported as a race under
/// `scripts/test --sanitize thread` (CI did, for ServiceKit's `TestAttachments`; reports that
/// hide real ones). `pthread_mutex_lock` is intercepted by the sanitizers, and costs the same
/// uncontended. Its API is the standard one's (`withLock`); its name is its own, because a type
/// that shadows `Mutex` inside one module confused incremental builds (files compiled against
/// either type crashed at run time).
///
/// Inlinable: HostCore's uses are specialized and inlined where they are, as when the type
/// was HostCore's own.
package final class Locked<Value>: @unchecked Sendable {  // Sendable: `value` is only touched with `lock` held
    @usableFromInline let lock: UnsafeMutablePointer<pthread_mutex_t>
    // Behind a pointer rather than a stored `var`: the body's inout access is then plain
    // memory the lock orders, not a class property access with its own exclusivity tracking.
    // In the lock's allocation, after it: one allocation for both (every service's context
    // makes two locks at each start). Not a ManagedBuffer subclass: a generic class with a
    // resilient superclass has its metadata built at run time for each `Value` (0.5 M
    // instructions of every start, callgrind).
    @usableFromInline let value: UnsafeMutablePointer<Value>

    /// Where the value starts in the allocation: after the mutex, aligned for `Value`.
    @inlinable static var valueOffset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<pthread_mutex_t>.stride + alignment - 1) / alignment * alignment
    }

    /// A lock guarding `initialValue`.
    @inlinable package init(_ initialValue: consuming sending Value) {
        let memory = UnsafeMutableRawPointer.allocate(
            byteCount: Self.valueOffset + MemoryLayout<Value>.size,
            alignment: max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<Value>.alignment))
        lock = memory.initializeMemory(as: pthread_mutex_t.self, to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
        value = (memory + Self.valueOffset).initializeMemory(as: Value.self, to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        pthread_mutex_destroy(lock)
        lock.deinitialize(count: 1)
        UnsafeMutableRawPointer(lock).deallocate()
    }

    /// Runs `body` with the lock held and the value lent to it.
    @inlinable package func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value.pointee)
    }
}
