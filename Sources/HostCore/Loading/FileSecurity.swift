import Glibc

/// The ownership and permission rule for plugin files and directories, as ssh applies
/// to keys: nobody but root and the host's own user may be able to change the code.
enum FileSecurity {
    /// The host's effective user, asked once: glibc does not cache `geteuid`, and asking per
    /// plugin file was one of the system calls a plugin cost more than a bare `dlopen` (the
    /// host never changes its user).
    static let hostUser = geteuid()

    /// The directories a scan has found safe with every directory above them: a handful, so
    /// a list. (A `Set<[CChar]>` cost a generic set type and its hashing at every start.)
    typealias CheckedDirectories = [[CChar]]

    /// Why `status` makes `path` unsafe to load code from, or nil when it is safe.
    static func problem(path: String, status: stat, what: String) -> String? {
        let mode = status.st_mode
        if mode & (S_IWGRP | S_IWOTH) != 0 {
            let writers = mode & S_IWOTH != 0 ? "other users" : "its group"
            return "\(what) \(path) is writable by \(writers) (mode \(octal(mode & 0o7777)))"
        }
        let owner = status.st_uid
        if owner != 0 && owner != hostUser {
            return "\(what) \(path)\(ownedWords)\(owner), neither root nor the host's user (uid \(hostUser))"
        }
        return nil
    }

    /// The words of an ownership problem: its fix is `chown`, not `chmod`.
    private static let ownedWords = " is owned by uid "

    /// How to fix `problem` (a text of ``problem(path:status:what:)``): give the file to the
    /// host's user, or take the write permission from the others.
    static func fix(for problem: String) -> String {
        problem.contains(ownedWords) ? "give it to the host's user: chown \(hostUser)" : "run chmod go-w on it"
    }

    /// Why `path` (something that grants trust: a configuration file, the state directory;
    /// a path as the user wrote it) is unsafe, or nil when it is safe: it and every directory
    /// on its resolved path (symlinks followed, up to `/`) must pass
    /// ``problem(path:status:what:)``, as ssh checks the path to a key. A root-owned directory
    /// with the sticky bit (`/tmp`) may be world-writable: nobody else can rename or remove
    /// what is in it.
    static func pathProblem(_ path: String, what: String) -> String? {
        // Missing: the caller's open reports it.
        let bytes = Array(path.utf8CString)
        guard let target = resolved(bytes) else { return nil }
        var status = stat()
        guard stat(target, &status) == 0 else { return nil }
        let name = PathBytes.escape(Self.bytes(target))
        if let problem = problem(path: name, status: status, what: what) { return problem }
        var checked: CheckedDirectories = []
        return linkProblem(bytes, what: what, name: path, checked: &checked)
            ?? directoriesProblem(of: target, what: what, name: name, checked: &checked)
    }

    /// Why a directory on the resolved path of the plugin file `path` (escaped, see
    /// ``PathBytes``) is unsafe, or nil: the rule of ``pathProblem(_:what:)`` for the
    /// directories, so a symlink into a directory others can write to cannot hand the host
    /// code they choose. `checked` remembers the directories already found safe in one scan.
    /// Every symbolic link on the way counts too (``linkProblem(_:what:name:checked:)``): whoever can
    /// write the directory a link is in can point it elsewhere.
    static func directoriesProblem(ofPlugin path: String, checked: inout CheckedDirectories) -> String? {
        let bytes = PathBytes.cString(path)
        guard let target = resolved(bytes) else { return nil }  // missing: the open reports it
        return linkProblem(bytes, what: "file", name: path, checked: &checked)
            ?? directoriesProblem(
                of: target, what: "file", name: PathBytes.escape(Self.bytes(target)), checked: &checked)
    }

    /// The most links one path may go through, as the kernel allows (`ELOOP` past it: the open
    /// then reports it).
    private static let linkLimit = 40

