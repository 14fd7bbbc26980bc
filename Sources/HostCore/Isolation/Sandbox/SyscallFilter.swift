import CSystem
import Glibc

/// The seccomp filter of a sandboxed worker (issue 43): a classic BPF program, built and
/// installed by the worker itself before it loads its plugin, after `PR_SET_NO_NEW_PRIVS`.
/// A denied call returns `EPERM` to the plugin; a call of another architecture's ABI (x32, i386
/// on x86_64) kills the process, as its numbers mean other calls.
enum SyscallFilter {
    /// One `struct sock_filter` (linux/filter.h): 8 bytes, as the kernel reads them.
    struct Instruction {
        var code: UInt16
        var jt: UInt8
        var jf: UInt8
        var k: UInt32
    }

    // linux/bpf_common.h and linux/seccomp.h.
    private static let loadWord: UInt16 = 0x20  // BPF_LD | BPF_W | BPF_ABS
    private static let jumpEqual: UInt16 = 0x15  // BPF_JMP | BPF_JEQ | BPF_K
    private static let jumpAtLeast: UInt16 = 0x35  // BPF_JMP | BPF_JGE | BPF_K
    private static let `return`: UInt16 = 0x06  // BPF_RET | BPF_K
    private static let allowCall: UInt32 = 0x7fff_0000  // SECCOMP_RET_ALLOW
    private static let killProcess: UInt32 = 0x8000_0000  // SECCOMP_RET_KILL_PROCESS
    private static let errno: UInt32 = 0x0005_0000  // SECCOMP_RET_ERRNO
    private static let trap: UInt32 = 0x0003_0000  // SECCOMP_RET_TRAP: SIGSYS, the call not made
    // struct seccomp_data: nr, arch, instruction_pointer, args[6] (args[0]'s low half first on
    // the little-endian architectures built for).
    private static let numberOffset: UInt32 = 0
    private static let archOffset: UInt32 = 4
    private static let firstArgumentOffset: UInt32 = 16
    /// x86_64's x32 ABI marks its numbers with this bit.
    private static let x32Bit: UInt32 = 0x4000_0000

    /// The system calls `default` denies, by name, as this architecture numbers them.
    static var denied: [(name: String, number: Int32)] {
        var table: UnsafePointer<csystem_syscall>?
        let count = Int(csystem_denied_syscalls(&table))
        guard let table else { return [] }
        return (0..<count).map { (String(cString: table[$0].name), table[$0].number) }
    }

    /// This architecture's number of system call `name`; nil when it has none of that name.
    static func number(_ name: String) -> Int32? {
        let number = csystem_syscall_number(name)
        return number >= 0 ? number : nil
    }

    /// The program for `profile` with `allow` taken out of its denied calls and `deny` added; nil
    /// when it denies nothing (`unrestricted` without `deny`), or for an architecture it does not know.
    ///
    /// The kernel runs a filter at every system call, but since Linux 5.11 it first looks a call's
    /// number up in a bitmap it built when the filter was installed (every number whose answer
    /// does not depend on the arguments or the instruction pointer), so an allowed call of this
    /// filter, which reads only the number and the architecture, never runs it: its length costs
    /// the hot path (read, write, sendmsg, recvmsg, epoll_wait) nothing there. Under `strict`
    /// only `socket` itself, which reads its first argument, runs it.
    ///
    /// With `audit`, a refused call raises SIGSYS instead (``AuditedRefusals``), whose handler
    /// makes it fail with `EPERM` as well and has the worker report it.
    static func program(
        _ profile: Sandbox.SyscallProfile, allow: [String] = [], deny: [String] = [], audit: Bool = false
    ) -> [Instruction]? {
        let arch = csystem_audit_arch()
        var names = profile == .unrestricted ? [] : denied.map(\.name)
        names = names.filter { !allow.contains($0) } + deny.filter { !names.contains($0) }
        let filtersSockets = profile == .strict && !allow.contains("socket")
        guard !names.isEmpty || filtersSockets, arch != 0 else { return nil }
        let numbers = names.compactMap(number).map { UInt32(bitPattern: $0) }
        let refuse = Instruction(code: `return`, jt: 0, jf: 0, k: (audit ? trap : errno) | UInt32(EPERM))
        var program: [Instruction] = [
            Instruction(code: loadWord, jt: 0, jf: 0, k: archOffset),
            Instruction(code: jumpEqual, jt: 1, jf: 0, k: arch),
            Instruction(code: `return`, jt: 0, jf: 0, k: killProcess),
            Instruction(code: loadWord, jt: 0, jf: 0, k: numberOffset),
        ]
        #if arch(x86_64)
            program += [
                Instruction(code: jumpAtLeast, jt: 0, jf: 1, k: x32Bit),
                Instruction(code: `return`, jt: 0, jf: 0, k: killProcess),
            ]
        #endif
        // Each denied number: equal, refused; else the next (no jump is longer than one).
        for number in numbers {
            program += [Instruction(code: jumpEqual, jt: 0, jf: 1, k: number), refuse]
        }
        if filtersSockets {
            // socket(family, …): AF_UNIX only.
            program += [
                Instruction(code: jumpEqual, jt: 0, jf: 3, k: UInt32(bitPattern: csystem_socket_syscall())),
                Instruction(code: loadWord, jt: 0, jf: 0, k: firstArgumentOffset),
                Instruction(code: jumpEqual, jt: 1, jf: 0, k: UInt32(AF_UNIX)),
                refuse,
            ]
        }
        program.append(Instruction(code: `return`, jt: 0, jf: 0, k: allowCall))
        return program
    }

    /// Sets `PR_SET_NO_NEW_PRIVS` and installs `profile`'s filter on this process (and every
    /// process it starts). Throws with the errno when the kernel refuses.
    static func install(
        _ profile: Sandbox.SyscallProfile, allow: [String] = [], deny: [String] = [], audit: Bool = false
    ) throws(SystemError) {
        guard csystem_no_new_privs() == 0 else { throw .current("prctl(PR_SET_NO_NEW_PRIVS)", "the worker") }
        guard let program = program(profile, allow: allow, deny: deny, audit: audit) else { return }
        let result = program.withUnsafeBytes { csystem_install_filter($0.baseAddress, UInt16(program.count)) }
        guard result == 0 else { throw .current("seccomp(SECCOMP_SET_MODE_FILTER)", "the worker") }
    }
}
