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

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
