import Glibc

/// Unix-domain stream sockets: the calls the control channel needs, with typed errors.
enum UnixSocket {
    /// The longest path `sockaddr_un` holds.
    static let maxPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    private static func address(_ path: String) throws(SystemError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count <= maxPathLength else {
            throw SystemError(operation: "bind", path: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return address
    }

    private static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) throws(SystemError) -> R {
        var address = try address(path)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A new stream socket, close-on-exec.
    static func make(_ path: String) throws(SystemError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .current("socket", path) }
        return fd
    }

    /// Binds and listens on `path`, created with mode 0600 (umask set around bind, so the
    /// socket never exists with wider permissions).
    static func listen(_ path: String) throws(SystemError) -> Int32 {
        let fd = try make(path)
        let old = umask(0o177)
        let bound = try withAddress(path) { Glibc.bind(fd, $0, $1) }
        umask(old)
        guard bound == 0 else {
            let error = SystemError.current("bind", path)
            close(fd)
            throw error
        }
        guard Glibc.listen(fd, 64) == 0 else {
            let error = SystemError.current("listen", path)
            close(fd)
            throw error
        }
        return fd
    }

    /// Connects to `path`.
    static func connect(_ path: String) throws(SystemError) -> Int32 {
        let fd = try make(path)
        while true {
            if try withAddress(path, { Glibc.connect(fd, $0, $1) }) == 0 { return fd }
            if errno == EINTR { continue }
            let error = SystemError.current("connect", path)
            close(fd)
            throw error
        }
    }

    /// The uid of the process at the other end (SO_PEERCRED).
    static func peerUID(_ fd: Int32) -> uid_t? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }, which Glibc's module map only
        // exposes with _GNU_SOURCE; its layout is fixed by the kernel ABI.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return credentials.uid
    }

    /// Accepts one connection, close-on-exec.
    static func accept(_ listener: Int32) -> Int32? {
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }

    /// Writes all of `bytes`; false when the peer is gone or the send timed out.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = send(fd, buffer.baseAddress! + done, buffer.count - done, Int32(MSG_NOSIGNAL))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            return true
        }
    }

    /// Reads what is available, up to `capacity` bytes: nil on error, empty at end of file.
    static func read(_ fd: Int32, capacity: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: capacity)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, capacity) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            return Array(buffer[..<n])
        }
    }

    /// Sets a send timeout, so a client that stops reading cannot stall its writer forever.
    static func setSendTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}
