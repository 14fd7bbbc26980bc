import Glibc

/// A private copy of a plugin file in a new 0700 directory, for loading a changed file again.
struct PrivateCopy {
    let directory: String
    let path: String

    init(of source: String) throws(LoadFailure.Reason) {
        let temporary = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array((temporary + "/servicehost-reload-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw .system(.current("mkdtemp", temporary)) }
        directory = String(cString: made)
        path = directory + "/" + (source.split(separator: "/").last.map(String.init) ?? "plugin.so")
        let input = Glibc.open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw .system(.current("open", source)) }
        defer { close(input) }
        let output = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o700)
        guard output >= 0 else { throw .system(.current("open", path)) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = read(input, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw .system(.current("read", source)) }
            if n == 0 { break }
            guard write(output, buffer, n) == n else { throw .system(.current("write", path)) }
        }
    }

    func remove() {
        unlink(path)
        rmdir(directory)
    }
}
