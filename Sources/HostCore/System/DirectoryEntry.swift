import Glibc

extension UnsafeMutablePointer where Pointee == dirent {
    /// The entry's name as the bytes `readdir` gave, without its NUL.
    ///
    /// Read through the field's address, never by copying `d_name`: the kernel's records are
    /// only as long as their name, so the declared 256-byte array can run past the end of
    /// `readdir`'s buffer (AddressSanitizer reported exactly that read).
    var nameBytes: [UInt8] {
        withUnsafeMutablePointer(to: &pointee.d_name) { field in
            UnsafeRawPointer(field).withMemoryRebound(to: CChar.self, capacity: 1) { name in
                Array(UnsafeRawBufferPointer(start: name, count: strlen(name)))
            }
        }
    }

    /// Whether the entry's name starts with `prefix` (which holds no NUL), read in place: no
    /// array per entry for a listing that wants a few names of many.
    func nameStarts(with prefix: [UInt8]) -> Bool {
        withUnsafeMutablePointer(to: &pointee.d_name) { field in
            // strncmp stops at the name's NUL, so it reads no further than the name.
            UnsafeRawPointer(field).withMemoryRebound(to: CChar.self, capacity: 1) { name in
                prefix.withUnsafeBytes {
                    strncmp(name, $0.baseAddress!.assumingMemoryBound(to: CChar.self), prefix.count) == 0
                }
            }
        }
    }
}
