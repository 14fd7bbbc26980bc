import Glibc

extension FileDescriptor {
    /// `read(2)`: what is there, up to `buffer.count` bytes, waiting until something is; 0 at
    /// end of file.
    func read(into buffer: UnsafeMutableRawBufferPointer, path: String) throws(SystemError) -> Int {
        try retryingOnInterrupt("read", path) { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// `read(2)` of up to `capacity` bytes: empty at end of file.
    func read(upTo capacity: Int, path: String) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: capacity)
        // Array's withUnsafeMutableBytes rethrows untyped errors: the Result keeps the type.
        let count = try bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(SystemError) in try read(into: buffer, path: path) }
        }.get()
        bytes.removeLast(capacity - count)
        return bytes
    }

    /// `pread(2)` of `count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: Int, count: Int, path: String) throws(SystemError) -> [UInt8] {
        var failure: SystemError?
        // Not zero-filled first: only the bytes read are kept (reading a registry of a few MiB
        // paid a memset as long as the read itself).
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(SystemError) {
                initialized = try read(into: UnsafeMutableRawBufferPointer(buffer), at: offset, path: path)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// `pread(2)` into all of `buffer` from `offset`; the count read, fewer only at the end of
    /// the file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String) throws(SystemError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = try retryingOnInterrupt("read", path) {
                pread(rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// `write(2)` of all of `bytes`.
    func writeAll(_ bytes: UnsafeRawBufferPointer, path: String) throws(SystemError) {
        try writeInFull(bytes, "write", path) { Glibc.write(rawValue, $0, $1) }
    }

    /// `send(2)` of all of `bytes` on a socket. `MSG_NOSIGNAL`: a peer that is gone is `EPIPE`
    /// here, never a SIGPIPE that kills the host; a send timeout that passes is `EAGAIN`.
    func sendAll(_ bytes: [UInt8], path: String) throws(SystemError) {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemError) in
                try writeInFull(buffer, "send", path) { Glibc.send(rawValue, $0, $1, Int32(MSG_NOSIGNAL)) }
            }
        }.get()
    }

    /// Repeats `call` (a write) until all of `bytes` are written: one call may write only part.
    private func writeInFull(
        _ bytes: UnsafeRawBufferPointer, _ operation: String, _ path: String,
        _ call: (UnsafeRawPointer, Int) -> Int
    ) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let n = try retryingOnInterrupt(operation, path) { call(bytes.baseAddress! + done, bytes.count - done) }
            guard n > 0 else { throw SystemError(operation: operation, path: path, errno: EPIPE) }
            done += n
        }
    }
}
