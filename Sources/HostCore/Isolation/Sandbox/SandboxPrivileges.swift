import Glibc

/// What the host itself must be allowed to do for a sandbox's identity and network settings
/// (issue 43): a worker changes its user with `setuid`/`setgid` and enters a network namespace
/// with `unshare`, which the kernel allows only with a capability. Without it the worker fails at
/// start and says why; `host check` says so beforehand (`sandbox-needs-privilege`).
enum SandboxPrivileges {
    /// A capability the host's process has or lacks, by its bit in `CapEff`.
    struct Capability: Sendable, Equatable {
        let name: String
        let bit: UInt64
        static let setgid = Capability(name: "CAP_SETGID", bit: 6)
        static let setuid = Capability(name: "CAP_SETUID", bit: 7)
        static let sysAdmin = Capability(name: "CAP_SYS_ADMIN", bit: 21)
    }

    /// The settings of `sandbox` this process could not apply, each with the capability it lacks:
    /// `user`, `group`, `dynamicUser`, `network: false`. Empty when the
    /// effective set (`effective`, else this process's own) holds what they need.
    static func missing(for sandbox: Sandbox, effective: UInt64? = nil) -> [(setting: String, lacks: Capability)] {
        var needs: [(String, Capability)] = []
        // Any identity setting makes the worker drop its supplementary groups (`setgroups`,
        // CAP_SETGID), and a uid other than the host's needs CAP_SETUID.
        if sandbox.dynamicUser == true {
            needs += [("dynamicUser", .setuid), ("dynamicUser", .setgid)]
        } else if let user = sandbox.user {
            if !names(user, id: getuid(), lookup: { getpwnam($0)?.pointee.pw_uid }) { needs.append(("user", .setuid)) }
            needs.append(("user", .setgid))
        } else if sandbox.group != nil {
            needs.append(("group", .setgid))
        }
        if sandbox.network == false { needs.append(("network", .sysAdmin)) }
        guard !needs.isEmpty else { return [] }
        let held = effective ?? effectiveCapabilities()
        return needs.filter { held & (1 << $0.1.bit) == 0 }.map { (setting: $0.0, lacks: $0.1) }
    }

    /// Whether `value` (a name or a number) is `id`.
    private static func names(_ value: String, id: UInt32, lookup: (String) -> UInt32?) -> Bool {
        (UInt32(value) ?? lookup(value)) == id
    }

    /// `CapEff` of `/proc/self/status`; every bit set when it cannot be read (the worker's own
    /// failure still says why, so a guess must not warn about what may work).
    static func effectiveCapabilities(status path: String = "/proc/self/status") -> UInt64 {
        guard let bytes = try? InputFile.read(path, limit: 65_536) else { return .max }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("CapEff:") {
            let hex = line.dropFirst("CapEff:".count).drop(while: { $0 == " " || $0 == "\t" })
            return UInt64(hex, radix: 16) ?? .max
        }
        return .max
    }
}
