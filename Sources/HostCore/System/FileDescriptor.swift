import CSystem
import Glibc

/// A file descriptor the host owns: closed exactly once, by ``close(_:)`` or when the value
/// goes away.
///
/// Noncopyable rather than a class: there is never a second copy to close again or to use after
/// the close (when the number may already name another file), and it costs no allocation.
/// An owner shared between threads keeps it in a `let` of a final class and borrows
/// ``rawValue`` for each call; the descriptor then closes in that owner's deinit, after the
/// last call, never under a thread still using it.
///
/// Everything here that creates a descriptor sets close-on-exec in the same call
/// (`O_CLOEXEC`, `SOCK_CLOEXEC`, `F_DUPFD_CLOEXEC`), so no worker started meanwhile on another
/// thread can inherit it.
struct FileDescriptor: ~Copyable, Sendable {
    /// The descriptor's number, valid while this value lives.
    let rawValue: Int32

    /// Takes ownership of `rawValue`, which the caller must not close.
    init(taking rawValue: Int32) {
        precondition(rawValue >= 0, "not a file descriptor: \(rawValue)")
        self.rawValue = rawValue
    }

    deinit { _ = Glibc.close(rawValue) }

    /// `close(2)` now, reporting its failure (a write-back error of a file just written).
    /// The descriptor is gone afterwards either way; Linux never wants a close retried.
    consuming func close(_ path: String) throws(SystemError) {
        let raw = rawValue
        discard self
        guard Glibc.close(raw) == 0 else { throw .current("close", path) }
    }

    /// Gives ownership up without closing, to a call that takes it over (`fdopendir(3)`).
    consuming func release() -> Int32 {
        let raw = rawValue
        discard self
        return raw
    }

    /// Two descriptors made together: a pipe's read and write ends, or a socketpair's ends.
    struct Pair: ~Copyable, Sendable {
        /// A pipe's read end; a socketpair's first end.
        let first: FileDescriptor
        /// A pipe's write end; a socketpair's second end.
        let second: FileDescriptor
    }

    /// `openat(2)` of `name` in `directory` (the working directory by default), close-on-exec.
    /// - Parameter path: names the file in the error; `name` when nil.
    static func open(
        _ name: String, _ flags: Int32, mode: mode_t = 0, in directory: Int32 = AT_FDCWD,
        path: String? = nil
    ) throws(SystemError) -> FileDescriptor {
        // `withCString` lends the name's own bytes; passing the String copied them into a new
        // array at every open (a start opens a few dozen files and folders).
        let opened = name.withCString { cName in
            Result { () throws(SystemError) in
                try retryingOnInterrupt("open", path ?? name) { openat(directory, cName, flags | O_CLOEXEC, mode) }
            }
        }
        return FileDescriptor(taking: try opened.get())
    }

    /// An `AF_UNIX` socket of `type` (`SOCK_STREAM`, `SOCK_DGRAM`), close-on-exec.
    /// - Parameter path: the socket it is for, named in the error.
    static func socket(_ type: __socket_type, path: String) throws(SystemError) -> FileDescriptor {
        FileDescriptor(
            taking: try retryingOnInterrupt("socket", path) {
                Glibc.socket(AF_UNIX, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            })
    }

    /// A connected pair of `AF_UNIX` stream sockets (`socketpair(2)`), both close-on-exec.
    static func socketPair(path: String) throws(SystemError) -> Pair {
        var ends: [Int32] = [-1, -1]
        _ = try retryingOnInterrupt("socketpair", path) {
            socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends)
        }
        return Pair(first: FileDescriptor(taking: ends[0]), second: FileDescriptor(taking: ends[1]))
    }

    /// A pipe (`pipe2(2)`), both ends close-on-exec: ``Pair/first`` reads what
    /// ``Pair/second`` writes.
    static func pipe(path: String) throws(SystemError) -> Pair {
        var ends: [Int32] = [-1, -1]
        _ = try retryingOnInterrupt("pipe", path) { csystem_pipe2(&ends, O_CLOEXEC) }
        return Pair(first: FileDescriptor(taking: ends[0]), second: FileDescriptor(taking: ends[1]))
    }

    /// The next connection on this listening socket (`accept4(2)`), close-on-exec.
    func accept(path: String) throws(SystemError) -> FileDescriptor {
        FileDescriptor(
            taking: try retryingOnInterrupt("accept", path) {
                csystem_accept4(rawValue, Int32(SOCK_CLOEXEC.rawValue))
            })
    }

    /// A second descriptor for the same open file, numbered `atLeast` or above, close-on-exec
    /// (`F_DUPFD_CLOEXEC`).
    func duplicate(atLeast lowest: Int32, path: String) throws(SystemError) -> FileDescriptor {
        FileDescriptor(taking: try retryingOnInterrupt("fcntl", path) { fcntl(rawValue, F_DUPFD_CLOEXEC, lowest) })
    }
}
