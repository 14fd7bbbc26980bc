import Glibc

/// The address of a Unix-domain socket (`sockaddr_un`), checked against the 108 bytes of
/// `sun_path`: the one place the host builds one (the control socket, `host ctl`, the systemd
/// notifier).
struct UnixSocketAddress: Sendable {
    /// The path as given: a file system path, or `@name` in the abstract namespace.
    let path: String
    private let address: sockaddr_un
    private let length: socklen_t

    /// How many bytes `sun_path` holds (108 on Linux).
    static let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

    /// Why a path cannot be a socket address.
    struct PathError: Error, CustomStringConvertible, Equatable, Sendable {
        /// What is wrong with the path.
        enum Code: Equatable, Sendable {
            /// Longer than `sun_path` holds: `bytes` against `limit`.
            case tooLong(bytes: Int, limit: Int)
            /// A NUL byte inside the path would cut it short.
            case containsNUL
        }

        /// The path as given.
        let path: String
        /// What is wrong with it.
        let code: Code

        /// The `errno` a system call would have given: `ENAMETOOLONG` or `EINVAL`.
        var errno: Int32 {
            switch code {
            case .tooLong: ENAMETOOLONG
            case .containsNUL: EINVAL
            }
        }

        var description: String {
            switch code {
            case .tooLong(let bytes, let limit): "socket path \(path) is \(bytes) bytes; the limit is \(limit)"
            case .containsNUL: "socket path \(path) contains a NUL byte"
            }
        }
    }

    /// The address of `path`. With `allowingAbstract`, `@name` is `name` in Linux's abstract
    /// namespace (as systemd's `NOTIFY_SOCKET` may give it): a leading NUL instead of the `@`,
    /// and a length that counts only the name's bytes.
    /// - Throws: a path longer than 107 bytes (`sun_path` keeps one for the terminating NUL;
    ///   an abstract name has none, so `@` and 107 bytes fit), or one with a NUL byte inside.
    init(_ path: String, allowingAbstract: Bool = false) throws(PathError) {
        var bytes = Array(path.utf8)
        let abstract = allowingAbstract && bytes.first == UInt8(ascii: "@")
        let limit = abstract ? Self.capacity : Self.capacity - 1
        guard bytes.count <= limit else {
            throw PathError(path: path, code: .tooLong(bytes: bytes.count, limit: limit))
        }
        guard !bytes.contains(0) else { throw PathError(path: path, code: .containsNUL) }
        if abstract { bytes[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        self.path = path
        self.address = address
        length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1))
    }

    /// Calls `body` with the address as the `sockaddr` pointer and length that `bind(2)`,
    /// `connect(2)` and `sendto(2)` take.
    func withSocketAddress<Result, Failure: Error>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var address = address
        return try withUnsafePointer(to: &address) { pointer throws(Failure) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress throws(Failure) in
                try body(socketAddress, length)
            }
        }
    }
}
