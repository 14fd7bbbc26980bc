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
    ///
    /// Written through a descriptor opened `O_CLOEXEC`: tests run in parallel, and a process
    /// another test spawns while the file is open would otherwise inherit its writable
    /// descriptor and keep it for its whole life, so executing the file (a copied `host`, a
    /// wrapper script) fails with ETXTBSY ("Text file busy"; `Data.write` and
    /// `FileManager.copyItem` open without it, and CI hit it with both).
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8], mode: Int = 0o644) throws -> String {
        let target = file(name)
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

    /// An executable shell script `name` holding `text` (written as `write` writes).
    @discardableResult
    public func script(_ name: String, _ text: String) throws -> String {
        try write(name, Array(text.utf8), mode: 0o755)
    }

    /// Copies `source` to `name` with `mode` (written as `write` writes).
    @discardableResult
    public func copy(_ source: String, to name: String, mode: Int = 0o755) throws -> String {
        try write(name, Array(try Data(contentsOf: URL(fileURLWithPath: source))), mode: mode)
    }
}
