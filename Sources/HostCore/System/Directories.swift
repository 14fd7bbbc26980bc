import Glibc

enum Directories {
    /// Creates `path` and any missing parents with `mode` (existing ones are left as they are).
    static func create(_ path: String, mode: mode_t) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0 && errno != EEXIST { throw .current("mkdir", prefix) }
        }
    }
}
