/// Why the state directory or a service's store refused or failed an operation, naming the
/// path concerned and keeping `errno` when a system call failed.
public struct StorageError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What is wrong.
    public enum Code: Equatable, Sendable {
        /// A system call failed.
        case system(SystemError)
        /// The directory could be changed by another user: `detail` says how.
        case insecure(detail: String)
        /// Another process holds the state directory (two hosts cannot share one).
        case inUse
        /// Neither `XDG_STATE_HOME`, `HOME` nor the password database names a home.
        case noDefaultLocation
        /// The service id could name a path outside the state directory, or is not an id.
        case invalidServiceID(id: String, reason: String)
        /// The key is empty or holds a NUL byte.
        case invalidKey(reason: String)
        /// The key's file name (see ``ServiceStore``) is longer than the limit.
        case keyTooLong(fileNameBytes: Int, limit: Int)
        /// The value is larger than the limit.
        case valueTooLarge(bytes: Int, limit: Int)
        /// Adding a key would pass the limit of keys per service.
        case tooManyKeys(limit: Int)
        /// A value's file is a directory, FIFO, symlink or device.
        case notRegularFile(kind: String)
        /// A file the host wrote holds something else now (damaged on disk, or edited).
        case corrupt(detail: String)
    }

    /// The file or directory concerned.
    public let path: String
    /// What is wrong.
    public let code: Code

    /// An error about `path`.
    public init(path: String, code: Code) {
        self.path = path
        self.code = code
    }

    static func system(_ error: SystemError) -> StorageError { StorageError(path: error.path, code: .system(error)) }

    /// Runs `body`, turning its ``SystemError`` into a ``StorageError``. (A `do`/`catch` inside a
    /// closure does not infer the typed error, so closures use this instead.)
    @discardableResult
    static func wrapping<T>(_ body: () throws(SystemError) -> T) throws(StorageError) -> T {
        do { return try body() } catch { throw .system(error) }
    }

    /// The `errno` of a failed system call, or nil.
    public var errno: Int32? {
        if case .system(let error) = code { return error.errno }
        return nil
    }

    /// Whether the caller asked for something the store refuses (a bad key or id, a limit),
    /// as opposed to a failure of the disk or the directory: `SH_INVALID` rather than `SH_ERROR`.
    public var isInvalidRequest: Bool {
        switch code {
        case .invalidServiceID, .invalidKey, .keyTooLong, .valueTooLarge, .tooManyKeys: true
        case .system, .insecure, .inUse, .noDefaultLocation, .notRegularFile, .corrupt: false
        }
    }

    /// One line: the path, then what is wrong.
    public var description: String {
        if case .noDefaultLocation = code { return reason }
        return "\(path): \(reason)"
    }

    /// What is wrong, without the path (`corrupt: not a saved authorization`): the `reason`
    /// field of the log events about a file that cannot be used.
    public var reason: String {
        switch code {
        case .system(let error):
            "\(error.operation) failed: \(error.reason)"
        case .insecure(let detail):
            "refused: \(detail) (\(FileSecurity.fix(for: detail)), choose another --state-dir,"
                + " or pass --allow-insecure-plugins)"
        case .inUse:
            "the state directory is in use by another process (two hosts cannot share one; pass --state-dir)"
        case .noDefaultLocation:
            "no state directory: neither XDG_STATE_HOME nor HOME is set and the user has no home directory (pass --state-dir)"
        case .invalidServiceID(let id, let reason):
            "invalid service id \"\(id)\": \(reason)"
        case .invalidKey(let reason):
            "invalid key: \(reason)"
        case .keyTooLong(let bytes, let limit):
            "key too long: its file name would be \(bytes) bytes, the limit is \(limit)"
                + " (bytes other than A-Z a-z 0-9 . _ - take three)"
        case .valueTooLarge(let bytes, let limit):
            "value too large: \(bytes) bytes, the limit is \(limit)"
        case .tooManyKeys(let limit):
            "too many keys: the limit is \(limit) per service"
        case .notRegularFile(let kind):
            "is a \(kind), not a regular file"
        case .corrupt(let detail):
            "corrupt: \(detail)"
        }
    }

    /// What is wrong, for a log line that names the file `path` in a field of its own: the
    /// reason alone when the error is about that file, with the error's own path when it is
    /// about another (the folder holding it).
    public func reason(about path: String) -> String { self.path == path ? reason : description }
}
