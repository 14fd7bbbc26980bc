import Glibc
import ServiceJSON

/// One worker's cgroup (issue 43): made with the sandbox's limits before the worker is
/// spawned, the worker moved in before it is asked to load its plugin, read for `ctl stats`
/// and for an OOM kill at its death, and removed (any process left in it killed) after.
struct WorkerCgroup: Sendable {
    let tree: CgroupTree
    let sandbox: Sandbox
    /// Its folder in each controller's hierarchy (v2: one folder for all).
    let folders: [CgroupTree.Controller: String]
    /// The limits the tree cannot apply ("ioWeight": no io controller), for the log.
    let unapplied: [String]

    /// The period `cpuQuota` is a share of, in microseconds (the kernel's default).
    static let cpuPeriod = 100_000

    /// Makes the cgroup `name` and writes `sandbox`'s limits to it.
    init(_ name: String, sandbox: Sandbox, tree: CgroupTree) throws(SystemError) {
        self.tree = tree
        self.sandbox = sandbox
        var folders: [CgroupTree.Controller: String] = [:]
        for (controller, base) in tree.bases where Self.joins(controller, base: base, sandbox: sandbox, tree: tree) {
            let folder = base + "/" + name
            if folders.values.contains(folder) {
                folders[controller] = folder
                continue
            }
            if mkdir(folder, 0o755) != 0 && errno != EEXIST {
                let error = SystemError.current("mkdir", folder)
                Self.remove(Array(Set(folders.values)))
                throw error
            }
            folders[controller] = folder
        }
        self.folders = folders
        var unapplied: [String] = []
        let v2 = tree.version == .v2
        func set(_ key: String, _ controller: CgroupTree.Controller, _ writes: [(String, String)])
            throws(SystemError)
        {
            guard let folder = folders[controller] else { return unapplied.append(key) }
            for (file, value) in writes {
                if let error = CgroupTree.write(folder + "/" + file, value) {
                    // A file the kernel does not have (blkio.weight without BFQ) leaves the limit out.
                    if error == ENOENT { return unapplied.append(key) }
                    Self.remove(Array(Set(folders.values)))
                    throw SystemError(operation: "write \(key) to", path: folder + "/" + file, errno: error)
                }
            }
        }
        if let bytes = sandbox.memoryMax {
            // v1: the swap limit too, where the kernel counts swap, so the worker cannot page out past it.
            let writes =
                v2
                ? [("memory.max", "\(bytes)"), ("memory.swap.max", "0"), ("memory.oom.group", "1")]
                : [("memory.limit_in_bytes", "\(bytes)")]
            try set("memoryMax", .memory, writes)
            if !v2, let folder = folders[.memory] {
                CgroupTree.write(folder + "/memory.memsw.limit_in_bytes", "\(bytes)")
            }
        }
        if let tasks = sandbox.tasksMax { try set("tasksMax", .pids, [("pids.max", "\(tasks)")]) }
        if let percent = sandbox.cpuQuota {
            let quota = max(1000, Int((percent * Double(Self.cpuPeriod) / 100).rounded()))
            try set(
                "cpuQuota", .cpu,
                v2
                    ? [("cpu.max", "\(quota) \(Self.cpuPeriod)")]
                    : [("cpu.cfs_period_us", "\(Self.cpuPeriod)"), ("cpu.cfs_quota_us", "\(quota)")])
        }
        if let weight = sandbox.ioWeight {
            // v1's blkio.weight takes 10...1000 where v2's io.weight takes 1...10000.
            try set(
                "ioWeight", .io,
                v2 ? [("io.weight", "default \(weight)")] : [("blkio.weight", "\(min(1000, max(10, weight / 10)))")])
        }
        self.unapplied = unapplied
    }

