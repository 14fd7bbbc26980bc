import CSystem
import Glibc

/// What a sandboxed worker applies to itself before it greets its host (issue 43), resolved by
/// the host (a user's name to its ids, a dynamic user to its number) and given to the worker on
/// its command line: `host __worker PATH --syscalls default --identity 60600:60600 …`.
///
/// The worker enters it in this order, before any plugin code runs (its ELF constructors
/// included: the host asks for the plugin only after the greeting): a network namespace of its
/// own, its user, `PR_SET_NO_NEW_PRIVS`, Landlock's write rules, the seccomp filter (last: the
/// calls before it need no exception).
struct WorkerSandbox: Equatable, Sendable {
    var syscalls: Sandbox.SyscallProfile = .default
    var allow: [String] = []
    var deny: [String] = []
    /// The uid and gid to run as; nil: the host's.
    var identity: (uid: UInt32, gid: UInt32)?
    /// Landlock: write only beneath these; nil: not restricted.
    var writablePaths: [String]?
    /// A network namespace of its own.
    var privateNetwork = false
    /// Refused calls reported (``AuditedRefusals``).
    var audit = false

    static func == (a: Self, b: Self) -> Bool {
        a.syscalls == b.syscalls && a.allow == b.allow && a.deny == b.deny && a.identity?.uid == b.identity?.uid
            && a.identity?.gid == b.identity?.gid && a.writablePaths == b.writablePaths
            && a.privateNetwork == b.privateNetwork && a.audit == b.audit
    }

    /// The device every worker may write to whatever `writablePaths` says (as `/dev/null` is
    /// under systemd's `ProtectSystem=strict`): programs write their discarded output there.
    static let alwaysWritable = ["/dev/null"]

    /// `sandbox` for a worker running as `identity`.
    init(_ sandbox: Sandbox, identity: (uid: UInt32, gid: UInt32)?) {
        syscalls = sandbox.profile
        allow = sandbox.allowSyscalls ?? []
        deny = sandbox.denySyscalls ?? []
        self.identity = identity
        writablePaths = sandbox.writablePaths
        privateNetwork = sandbox.network == false
        audit = sandbox.audit == true
    }

    // MARK: The command line

    static let syscallsOption = "--syscalls"
    static let allowOption = "--allow-syscall"
    static let denyOption = "--deny-syscall"
    static let identityOption = "--identity"
    static let writableOption = "--writable"
    static let readOnlyOption = "--read-only"
    static let privateNetworkOption = "--private-network"
    static let auditOption = "--audit"

    /// The worker's options after its plugin path.
    var arguments: [String] {
        var words = [Self.syscallsOption, syscalls.rawValue]
        for name in allow { words += [Self.allowOption, name] }
        for name in deny { words += [Self.denyOption, name] }
        if let identity { words += [Self.identityOption, "\(identity.uid):\(identity.gid)"] }
        if let writablePaths {
            words.append(Self.readOnlyOption)
            for path in writablePaths { words += [Self.writableOption, path] }
        }
        if privateNetwork { words.append(Self.privateNetworkOption) }
        if audit { words.append(Self.auditOption) }
        return words
    }

    /// The sandbox `arguments` (a worker's, after its plugin path) name; nil without one; a
    /// reason when they are not a worker's options (the host wrote them: a bug, or a person).
    static func parse(_ arguments: ArraySlice<String>) -> Result<WorkerSandbox, WorkerSandboxError>? {
        guard !arguments.isEmpty else { return nil }
        var sandbox = WorkerSandbox(Sandbox(), identity: nil)
        var words = arguments.makeIterator()
        while let word = words.next() {
            if word == readOnlyOption {
                sandbox.writablePaths = sandbox.writablePaths ?? []
                continue
            }
            if word == privateNetworkOption {
                sandbox.privateNetwork = true
                continue
            }
            if word == auditOption {
                sandbox.audit = true
                continue
            }
            guard let value = words.next() else { return .failure(.init("\(word): expected a value")) }
            switch word {
            case syscallsOption:
                guard let profile = Sandbox.SyscallProfile(rawValue: value) else {
                    return .failure(.init("\(word): expected a seccomp profile, found \(value)"))
                }
                sandbox.syscalls = profile
            case allowOption: sandbox.allow.append(value)
            case denyOption: sandbox.deny.append(value)
            case identityOption:
                let parts = value.split(separator: ":")
                guard parts.count == 2, let uid = UInt32(parts[0]), let gid = UInt32(parts[1]) else {
                    return .failure(.init("\(word): expected UID:GID, found \(value)"))
                }
                sandbox.identity = (uid, gid)
            case writableOption: sandbox.writablePaths = (sandbox.writablePaths ?? []) + [value]
            default: return .failure(.init("unknown option \(word)"))
            }
        }
        return .success(sandbox)
    }

    // MARK: In the worker

    /// Applies the sandbox to this process (the worker, on its main thread, before its greeting). Throws naming
    /// the step and the errno; the worker then exits saying why.
    @MainActor
    func enter() throws(WorkerSandboxError) {
        if privateNetwork, csystem_private_network() != 0 {
            throw .init(
                "cannot enter a network namespace of its own (network false): \(SystemError.current("unshare(CLONE_NEWNET)", "the worker"))"
            )
        }
        if let identity, csystem_drop_identity(identity.uid, identity.gid) != 0 {
            throw .init(
                "cannot run as user \(identity.uid), group \(identity.gid): \(SystemError.current("setresuid", "the worker"))"
            )
        }
        if let writablePaths {
            guard csystem_no_new_privs() == 0 else {
                throw .init("\(SystemError.current("prctl(PR_SET_NO_NEW_PRIVS)", "the worker"))")
            }
            let paths = writablePaths + Self.alwaysWritable
            var failed: Int32 = -1
            let pointers = paths.map { strdup($0) }
            defer { for pointer in pointers { free(pointer) } }
            let result = pointers.map { UnsafePointer($0) }.withUnsafeBufferPointer {
                csystem_landlock_restrict($0.baseAddress, Int32(paths.count), &failed)
            }
            if result != 0 {
                let path = failed >= 0 ? paths[Int(failed)] : "the worker"
                throw .init("cannot apply its writablePaths (Landlock): \(SystemError.current("landlock", path))")
            }
        }
        do throws(SystemError) {
            if audit { try AuditedRefusals.start() }
            try SyscallFilter.install(syscalls, allow: allow, deny: deny, audit: audit)
        } catch {
            throw .init("\(error)")
        }
    }

    /// Why Landlock cannot restrict writes on this machine; nil when it can (ABI 1 or later).
    static var landlockUnavailable: String? {
        let abi = csystem_landlock_abi()
        if abi >= 1 { return nil }
        switch errno {
        case ENOSYS: return "the kernel was built without Landlock (landlock_create_ruleset: ENOSYS)"
        case EOPNOTSUPP: return "Landlock is not enabled at boot (lsm=, landlock_create_ruleset: EOPNOTSUPP)"
        default: return "\(SystemError.current("landlock_create_ruleset", "the kernel"))"
        }
    }
}

/// Why a worker could not enter its sandbox, in words for its last line.
struct WorkerSandboxError: Error, CustomStringConvertible, Sendable {
    let description: String
    init(_ description: String) { self.description = description }
}
