/// What a process-isolated service's worker may use (issue 43): the `"sandbox"` object of the
/// configuration, top-level (the default for every service that runs in a worker) or per
/// service (its keys override the default's, one by one). Every member nil: "not limited".
public struct Sandbox: Sendable, Equatable {
    /// The seccomp profile a worker runs under (`"syscalls"`).
    public enum SyscallProfile: String, Sendable, CaseIterable, Comparable {
        /// No filter (the worker still runs with `PR_SET_NO_NEW_PRIVS`).
        case unrestricted
        /// Denies `ptrace`, `mount`, kernel modules, `kexec`, `bpf`, `perf_event_open`, `keyctl`,
        /// `reboot`, `io_uring` and a few more (``SyscallFilter/denied``) with `EPERM`.
        case `default`
        /// `default`, and every socket family but `AF_UNIX`.
        case strict

        private var rank: Int {
            switch self {
            case .unrestricted: 0
            case .default: 1
            case .strict: 2
            }
        }
        public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
    }

    /// `memoryMax`: bytes (a number, or a string with a K, M, G or T suffix as systemd writes them).
    public var memoryMax: UInt64?
    /// `cpuQuota`: percent of one core (150: one and a half cores).
    public var cpuQuota: Double?
    /// `tasksMax`: processes and threads the worker may have at once.
    public var tasksMax: Int?
    /// `ioWeight`: the worker's share of block I/O, 1 to 10000 (100 is the kernel's default).
    public var ioWeight: Int?
    /// `syscalls`: the seccomp profile; nil: `default`.
    public var syscalls: SyscallProfile?
    /// `syscalls.allow`: system calls the profile denies that this worker may make, by name.
    public var allowSyscalls: [String]?
    /// `syscalls.deny`: system calls denied (`EPERM`) besides the profile's, by name.
    public var denySyscalls: [String]?
    /// `user`: the user (a name or a uid) the worker runs as; nil: the host's.
    public var user: String?
    /// `group`: the group (a name or a gid) the worker runs as; nil: the user's own group.
    public var group: String?
    /// `dynamicUser`: the worker runs as a user of its own, picked from ``dynamicUsers`` and kept
    /// per service in the state directory (`users/ID`).
    public var dynamicUser: Bool?
    /// `writablePaths`: with it, the worker may write only below these paths (Landlock); nil:
    /// wherever its user may.
    public var writablePaths: [String]?
    /// `network`: false puts the worker in a network namespace of its own (only `lo`, up).
    public var network: Bool?
    /// `audit`: each system call the filter refuses is logged (`sandbox.refused`), once per call
    /// and service.
    public var audit: Bool?

    /// The smallest `memoryMax`: 1 MiB (a worker needs more than this to start at all).
    public static let memoryRange: ClosedRange<UInt64> = (1 << 20)...(1 << 50)
    /// `cpuQuota`: at least 1 % of a core, at most 1024 cores.
    public static let cpuRange: ClosedRange<Double> = 1...102_400
    /// `tasksMax`: at least one (the worker), at most the kernel's `PID_MAX_LIMIT`.
    public static let tasksRange: ClosedRange<Int> = 1...4_194_304
    /// `ioWeight`: cgroup v2's `io.weight` range.
    public static let ioWeightRange: ClosedRange<Int> = 1...10_000
    /// The keys of a `"sandbox"` object.
    public static let keys = [
        "audit", "cpuQuota", "dynamicUser", "group", "ioWeight", "memoryMax", "network", "syscalls", "tasksMax",
        "user", "writablePaths",
    ]
    /// The uids (and gids, the same number) dynamic users are picked from: 60578–61183, which
    /// systemd's own table of ranges leaves unused (below its `DynamicUser=` range, 61184–65519).
    public static let dynamicUsers: ClosedRange<UInt32> = 60_578...61_183

    /// A sandbox; every member defaults to "not limited".
    public init(
        memoryMax: UInt64? = nil, cpuQuota: Double? = nil, tasksMax: Int? = nil, ioWeight: Int? = nil,
        syscalls: SyscallProfile? = nil
    ) {
        self.memoryMax = memoryMax
        self.cpuQuota = cpuQuota
        self.tasksMax = tasksMax
        self.ioWeight = ioWeight
        self.syscalls = syscalls
    }

    /// The profile the worker runs under.
    public var profile: SyscallProfile { syscalls ?? .default }

    /// Whether any resource limit is set (they need a cgroup).
    public var limitsResources: Bool { memoryMax != nil || cpuQuota != nil || tasksMax != nil || ioWeight != nil }

    /// Whether the worker runs as another user than the host's (`user`, `group` or `dynamicUser`).
    public var changesIdentity: Bool { user != nil || group != nil || dynamicUser == true }

