import Glibc

/// The descriptors of a hand-over (``BridgeHandOver``) as the replacement takes them: a number
/// read from a restored state is used only when it still names the socket it named (its inode,
/// by `fstat`, and its type, by `getsockopt`) in the process that wrote it, and then through a
/// descriptor of the replacement's own (a dup), since the old copy closes its numbers when the
/// reload is over.
enum HandOverSocket {
    /// The inode of `fd` when it is an open stream socket; nil for anything else.
    static func inode(of fd: Int32) -> UInt64? {
        var status = stat()
        guard fd >= 0, fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return nil }
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == Int32(SOCK_STREAM.rawValue) else {
            return nil
        }
        return UInt64(status.st_ino)
    }

    /// A descriptor of the caller's own for the socket `fd` names, when that is still the
    /// socket of `inode`; nil (and nothing held) otherwise.
    static func adopt(_ fd: Int32, inode expected: UInt64) -> Int32? {
        guard inode(of: fd) == expected else { return nil }
        let own = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard own >= 0 else { return nil }
        // The number could have been closed and reused between the two calls: the copy says.
        guard inode(of: own) == expected else {
            close(own)
            return nil
        }
        return own
    }

    /// A connected pair of stream sockets (close-on-exec): the old copy's end and the new one's.
    static func pair() -> (old: Int32, new: Int32)? {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            return nil
        }
        return (ends[0], ends[1])
    }

    /// A CLOCK_MONOTONIC time (``MQTTClient``'s clock, one in the process) in nanoseconds,
    /// and back in seconds.
    static func nanoseconds(_ seconds: Double) -> UInt64 { seconds > 0 && seconds < 1e9 ? UInt64(seconds * 1e9) : 0 }
    static func seconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e9 }
}
