import Glibc

/// Paths a command line gives, made absolute for whoever runs them later from elsewhere (a
/// Desktop Entry's `Exec`, a running host asked by `host ctl deploy DIR`).
enum WorkingDirectory {
    /// `path` from the working directory, when relative (`./x` as `x`).
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let directory = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let relative = path.hasPrefix("./") ? String(path.dropFirst(2)) : path
        return directory == "/" ? "/" + relative : directory + "/" + relative
    }
}