    /// Whether a worker with `sandbox` joins a cgroup of its own in `controller`'s v1 hierarchy
    /// (at `base`). Memory, pids and cpuacct: always (their counts are `ctl stats`'). cpu only
    /// with `cpuQuota`, and blkio only with `ioWeight`: a task in a cpu cgroup of its own is
    /// scheduled as a group (an entity more to enqueue at each of its wake-ups, two per event
    /// round trip), a cost per event for no limit; cpuacct mounted with cpu follows cpu. On v2
    /// the worker has one cgroup for all.
    private static func joins(
        _ controller: CgroupTree.Controller, base: String, sandbox: Sandbox, tree: CgroupTree
    ) -> Bool {
        guard tree.version == .v1 else { return true }
        switch controller {
        case .cpu: return sandbox.cpuQuota != nil
        case .cpuacct: return sandbox.cpuQuota != nil || tree.bases[.cpu] != base
        case .io: return sandbox.ioWeight != nil
        case .memory, .pids: return true
        }
    }

    /// Moves process `pid` (the worker, before it loads its plugin) into every folder.
    func adopt(_ pid: pid_t) throws(SystemError) {
        for folder in Set(folders.values).sorted() {
            if let error = CgroupTree.write(folder + "/cgroup.procs", "\(pid)") {
                throw SystemError(operation: "write cgroup.procs in", path: folder, errno: error)
            }
        }
    }

    /// How often the kernel's OOM killer killed a process of the cgroup at `memoryMax`.
    func oomKills() -> Int {
        guard sandbox.memoryMax != nil, let folder = folders[.memory] else { return 0 }
        let file = tree.version == .v2 ? "memory.events" : "memory.oom_control"
        return Self.value(of: "oom_kill", in: CgroupTree.text(folder + "/" + file) ?? "") ?? 0
    }

    /// What `ctl stats` shows of the worker: its memory, CPU and tasks, with its limits.
    func statistics() -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["cgroup": .string(tree.version == .v2 ? "v2" : "v1")]
        if let folder = folders[.memory] {
            let file = tree.version == .v2 ? "memory.current" : "memory.usage_in_bytes"
            if let bytes = Self.number(folder + "/" + file) { fields["memoryBytes"] = .number(Double(bytes)) }
            fields["oomKills"] = .number(Double(oomKills()))
        }
        if let folder = folders[.pids], let tasks = Self.number(folder + "/pids.current") {
            fields["tasks"] = .number(Double(tasks))
        }
        if let usec = cpuMicroseconds() { fields["cpuUsec"] = .number(Double(usec)) }
        if let folder = folders[.cpu], let stat = CgroupTree.text(folder + "/cpu.stat") {
            if let periods = Self.value(of: "nr_throttled", in: stat) {
                fields["throttledPeriods"] = .number(Double(periods))
            }
        }
        if let bytes = sandbox.memoryMax { fields["memoryMax"] = .number(Double(bytes)) }
        if let tasks = sandbox.tasksMax { fields["tasksMax"] = .number(Double(tasks)) }
        if let percent = sandbox.cpuQuota { fields["cpuQuota"] = .number(percent) }
        return fields
    }

    /// The CPU time its processes used, in microseconds: v2's `cpu.stat` `usage_usec`, v1's `cpuacct.usage` (ns).
    func cpuMicroseconds() -> Int? {
        if tree.version == .v2 {
            return folders[.cpu].flatMap { CgroupTree.text($0 + "/cpu.stat") }.flatMap {
                Self.value(of: "usage_usec", in: $0)
            }
        }
        return folders[.cpuacct].flatMap { Self.number($0 + "/cpuacct.usage") }.map { $0 / 1000 }
    }

    /// Kills whatever the worker left in the cgroup (a plugin's child) and removes its folders;
    /// false when one could not be removed yet (a process still exiting).
    @discardableResult
    func remove() -> Bool { Self.remove(Array(Set(folders.values))) }

    @discardableResult
    private static func remove(_ folders: [String]) -> Bool {
        var removed = true
        for folder in folders {
            for pid in (CgroupTree.text(folder + "/cgroup.procs") ?? "").split(separator: "\n").compactMap({ Int32($0) }
            ) {
                Glibc.kill(pid, SIGKILL)
            }
            if rmdir(folder) != 0 && errno != ENOENT { removed = false }
        }
        return removed
    }

    private static func number(_ path: String) -> Int? {
        CgroupTree.text(path).flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } }
    }

    /// The number after `key` in a "key value" per line file.
    static func value(of key: String, in text: String) -> Int? {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2 && parts[0] == key { return Int(parts[1]) }
        }
        return nil
    }
}
