import Foundation
import Glibc

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
    ///
    /// Written through a descriptor opened `O_CLOEXEC`: tests run in parallel, and a process
    /// another test spawns while the copy is open would otherwise inherit its writable
    /// descriptor and keep it for its whole life, so executing the copy (a copied `host`) fails
    /// with ETXTBSY ("Text file busy"; `FileManager.copyItem` opens without it, and CI hit it).
    @discardableResult
    public func copy(_ source: String, to name: String, mode: Int = 0o755) throws -> String {
        let target = file(name)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        _ = unlink(target)
        let descriptor = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(mode))
        guard descriptor >= 0 else { throw TestFailure("cannot create \(target): errno \(errno)") }
        defer { close(descriptor) }
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let written = retryingOnInterrupt {
                    Glibc.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
                }
                guard written > 0 else { throw TestFailure("cannot write \(target): errno \(errno)") }
                done += written
            }
        }
        // The mode again: the umask trimmed the one given to open.
        guard fchmod(descriptor, mode_t(mode)) == 0 else { throw TestFailure("cannot chmod \(target): errno \(errno)") }
        return target
    }
}
