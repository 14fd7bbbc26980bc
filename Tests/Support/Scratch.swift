import Foundation

/// A private temporary folder (mode 0700, as mkdtemp makes it), removed on deinit.
public final class Scratch {
    /// The folder's path.
    public let path: String

    /// Makes a new folder.
    public init() throws {
        var template = Array((NSTemporaryDirectory() + "/servicehost-test-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed: errno \(errno)") }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// `path/name`.
    public func file(_ name: String) -> String { path + "/" + name }

    /// A subfolder, created with `mode`.
    public func folder(_ name: String, mode: Int = 0o755) throws -> String {
        let folder = file(name)
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true,
            attributes: [.posixPermissions: mode])
        return folder
    }

    /// Writes `bytes` to `name` with `mode`.
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8], mode: Int = 0o644) throws -> String {
        let target = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: target)
        return target
    }

    /// Copies `source` to `name` with `mode`.
    @discardableResult
    public func copy(_ source: String, to name: String, mode: Int = 0o755) throws -> String {
        let target = file(name)
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: source, toPath: target)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: target)
        return target
    }
}
