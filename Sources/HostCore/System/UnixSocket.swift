import Glibc

/// Unix-domain stream sockets: the calls the control channel and the worker channel need,
/// with typed errors.
enum UnixSocket {
    /// Binds and listens on `address`, created with mode 0600 (umask set around bind, so the
    /// socket never exists with wider permissions).
    static func listen(_ address: UnixSocketAddress) throws(SystemError) -> FileDescriptor {
        let socket = try FileDescriptor.socket(SOCK_STREAM, path: address.path)
        let old = umask(0o177)
        let bound = address.withSocketAddress { bind(socket.rawValue, $0, $1) }
        umask(old)
        guard bound == 0 else { throw .current("bind", address.path) }
        guard Glibc.listen(socket.rawValue, 64) == 0 else { throw .current("listen", address.path) }
        return socket
    }

    /// Connects to `address`.
    static func connect(_ address: UnixSocketAddress) throws(SystemError) -> FileDescriptor {
        let socket = try FileDescriptor.socket(SOCK_STREAM, path: address.path)
        // A Unix-domain connect interrupted while it waits for room in the backlog is left
        // unconnected (unlike TCP's), so calling it again is right.
        _ = try retryingOnInterrupt("connect", address.path) {
            address.withSocketAddress { Glibc.connect(socket.rawValue, $0, $1) }
        }
        return socket
    }

    /// The uid of the process at the other end (SO_PEERCRED).
    static func peerUID(_ socket: borrowing FileDescriptor) -> uid_t? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }, which Glibc's module map only
        // exposes with _GNU_SOURCE; its layout is fixed by the kernel ABI.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(socket.rawValue, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return credentials.uid
    }
}