    /// This sandbox with every key `other` sets taken from it (a service's own over the default).
    /// An identity is taken whole: a service's `user` replaces the default's `dynamicUser`.
    public func overlaid(by other: Sandbox) -> Sandbox {
        var result = Sandbox(
            memoryMax: other.memoryMax ?? memoryMax, cpuQuota: other.cpuQuota ?? cpuQuota,
            tasksMax: other.tasksMax ?? tasksMax, ioWeight: other.ioWeight ?? ioWeight,
            syscalls: other.syscalls ?? syscalls)
        result.allowSyscalls = other.allowSyscalls ?? allowSyscalls
        result.denySyscalls = other.denySyscalls ?? denySyscalls
        if other.changesIdentity || other.dynamicUser == false {
            (result.user, result.group, result.dynamicUser) = (other.user, other.group, other.dynamicUser)
        } else {
            (result.user, result.group, result.dynamicUser) = (user, group, dynamicUser)
        }
        result.writablePaths = other.writablePaths ?? writablePaths
        result.network = other.network ?? network
        result.audit = other.audit ?? audit
        return result
    }

    /// The one sandbox of a worker whose services ask for `sandboxes` (a file's services share
    /// its worker): the strictest of each key; nil when none asks for one.
    static func strictest(_ sandboxes: [Sandbox]) -> Sandbox? {
        guard let first = sandboxes.first else { return nil }
        var result = first
        for other in sandboxes.dropFirst() {
            result.memoryMax = smaller(result.memoryMax, other.memoryMax)
            result.cpuQuota = smaller(result.cpuQuota, other.cpuQuota)
            result.tasksMax = smaller(result.tasksMax, other.tasksMax)
            result.ioWeight = smaller(result.ioWeight, other.ioWeight)
            if let profile = other.syscalls { result.syscalls = max(result.syscalls ?? profile, profile) }
            // Denied by any, allowed only when all allow; writable only where all may write.
            result.denySyscalls = union(result.denySyscalls, other.denySyscalls)
            result.allowSyscalls = intersection(result.allowSyscalls, other.allowSyscalls)
            result.writablePaths = intersection(result.writablePaths, other.writablePaths)
            if other.network == false { result.network = false }
            if other.audit == true { result.audit = true }
            // The identity is checked to be the same for all (``identityConflict(_:)``).
        }
        return result
    }

    /// Why one worker cannot run services asking for these sandboxes: they name different
    /// users (a process has one); nil when they agree.
    static func identityConflict(_ sandboxes: [Sandbox]) -> String? {
        let identities = Set(sandboxes.map { "\($0.user ?? "")/\($0.group ?? "")/\($0.dynamicUser == true)" })
        return identities.count > 1
            ? "its services share one worker but ask for different identities (user, group, dynamicUser)" : nil
    }

    private static func union(_ a: [String]?, _ b: [String]?) -> [String]? {
        guard let a else { return b }
        guard let b else { return a }
        return a + b.filter { !a.contains($0) }
    }

    private static func intersection(_ a: [String]?, _ b: [String]?) -> [String]? {
        guard let a else { return b }
        guard let b else { return a }
        return a.filter(b.contains)
    }

    private static func smaller<T: Comparable>(_ a: T?, _ b: T?) -> T? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    /// Its settings as `host check` lists them: `memoryMax=64M cpuQuota=50% tasksMax=16 syscalls=default`.
    public var summary: String {
        var parts: [String] = []
        if let memoryMax { parts.append("memoryMax=" + Self.text(bytes: memoryMax)) }
        if let cpuQuota {
            parts.append(
                "cpuQuota=" + (cpuQuota == cpuQuota.rounded() ? String(Int(cpuQuota)) : String(cpuQuota)) + "%")
        }
        if let tasksMax { parts.append("tasksMax=\(tasksMax)") }
        if let ioWeight { parts.append("ioWeight=\(ioWeight)") }
        parts.append("syscalls=" + profile.rawValue)
        if let allowSyscalls { parts.append("allow=" + allowSyscalls.joined(separator: ",")) }
        if let denySyscalls { parts.append("deny=" + denySyscalls.joined(separator: ",")) }
        if let user { parts.append("user=" + user) }
        if let group { parts.append("group=" + group) }
        if dynamicUser == true { parts.append("dynamicUser") }
        if let writablePaths { parts.append("writablePaths=" + writablePaths.joined(separator: ",")) }
        if network == false { parts.append("network=none") }
        if audit == true { parts.append("audit") }
        return parts.joined(separator: " ")
    }

    /// `memoryMax` as configured: an integer of bytes, or digits with one of K, M, G, T (powers
    /// of 1024, as systemd reads them). Nil when it is neither, or too large for 64 bits.
    public static func bytes(_ text: String) -> UInt64? {
        var digits = Substring(text)
        var unit: UInt64 = 1
        if let last = digits.last, let shift = ["K": 10, "M": 20, "G": 30, "T": 40][String(last).uppercased()] {
            unit = 1 << UInt64(shift)
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = UInt64(digits)
        else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow ? nil : product
    }

    /// The configuration's words for `bytes`: "64M" when it is a whole number of MiB.
    public static func text(bytes: UInt64) -> String {
        for (suffix, shift) in [("G", 30), ("M", 20), ("K", 10)] where bytes % (1 << UInt64(shift)) == 0 {
            return "\(bytes >> UInt64(shift))\(suffix)"
        }
        return "\(bytes)"
    }
}
