import ServiceABI

/// Reads a struct a plugin handed over by the ABI's rule (servicehost/version.h): it is
/// accepted when its `size` covers its version-1 members, and a member it was not compiled
/// with (one added after the size it declares) reads as zero, never as the bytes after it.
enum ABIStruct {
    /// Why a struct was refused: its declared size is below its version 1's.
    struct TooSmall: Error {
        let declared: UInt32
        let v1Size: UInt32
    }

    /// A copy of `*pointer` holding the first `size` bytes the plugin declared (at most the
    /// host's own size), the rest zero; throws when `size` does not cover version 1.
    static func read<T>(_ pointer: UnsafePointer<T>, v1Size: UInt32) throws(TooSmall) -> T {
        // Every runtime struct starts with its size (layout.h pins offset 0).
        let declared = UnsafeRawPointer(pointer).load(as: UInt32.self)
        guard declared >= v1Size else { throw TooSmall(declared: declared, v1Size: v1Size) }
        let size = MemoryLayout<T>.size
        // On the stack: a heap block per struct was two allocations per plugin at every start.
        return withUnsafeTemporaryAllocation(byteCount: size, alignment: MemoryLayout<T>.alignment) { copy in
            copy.initializeMemory(as: UInt8.self, repeating: 0)
            copy.baseAddress!.copyMemory(from: pointer, byteCount: min(Int(declared), size))
            return copy.baseAddress!.load(as: T.self)
        }
    }
}
