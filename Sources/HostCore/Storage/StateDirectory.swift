import Glibc
import Synchronization

/// The host's state directory (`--state-dir`): the services' stores and the first-launch marks.
///
/// Layout:
///
/// ```text
/// <state>/services/<service-id>/<encoded key>   one file per key (see ServiceStore)
/// <state>/launched/host                         the host launched here before (FirstLaunch)
/// <state>/launched/<service-id>                 that service launched here before
/// <state>/users/<service-id>                    its worker's dynamic user, a uid (WorkerIdentity)
/// ```
///
/// Opening it creates it (and missing parents) with mode 0700, refuses it when another user
/// could change it or any directory on its resolved path (writable by group or others, or
/// owned by neither root nor us: anyone who can swap a service's state can feed it data;
/// `--allow-insecure-plugins` lifts the rule), and takes an exclusive `flock` on it for
/// as long as this object lives, so two hosts never write the same state at once.
public final class StateDirectory: Sendable {
    /// The directory as given.
    public let path: String
    let root: DirectoryHandle
    /// Whether the permission rule is lifted (`--allow-insecure-plugins`).
    let allowInsecure: Bool
    private let servicesDirectory: DirectoryHandle
    // One store per service for the lifetime of this object; guarded by the mutex.
    private let stores = Locked<[String: ServiceStore]>([:])

    /// The default location: `$XDG_STATE_HOME/servicehost` when `XDG_STATE_HOME` is an
    /// absolute path (the XDG spec ignores relative ones), else `~/.local/state/servicehost`
    /// with `~` from `HOME`, else from the password database.
    /// - Parameter environment: reads a variable; the process environment by default.
    public static func defaultPath(
        environment: (String) -> String? = { name in getenv(name).map { String(cString: $0) } }
    ) throws(StorageError) -> String {
        if let state = environment("XDG_STATE_HOME"), state.hasPrefix("/") {
            return joined(state, "servicehost")
        }
        if let home = environment("HOME"), !home.isEmpty {
            return joined(home, ".local/state/servicehost")
        }
        if let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir, directory.pointee != 0 {
            return joined(String(cString: directory), ".local/state/servicehost")
        }
        throw StorageError(path: "", code: .noDefaultLocation)
    }

    private static func joined(_ base: String, _ rest: String) -> String {
        base.hasSuffix("/") ? base + rest : base + "/" + rest
    }

    /// Opens (creating when missing) the state directory at `path`; `allowInsecure` skips the
    /// permission rule (`--allow-insecure-plugins`).
    /// - Throws: ``StorageError`` naming the path: `insecure`, `inUse`, or a failed system call.
    public init(path: String, allowInsecure: Bool = false) throws(StorageError) {
        self.path = path
        do {
            try DirectoryHandle.makeDirectories(path)
            root = try DirectoryHandle.open(path)
        } catch {
            throw .system(error)
        }
        self.allowInsecure = allowInsecure
        if !allowInsecure {
            try Self.checkSecurity(root)
            if let problem = FileSecurity.pathProblem(path, what: "state directory") {
                throw StorageError(path: path, code: .insecure(detail: problem))
            }
        }
        // A lock held for a moment is not "in use": between fork and exec a child of another
        // thread briefly shares the lock's open file description (and a host restarting right
        // after another exits may overlap it). Give it 200 ms.
        var locked = false
        for attempt in 0..<20 {
            do { locked = try root.tryLock() } catch { throw .system(error) }
            if locked { break }
            if attempt < 19 { usleep(10_000) }
        }
        guard locked else { throw StorageError(path: path, code: .inUse) }
        servicesDirectory = try Self.subdirectory("services", of: root, allowInsecure: allowInsecure)
    }

    /// The store of `serviceID`, created when missing; the same object for the same id.
    ///
    /// The id is checked again here, whatever checked it before: it must be a valid service id
    /// (``ServiceID``), so it cannot hold `/` or NUL or be `.` or `..`, and cannot name a path
    /// outside `<state>/services`. Opening a store removes the temporary files a crash left.
    public func store(for serviceID: String, limits: ServiceStore.Limits = .default) throws(StorageError)
        -> ServiceStore
    {
        try Self.checkServiceID(serviceID, in: servicesDirectory.path)
        return try stores.withLock { (stores) throws(StorageError) -> ServiceStore in
            if let store = stores[serviceID] { return store }
            let directory = try Self.subdirectory(serviceID, of: servicesDirectory, allowInsecure: allowInsecure)
            let store = try ServiceStore(serviceID: serviceID, directory: directory, root: root, limits: limits)
            stores[serviceID] = store
            return store
        }
    }

    /// `<state>/name`, created when missing and checked like the state directory.
    func subdirectory(_ name: String) throws(StorageError) -> DirectoryHandle {
        try Self.subdirectory(name, of: root, allowInsecure: allowInsecure)
    }

    private static func subdirectory(_ name: String, of parent: DirectoryHandle, allowInsecure: Bool)
        throws(StorageError) -> DirectoryHandle
    {
        let directory: DirectoryHandle
        do { directory = try parent.subdirectory(name) } catch { throw .system(error) }
        if !allowInsecure { try checkSecurity(directory) }
        return directory
    }

    private static func checkSecurity(_ directory: DirectoryHandle) throws(StorageError) {
        let status: stat
        do { status = try directory.status() } catch { throw .system(error) }
        if let problem = FileSecurity.problem(path: directory.path, status: status, what: "directory") {
            throw StorageError(path: directory.path, code: .insecure(detail: problem))
        }
    }

    /// Refuses an id that is not a service id or could leave the directory it names.
    static func checkServiceID(_ id: String, in directory: String) throws(StorageError) {
        // A valid id (every one at every start) is all of the below in one pass.
        if ServiceID.isValid(id) { return }
        // Belt and braces: ServiceID's rules already exclude all of these.
        let escapes =
            id.isEmpty || id == "." || id == ".." || id.hasPrefix(".") || id.utf8.contains(0)
            || id.utf8.contains(UInt8(ascii: "/"))
        if escapes {
            throw StorageError(
                path: directory,
                code: .invalidServiceID(id: id, reason: "it could name a path outside the state directory"))
        }
        if let problem = ServiceID.problem(with: id) {
            throw StorageError(path: directory, code: .invalidServiceID(id: id, reason: "it \(problem)"))
        }
    }
}
