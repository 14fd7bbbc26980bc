import Glibc

/// Where the host makes its workers' cgroups (issue 43): the unified (v2) hierarchy when the
/// controllers are delegated to the host's own cgroup (systemd's `Delegate=yes`), else the v1
/// hierarchies of a hybrid system, one per controller, each under the host's own cgroup there.
/// Found once per host from `/proc/self/cgroup` and `/proc/self/mounts`.
struct CgroupTree: Sendable {
    /// The controllers a worker's limits and statistics use.
    enum Controller: String, Sendable, CaseIterable {
        case memory, pids, cpu, cpuacct, io
        /// The v1 name (`io` is `blkio` there).
        var v1Name: String { self == .io ? "blkio" : rawValue }
    }

    enum Version: Sendable, Equatable { case v1, v2 }

    let version: Version
    /// The folder each controller's worker cgroups are made in (v2: the same for all).
    let bases: [Controller: String]

    /// The tree this host can use, or why none.
    static func discover(
        cgroupFile: String = "/proc/self/cgroup", mountsFile: String = "/proc/self/mounts"
    ) -> Result<CgroupTree, SandboxUnavailable> {
        guard let membership = text(cgroupFile), let mounts = text(mountsFile) else {
            return .failure(SandboxUnavailable("cannot read \(cgroupFile) or \(mountsFile)"))
        }
        // "hierarchy-id:controllers:path" lines; v2's is "0::path".
        var paths: [String: String] = [:]
        var unifiedPath: String?
        for line in membership.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            if parts[0] == "0" && parts[1].isEmpty { unifiedPath = String(parts[2]) }
            for name in parts[1].split(separator: ",") { paths[String(name)] = String(parts[2]) }
        }
        var v1Mounts: [String: String] = [:]
        var unifiedMount: String?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 4 else { continue }
            if fields[2] == "cgroup2" { unifiedMount = String(fields[1]) }
            if fields[2] == "cgroup" {
                for option in fields[3].split(separator: ",") { v1Mounts[String(option)] = String(fields[1]) }
            }
        }
        if let mount = unifiedMount, let path = unifiedPath {
            let own = join(mount, path)
            let available = Set((text(own + "/cgroup.controllers") ?? "").split(whereSeparator: \.isWhitespace))
            if available.contains("memory") && available.contains("pids") && access(own, W_OK) == 0 {
                if let base = delegate(own, controllers: available) {
                    let bases = Controller.allCases.filter {
                        available.contains(Substring($0 == .cpuacct ? "cpu" : $0.rawValue))
                    }
                    return .success(
                        CgroupTree(version: .v2, bases: Dictionary(uniqueKeysWithValues: bases.map { ($0, base) })))
                }
            }
        }
        var bases: [Controller: String] = [:]
        for controller in Controller.allCases {
            guard let mount = v1Mounts[controller.v1Name], let path = paths[controller.v1Name] else { continue }
            let base = join(mount, path)
            if access(base, W_OK) == 0 { bases[controller] = base }
        }
        guard bases[.memory] != nil || bases[.pids] != nil || bases[.cpu] != nil else {
            let where_ = unifiedMount.map { "the unified hierarchy at \($0) delegates no memory and pids controllers" }
            return .failure(
                SandboxUnavailable(
                    (where_ ?? "no cgroup2 mount") + ", and no writable v1 memory, pids or cpu hierarchy"
                        + " (run the host with Delegate=yes, or as root)"))
        }
        return .success(CgroupTree(version: .v1, bases: bases))
    }

    /// A v2 cgroup's controllers made available to its children: the host moves itself into a
    /// leaf (`host`), as no process may sit in a cgroup that hands controllers on. The folder
    /// workers are made in, or nil when it cannot.
    private static func delegate(_ own: String, controllers: Set<Substring>) -> String? {
        let wanted = ["memory", "pids", "cpu", "io"].filter { controllers.contains(Substring($0)) }
        let enabled = Set((text(own + "/cgroup.subtree_control") ?? "").split(whereSeparator: \.isWhitespace))
        if wanted.allSatisfy({ enabled.contains(Substring($0)) }) { return own }
        // Only a cgroup of the host's own (a unit's, Delegate=yes): one the host shares with other
        // processes (a login session's) is not the host's to divide, nor to move them out of.
        let members = (text(own + "/cgroup.procs") ?? "").split(separator: "\n")
        guard members == [Substring(String(getpid()))] else { return nil }
        let leaf = own + "/host"
        if mkdir(leaf, 0o755) != 0 && errno != EEXIST { return nil }
        guard write(leaf + "/cgroup.procs", String(getpid())) == nil else { return nil }
        guard write(own + "/cgroup.subtree_control", wanted.map { "+" + $0 }.joined(separator: " ")) == nil else {
            write(own + "/cgroup.procs", String(getpid()))
            return nil
        }
        return own
    }

    private static func join(_ mount: String, _ path: String) -> String { path == "/" ? mount : mount + path }

    /// Removes the worker cgroups a host that is gone left (it was killed before it could):
    /// `servicehost-PID-…` of no running process. A folder with a process in it stays (rmdir fails).
    func sweep() {
        for base in Set(bases.values) {
            guard let names = try? DirectoryHandle.open(base).names() else { continue }
            for name in names where name.hasPrefix("servicehost-") {
                guard let pid = name.split(separator: "-").dropFirst().first.flatMap({ Int32($0) }),
                    Glibc.kill(pid, 0) != 0 && errno == ESRCH
                else { continue }
                _ = rmdir(base + "/" + name)
            }
        }
    }

    /// A small kernel file's text, or nil.
    static func text(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count =
                (try? retryingOnInterrupt("read", path) {
                    buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                }) ?? 0
            guard count > 0 else { break }
            bytes += buffer[..<count]
            if bytes.count > 1 << 20 { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `value` to a kernel file; the errno when it fails.
    @discardableResult
    static func write(_ path: String, _ value: String) -> Int32? {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { Glibc.close(fd) }
        let written = value.withCString { Glibc.write(fd, $0, strlen($0)) }
        return written < 0 ? errno : nil
    }
}

/// Why the host applies no resource limit: no writable cgroup.
struct SandboxUnavailable: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
