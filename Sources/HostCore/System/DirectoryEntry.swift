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
}
