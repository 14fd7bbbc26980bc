import Glibc

extension UnsafePointer {
    /// A copy of a versioned C struct the host handed over, read only up to the `size` it
    /// declares in its first member: a struct from an older host is shorter than this SDK's
    /// layout, and the bytes past its end are not the host's to give (they may not even be
    /// readable). Members past `size` read as zero; callers still check `size` before using them.
    func copyWithinDeclaredSize() -> Pointee {
        let declared = Int(UnsafeRawPointer(self).load(as: UInt32.self))
        let layout = MemoryLayout<Pointee>.size
        if declared >= layout { return pointee }
        let copy = UnsafeMutableRawPointer.allocate(byteCount: layout, alignment: MemoryLayout<Pointee>.alignment)
        defer { copy.deallocate() }
        memset(copy, 0, layout)
        copy.copyMemory(from: UnsafeRawPointer(self), byteCount: Swift.max(declared, 0))
        // Only plain C structs come through here: trivial types, safe to load from raw bytes.
        return copy.load(as: Pointee.self)
    }
}
