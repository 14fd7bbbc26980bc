import Glibc

/// Paths a command line gives, made absolute for whoever runs them later from elsewhere (a
/// Desktop Entry's `Exec`, a running host asked by `host ctl deploy DIR`).
enum WorkingDirectory {
    /// `path` from the working directory, when relative (`./x` as `x`).
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let directory = current() else { return path }
        let relative = path.hasPrefix("./") ? String(path.dropFirst(2)) : path
        return directory == "/" ? "/" + relative : directory + "/" + relative
    }

    /// `path` as `./…` when it lies under the working directory, else as it is: what a command
    /// prints of a path it was given as `./x` (`host ctl deploy status` of `deploy ./x`).
    static func relative(_ path: String) -> String {
        guard path.hasPrefix("/"), let directory = current(), directory != "/",
            path.hasPrefix(directory + "/"), path.count > directory.count + 1
        else { return path }
        return "./" + path.dropFirst(directory.count + 1)
    }

    /// The working directory, nil when `getcwd` fails (removed, or longer than `PATH_MAX`).
    private static func current() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
