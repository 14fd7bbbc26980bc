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
        do throws(SystemError) {
            let input = try FileDescriptor.open(source, O_RDONLY)
            let output = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL, mode: 0o700)
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = try buffer.withUnsafeMutableBytes { bytes in
                    Result { () throws(SystemError) in try input.read(into: bytes, path: source) }
                }.get()
                if count == 0 { break }
                try buffer.withUnsafeBytes { bytes in
                    Result { () throws(SystemError) in
                        try output.writeAll(UnsafeRawBufferPointer(rebasing: bytes[..<count]), path: path)
                    }
                }.get()
            }
        } catch {
            remove()
            throw .system(error)
        }
    }

    func remove() {
        unlink(path)
        rmdir(directory)
    }
}