    /// Why the directory holding a symbolic link met on the way to the NUL-terminated `path`
    /// (`what` `name`, escaped, in the reason) is unsafe, or nil: the path is walked name by name as
    /// `realpath` does, and the directory of every link met (resolved, with every directory
    /// above it) must pass the rule of ``pathProblem(_:what:)``. Without it a chain
    /// `plugins/x.so → shared/x.so → lib/x.so` with `shared/` writable by all passed, its last
    /// file's directories being safe, and another user chose the library the host ran.
    private static func linkProblem(_ path: [CChar], what: String, name: String, checked: inout CheckedDirectories)
        -> String?
    {
        let slash = CChar(UInt8(ascii: "/"))
        var pending: [ArraySlice<CChar>] = []
        func push(_ text: [CChar]) {
            pending.insert(contentsOf: text.split(separator: slash).reversed(), at: pending.count)
        }
        var current: [CChar] = [slash]
        if path.first != slash {
            guard let cwd = getcwd(nil, 0) else { return nil }
            current = Array(UnsafeBufferPointer(start: cwd, count: strlen(cwd)))
            free(cwd)
        }
        push(Array(path.dropLast()))
        var links = 0
        var status = stat()
        var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        while let component = pending.popLast() {
            if component == [CChar(UInt8(ascii: "."))] { continue }
            if component == [CChar(UInt8(ascii: ".")), CChar(UInt8(ascii: "."))] {
                current = Array(current[..<(current.lastIndex(of: slash) ?? 0)])
                if current.isEmpty { current = [slash] }
                continue
            }
            let candidate = (current == [slash] ? current : current + [slash]) + component
            guard lstat(candidate + [0], &status) == 0 else { return nil }  // missing: the open reports it
            guard status.st_mode & S_IFMT == S_IFLNK else {
                current = candidate
                continue
            }
            if let problem = walkProblem(from: current + [0], checked: &checked) {
                let link = PathBytes.escape(candidate.map { UInt8(bitPattern: $0) })
                return "\(problem), which holds the link \(link) on the way to \(what) \(name)"
            }
            links += 1
            let length = readlink(candidate + [0], &target, target.count - 1)
            guard links <= linkLimit, length > 0 else { return nil }
            if target[0] == slash { current = [slash] }
            push(Array(target[..<length]))
        }
        return nil
    }

    private static func directoriesProblem(
        of target: [CChar], what: String, name: String, checked: inout CheckedDirectories
    ) -> String? {
        guard let first = parent(of: target) else { return nil }
        return walkProblem(from: first, checked: &checked).map { "\($0), on the path of \(what) \(name)" }
    }

    /// The plugin directory `path` resolved (`realpath`), and why it or a directory above it is
    /// unsafe (the rule of ``pathProblem(_:what:)``), or nil when it does not resolve. A scan
    /// asks once: every plain file in the directory has these directories on its resolved path,
    /// so only a symbolic link needs its own walk (``directoriesProblem(ofPlugin:checked:)``).
    static func resolvedDirectory(_ path: String, checked: inout CheckedDirectories) -> (
        path: [CChar], problem: String?
    )? {
        let bytes = PathBytes.cString(path)
        guard let resolved = resolved(bytes) else { return nil }
        return (
            resolved,
            linkProblem(bytes, what: "directory", name: path, checked: &checked)
                ?? walkProblem(from: resolved, checked: &checked)
        )
    }

    /// The problem of ``resolvedDirectory(_:checked:)`` as said for its file `name` (bytes), the
    /// words ``directoriesProblem(ofPlugin:checked:)`` uses for the same file.
    static func problem(_ problem: String, inResolvedDirectory directory: [CChar], file name: [UInt8]) -> String {
        var path = bytes(directory)
        if path != [UInt8(ascii: "/")] { path.append(UInt8(ascii: "/")) }
        return "\(problem), on the path of file \(PathBytes.escape(path + name))"
    }

    /// Walks from the absolute NUL-terminated directory `first` up to `/`, stopping at a directory
    /// in `checked` (found safe with every directory above it); the first problem, or nil.
    private static func walkProblem(from first: [CChar], checked: inout CheckedDirectories) -> String? {
        var next: [CChar]? = first
        var status = stat()
        var walked: [[CChar]] = []
        while let directory = next {
            next = parent(of: directory)
            if checked.contains(directory) { break }
            guard stat(directory, &status) == 0 else { return nil }
            walked.append(directory)
            if status.st_mode & S_ISVTX != 0 && status.st_uid == 0 { continue }
            if let problem = problem(path: PathBytes.escape(bytes(directory)), status: status, what: "directory") {
                return problem
            }
        }
        checked += walked
        return nil
    }

    /// `realpath(3)` of a NUL-terminated path, NUL-terminated; nil when it does not resolve.
    private static func resolved(_ path: [CChar]) -> [CChar]? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer) + 1))
    }

    /// The directory holding the absolute NUL-terminated `path`, NUL-terminated; nil for `/`.
    private static func parent(of path: [CChar]) -> [CChar]? {
        let length = path.count - 1
        guard length > 1 else { return nil }
        let slash = path[..<length].lastIndex(of: CChar(UInt8(ascii: "/"))) ?? 0
        return slash == 0 ? [CChar(UInt8(ascii: "/")), 0] : Array(path[..<slash]) + [0]
    }

    private static func bytes(_ path: [CChar]) -> [UInt8] { path.dropLast().map { UInt8(bitPattern: $0) } }

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
