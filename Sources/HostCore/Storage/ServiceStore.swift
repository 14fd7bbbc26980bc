import Glibc
import Synchronization

/// One service's persistent key-value store: `<state>/services/<service-id>/`, one file per key.
///
/// Keys and values are bytes. A key is any non-empty byte string without NUL (keys cross the
/// C ABI as C strings); it is stored as a file name by ``StoreKey``: ordinary keys keep their
/// spelling, other bytes become `%XX`. Every write is atomic and durable: the value goes to a
/// temporary file in the same directory, which is `fsync`ed and renamed over the key's file,
/// then the directory is `fsync`ed, so after a crash or `kill -9` at any moment each key holds
/// its old or its new value, never a mix, and a `set` that returned is on disk. Temporary files
/// a crash leaves are removed when the store opens.
///
/// The default ``Limits``: a key's file name at most 255 bytes (the file system's limit; a key
/// of ordinary characters can be 255 bytes long, other bytes count three), a value at most
/// 1 MiB, at most 10 000 keys per service.
///
/// Thread-safe. Writes are serialized; reads do not wait for them (a read sees the old or the
/// new value).
public final class ServiceStore: Sendable {
    /// The store's limits.
    public struct Limits: Sendable, Equatable {
        /// The longest file name a key may take, in bytes.
        public var maxKeyFileName: Int
        /// The largest value, in bytes.
        public var maxValueSize: Int
        /// The most keys one service may hold.
        public var maxKeys: Int

        /// Limits; the defaults are ``default``'s.
        public init(maxKeyFileName: Int = 255, maxValueSize: Int = 1 << 20, maxKeys: Int = 10_000) {
            self.maxKeyFileName = maxKeyFileName
            self.maxValueSize = maxValueSize
            self.maxKeys = maxKeys
        }

        /// 255-byte file names, 1 MiB values, 10 000 keys.
        public static let `default` = Limits()
    }

    /// The service whose store this is.
    public let serviceID: String
    /// The limits checked on every call.
    public let limits: Limits
    private let directory: DirectoryHandle
    // Keeps the state directory open, and so its lock held, while the store lives.
    private let root: DirectoryHandle
    // The number of keys, kept by set and remove; the mutex also serializes every write.
    private let keyCount: Locked<Int>

    init(serviceID: String, directory: DirectoryHandle, root: DirectoryHandle, limits: Limits) throws(StorageError) {
        self.serviceID = serviceID
        self.directory = directory
        self.root = root
        self.limits = limits
        do { try directory.removeTemporaryFiles() } catch { throw .system(error) }
        keyCount = Locked(try Self.countKeys(in: directory))
    }

    /// The store's directory.
    public var path: String { directory.path }

    /// The value of `key`, or nil when it has none.
    public func get(_ key: some Collection<UInt8>) throws(StorageError) -> [UInt8]? {
        try directory.read(try fileName(key), limit: limits.maxValueSize)
    }

    /// Sets `key` to `value`, atomically and durably.
    public func set(_ key: some Collection<UInt8>, to value: UnsafeRawBufferPointer) throws(StorageError) {
        let name = try fileName(key)
        guard value.count <= limits.maxValueSize else {
            throw StorageError(path: path, code: .valueTooLarge(bytes: value.count, limit: limits.maxValueSize))
        }
        try keyCount.withLock { (count: inout Int) throws(StorageError) in
            let existed = try StorageError.wrapping { () throws(SystemError) in try directory.contains(name) }
            if !existed && count >= limits.maxKeys {
                // Count again: the kept number could be stale if the directory was edited.
                count = try Self.countKeys(in: directory)
                if count >= limits.maxKeys { throw StorageError(path: path, code: .tooManyKeys(limit: limits.maxKeys)) }
            }
            try StorageError.wrapping { () throws(SystemError) in try directory.replace(name, with: value) }
            if !existed { count += 1 }
        }
    }

    /// Sets `key` to `value`, atomically and durably.
    public func set(_ key: some Collection<UInt8>, to value: [UInt8]) throws(StorageError) {
        let result = value.withUnsafeBytes { buffer in
            Result { () throws(StorageError) in try set(key, to: buffer) }
        }
        try result.get()
    }

    /// Removes `key` durably; false when it had no value.
    @discardableResult
    public func remove(_ key: some Collection<UInt8>) throws(StorageError) -> Bool {
        let name = try fileName(key)
        return try keyCount.withLock { (count: inout Int) throws(StorageError) -> Bool in
            let removed = try StorageError.wrapping { () throws(SystemError) in try directory.remove(name) }
            if removed { count = max(0, count - 1) }
            return removed
        }
    }

    /// Every key, in byte order.
    public func keys() throws(StorageError) -> [[UInt8]] {
        let names: [String]
        do { names = try directory.names() } catch { throw .system(error) }
        return names.compactMap(StoreKey.decode).sorted { $0.lexicographicallyPrecedes($1) }
    }

    // MARK: String keys

    /// The value of the UTF-8 key `key`, or nil.
    public func get(_ key: String) throws(StorageError) -> [UInt8]? { try get(Array(key.utf8)) }

    /// Sets the UTF-8 key `key` to `value`.
    public func set(_ key: String, to value: [UInt8]) throws(StorageError) { try set(Array(key.utf8), to: value) }

    /// Removes the UTF-8 key `key`; false when it had no value.
    @discardableResult
    public func remove(_ key: String) throws(StorageError) -> Bool { try remove(Array(key.utf8)) }

    // MARK: Helpers

    private func fileName(_ key: some Collection<UInt8>) throws(StorageError) -> String {
        if let problem = StoreKey.problem(with: key) {
            throw StorageError(path: path, code: .invalidKey(reason: problem))
        }
        let name = StoreKey.encode(key)
        guard name.utf8.count <= limits.maxKeyFileName else {
            throw StorageError(
                path: path, code: .keyTooLong(fileNameBytes: name.utf8.count, limit: limits.maxKeyFileName))
        }
        return name
    }

    private static func countKeys(in directory: DirectoryHandle) throws(StorageError) -> Int {
        do { return try directory.names().count { StoreKey.decode($0) != nil } } catch { throw .system(error) }
    }
}
