import CSystem
import Glibc

/// Generated plugin directories in a fresh temporary folder, and the host's state and
/// runtime directories beside them (so runs never touch ~/.local/state).
///
/// Compiling or building 1000 libraries takes minutes, so each set is written from one
/// built template: copies of the same library with its id placeholder rewritten to a
/// distinct id of the same length. Each copy is a separate file (its own inode), so the
/// dynamic loader maps and relocates every one, exactly as it would distinct plugins.
final class PluginFarm {
    /// The temporary folder that holds every set.
    let root: String
    /// The environment the host runs with: XDG_STATE_HOME and XDG_RUNTIME_DIR inside `root`,
    /// so its first-launch marks, stores and control socket stay in the farm.
    let hostEnvironment: [String: String]

    /// A farm in a new folder under /tmp (mode 0700, as mkdtemp makes it).
    init() throws(BenchError) {
        var template = Array("/tmp/servicehost-bench.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp: \(String(cString: strerror(errno)))") }
        root = String(cString: made)
        hostEnvironment = ["XDG_STATE_HOME": root + "/state", "XDG_RUNTIME_DIR": root + "/run"]
        for directory in hostEnvironment.values where mkdir(directory, 0o700) != 0 {
            throw BenchError("mkdir \(directory): \(String(cString: strerror(errno)))")
        }
        copies = Self.makeCopiesFolder()
        // The runner's own environment: every child (and its workers) inherits it.
        if let copies { setenv("TMPDIR", copies, 1) }
    }

    /// Every child's `TMPDIR`, removed with the farm: a folder on /dev/shm when that is an
    /// executable tmpfs (where a host puts its store of plugin copies anyway), so the copies of
    /// thousands of generated plugins (~2 GB) do not stay in memory after the run.
    private let copies: String?

    private static func makeCopiesFolder() -> String? {
        guard csystem_is_executable_tmpfs("/dev/shm") == 1 else { return nil }
        var template = Array("/dev/shm/servicehost-bench.XXXXXX".utf8CString)
        return mkdtemp(&template).map { String(cString: $0) }
    }

    /// Writes `count` copies of `template` into a new directory `name`, the i-th with the
    /// last digits of every occurrence of `placeholder` replaced by i; returns the directory.
    func makeSet(_ name: String, template: [UInt8], placeholder: String, count: Int) throws(BenchError) -> String {
        let directory = "\(root)/\(name)"
        guard mkdir(directory, 0o755) == 0 else {
            throw BenchError("mkdir \(directory): \(String(cString: strerror(errno)))")
        }
        guard count > 0 else { return directory }
        let needle = Array(placeholder.utf8)
        let offsets = occurrences(of: needle, in: template)
        guard !offsets.isEmpty else { throw BenchError("the template has no id placeholder \(placeholder)") }
        let digits = needle.reversed().prefix { $0 == UInt8(ascii: "0") }.count
        for index in 1...count {
            let number = String(index)
            precondition(number.count <= digits, "too many plugins for the placeholder's digits")
            let suffix = Array((String(repeating: "0", count: digits - number.count) + number).utf8)
            var bytes = template
            for offset in offsets {
                bytes.replaceSubrange(offset + needle.count - digits..<offset + needle.count, with: suffix)
            }
            let path = "\(directory)/bench-\(String(decoding: suffix, as: UTF8.self)).so"
            try writePluginFile(bytes, to: path)
        }
        return directory
    }

    /// Deletes the farm's folders and everything in them (the host's state and copies included).
    func remove() {
        removeTree(root)
        if let copies { removeTree(copies) }
    }

    /// Removes `path` and, for a directory (never followed through a symbolic link), its contents.
    private func removeTree(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        if status.st_mode & S_IFMT == S_IFDIR, let directory = opendir(path) {
            var names: [String] = []
            while let entry = readdir(directory) {
                // Through the field's address: copying d_name can read past readdir's record.
                let name = withUnsafeMutablePointer(to: &entry.pointee.d_name) { field in
                    UnsafeRawPointer(field).withMemoryRebound(to: CChar.self, capacity: 1) { String(cString: $0) }
                }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(directory)
            for name in names { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    private func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
        guard let first = needle.first, haystack.count >= needle.count else { return [] }
        var found: [Int] = []
        var index = 0
        while index <= haystack.count - needle.count {
            if haystack[index] == first && haystack[index..<index + needle.count].elementsEqual(needle) {
                found.append(index)
                index += needle.count
            } else {
                index += 1
            }
        }
        return found
    }
}

/// Writes `bytes` to `path` as a plugin file: mode 0755 whatever the umask (the host refuses
/// plugins others can write).
func writePluginFile(_ bytes: [UInt8], to path: String) throws(BenchError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    guard descriptor >= 0 else { throw BenchError("open \(path): \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    guard written == bytes.count, fchmod(descriptor, 0o755) == 0 else {
        throw BenchError("write \(path): \(String(cString: strerror(errno)))")
    }
}

/// Reads a whole file.
func readFile(_ path: String) throws(BenchError) -> [UInt8] {
    guard let file = fopen(path, "rb") else {
        throw BenchError("cannot read \(path): \(String(cString: strerror(errno)))")
    }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes += chunk[0..<count]
    }
    return bytes
}

/// A failure that stops the benchmark, with its message.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
