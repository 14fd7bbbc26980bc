import Glibc

/// The user and group a sandboxed worker runs as (issue 43): `user` and `group` (a name or an
/// id) looked up now, or a dynamic user of the service's own.
///
/// A dynamic user is a uid (and the gid of the same number) from ``Sandbox/dynamicUsers`` that
/// no account or group of the system has and no other service of this state directory holds. It
/// is kept in `STATE/users/ID` (the service id of the worker's first service, in name order), so
/// a service runs as the same user at every start, and its files stay its own.
enum WorkerIdentity {
    /// The ids `sandbox` asks the worker of `services` to run as; nil: the host's own.
    static func resolve(_ sandbox: Sandbox, services: [String], stateDirectory: String) throws(WorkerSandboxError)
        -> (uid: UInt32, gid: UInt32)?
    {
        if sandbox.dynamicUser == true {
            let id = services.min() ?? ""
            let uid = try dynamicUser(for: id, stateDirectory: stateDirectory)
            return (uid, uid)
        }
        guard sandbox.user != nil || sandbox.group != nil else { return nil }
        var uid = getuid()
        var gid = getgid()
        if let user = sandbox.user {
            if let number = UInt32(user) {
                uid = number
                gid = getpwuid(number)?.pointee.pw_gid ?? number
            } else if let entry = getpwnam(user) {
                uid = entry.pointee.pw_uid
                gid = entry.pointee.pw_gid
            } else {
                throw .init("sandbox.user: no user \"\(user)\" on this system")
            }
        }
        if let group = sandbox.group {
            if let number = UInt32(group) {
                gid = number
            } else if let entry = getgrnam(group) {
                gid = entry.pointee.gr_gid
            } else {
                throw .init("sandbox.group: no group \"\(group)\" on this system")
            }
        }
        return (uid, gid)
    }

    /// The folder of the dynamic users' records in the state directory.
    static let folder = "users"

    /// Service `id`'s dynamic user: the one recorded, else a free one, recorded now.
    static func dynamicUser(for id: String, stateDirectory: String) throws(WorkerSandboxError) -> UInt32 {
        let folder = stateDirectory + "/" + Self.folder
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw .init("dynamicUser: \(SystemError.current("mkdir", folder))")
        }
        var taken: [String: UInt32] = [:]
        if let names = try? DirectoryHandle.open(folder).names() {
            for name in names where !name.hasPrefix(".") {
                if let uid = record(folder + "/" + name) { taken[name] = uid }
            }
        }
        if let own = taken[id], isFree(own) { return own }
        let used = Set(taken.filter { $0.key != id }.values)
        let range = Sandbox.dynamicUsers
        let count = range.upperBound - range.lowerBound + 1
        // Where the search starts depends on the id only (FNV-1a), so a lost record finds the
        // same number again when it is still free.
        var hash: UInt32 = 2_166_136_261
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        for step in 0..<count {
            let uid = range.lowerBound + (hash &+ step) % count
            guard !used.contains(uid), isFree(uid) else { continue }
            let path = folder + "/" + id
            let temporary = folder + "/.\(id).\(getpid())"
            let text = Array("\(uid)\n".utf8)
            let written = text.withUnsafeBytes { bytes -> Bool in
                let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
                guard fd >= 0 else { return false }
                defer { close(fd) }
                return write(fd, bytes.baseAddress, bytes.count) == bytes.count && fsync(fd) == 0
            }
            guard written, rename(temporary, path) == 0 else {
                let error = SystemError.current("write", path)
                unlink(temporary)
                throw .init("dynamicUser: \(error)")
            }
            return uid
        }
        throw .init("dynamicUser: every uid from \(range.lowerBound) to \(range.upperBound) is taken")
    }

    /// The uid a record holds, when it is one of the range.
    private static func record(_ path: String) -> UInt32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0,
            let uid = UInt32(String(decoding: buffer[..<count], as: UTF8.self).filter { $0 != "\n" }),
            Sandbox.dynamicUsers.contains(uid)
        else { return nil }
        return uid
    }

    /// Whether no account and no group of the system has the number `uid`.
    private static func isFree(_ uid: UInt32) -> Bool { getpwuid(uid) == nil && getgrgid(uid) == nil }
}
