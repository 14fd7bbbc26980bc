import Glibc

/// A failed system call, keeping `errno` and the path it was about.
public struct SystemError: Error, CustomStringConvertible, Equatable {
    /// The call that failed: "open", "read", "stat".
    public let operation: String
    /// The file or directory the call was about.
    public let path: String
    /// The `errno` value the call left.
    public let errno: Int32

    /// An error of `operation` on `path` with `errno`.
    public init(operation: String, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// The error for the current `errno`.
    public static func current(_ operation: String, _ path: String) -> SystemError {
        SystemError(operation: operation, path: path, errno: Glibc.errno)
    }

    /// `strerror(errno)`: "No such file or directory".
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String { "\(path): \(operation): \(reason)" }
}
