import Glibc
import ServiceJSON

/// `<state>/failures/<service-id>.json`: the services a crash loop marked failed.
///
/// The host writes and removes records; `host inspect` only reads them (and never creates
/// the directory). A service id is a safe file name (ServiceID's rules), checked again here.
public struct FailureStore: Sendable {
    /// The state directory.
    public let stateDirectory: String
    /// The records' folder.
    public var directory: String { stateDirectory + "/failures" }
    /// The largest record read, in bytes.
    static let maxRecordSize = 64 << 10
    /// The names in the records' folder when ``listed()`` read it; nil: not read, every lookup
    /// opens its file.
    private var names: Set<[UInt8]>?

    /// The store of `stateDirectory`.
    public init(stateDirectory: String) {
        var trimmed = stateDirectory
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.stateDirectory = trimmed
    }

    /// The record's file.
    public func path(for serviceID: String) -> String { directory + "/" + serviceID + ".json" }

    /// This store with its folder listed once (one `readdir`), so a lookup of a service without
    /// a record opens nothing: `host inspect` asks for every service of every file.
    public func listed() -> FailureStore {
        var copy = self
        var names = Set<[UInt8]>()
        if let stream = opendir(directory) {
            defer { closedir(stream) }
            while let entry = readdir(stream) { names.insert(entry.nameBytes) }
        }
        copy.names = names
        return copy
    }

    /// The record of `serviceID`, or nil when there is none (or it cannot be read).
    public func record(for serviceID: String) -> FailureRecord? {
        if let names, !names.contains(Array((serviceID + ".json").utf8)) { return nil }
        guard (try? StateDirectory.checkServiceID(serviceID, in: directory)) != nil,
            let folder = try? DirectoryHandle.open(directory),
            let bytes = try? folder.read(serviceID + ".json", limit: Self.maxRecordSize) ?? nil,
            let value = try? JSONValue(parsing: bytes)
        else { return nil }
        return FailureRecord(json: value)
    }

    /// Writes `record` atomically, creating the folders (mode 0700) when missing.
    public func save(_ record: FailureRecord) throws(StorageError) {
        try StateDirectory.checkServiceID(record.serviceID, in: directory)
        let bytes = Array((record.json.serialized + "\n").utf8)
        do {
            try DirectoryHandle.makeDirectories(stateDirectory)
            let folder = try DirectoryHandle.open(stateDirectory).subdirectory("failures")
            let written = bytes.withUnsafeBytes { buffer in
                Result { () throws(SystemError) in try folder.replace(record.serviceID + ".json", with: buffer) }
            }
            try written.get()
        } catch {
            throw .system(error)
        }
    }

    /// Removes the record of `serviceID`; false when there was none.
    @discardableResult
    public func remove(_ serviceID: String) throws(StorageError) -> Bool {
        try StateDirectory.checkServiceID(serviceID, in: directory)
        guard let folder = try? DirectoryHandle.open(directory) else { return false }
        do { return try folder.remove(serviceID + ".json") } catch { throw .system(error) }
    }
}
