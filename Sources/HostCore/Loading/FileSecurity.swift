import Glibc

/// The ownership and permission rule for plugin files and directories, as ssh applies
/// to keys: nobody but root and the host's own user may be able to change the code.
enum FileSecurity {
    /// Why `status` makes `path` unsafe to load code from, or nil when it is safe.
    static func problem(path: String, status: stat, what: String) -> String? {
        let mode = status.st_mode
        if mode & (S_IWGRP | S_IWOTH) != 0 {
            let writers = mode & S_IWOTH != 0 ? "other users" : "its group"
            return "\(what) \(path) is writable by \(writers) (mode \(octal(mode & 0o7777)))"
        }
        let owner = status.st_uid
        if owner != 0 && owner != geteuid() {
            return "\(what) \(path) is owned by uid \(owner), neither root nor the host's user (uid \(geteuid()))"
        }
        return nil
    }

    /// Why `path` (something that grants trust: a configuration file, the state directory) is
    /// unsafe, or nil when it is safe: it and every directory on its resolved path (symlinks
    /// followed, up to `/`) must pass ``problem(path:status:what:)``, as ssh checks the path
    /// to a key. A root-owned directory with the sticky bit (`/tmp`) may be world-writable:
    /// nobody else can rename or remove what is in it.
    static func pathProblem(_ path: String, what: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }  // missing: the caller's open reports it
        let target = String(cString: resolved)
        free(resolved)
        var status = stat()
        guard stat(target, &status) == 0 else { return nil }
        if let problem = problem(path: target, status: status, what: what) { return problem }
        var directory = target
        while directory != "/" {
            let slash = directory.lastIndex(of: "/") ?? directory.startIndex
            directory = slash == directory.startIndex ? "/" : String(directory[..<slash])
            guard stat(directory, &status) == 0 else { return nil }
            if status.st_mode & S_ISVTX != 0 && status.st_uid == 0 { continue }
            if let problem = problem(path: directory, status: status, what: "directory") {
                return "\(problem), on the path of \(what) \(target)"
            }
        }
        return nil
    }

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
