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
    private static let allow: UInt32 = 0x7fff_0000  // SECCOMP_RET_ALLOW
    private static let killProcess: UInt32 = 0x8000_0000  // SECCOMP_RET_KILL_PROCESS
    private static let errno: UInt32 = 0x0005_0000  // SECCOMP_RET_ERRNO
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

    /// The program for `profile`; nil for `unrestricted`, or an architecture it does not know.
    static func program(_ profile: Sandbox.SyscallProfile) -> [Instruction]? {
        let arch = csystem_audit_arch()
        guard profile != .unrestricted, arch != 0 else { return nil }
        let numbers = denied.map { UInt32(bitPattern: $0.number) }
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
        // Each denied number jumps to the EPERM return after the list (and the socket check).
        let socketLength = profile == .strict ? 5 : 0
        for (index, number) in numbers.enumerated() {
            let toDeny = numbers.count - index - 1 + socketLength + 1
            program.append(Instruction(code: jumpEqual, jt: UInt8(toDeny), jf: 0, k: number))
        }
        if profile == .strict {
            // socket(family, …): AF_UNIX only.
            program += [
                Instruction(code: jumpEqual, jt: 0, jf: 4, k: UInt32(bitPattern: csystem_socket_syscall())),
                Instruction(code: loadWord, jt: 0, jf: 0, k: firstArgumentOffset),
                Instruction(code: jumpEqual, jt: 1, jf: 0, k: UInt32(AF_UNIX)),
                Instruction(code: `return`, jt: 0, jf: 0, k: errno | UInt32(EPERM)),
                Instruction(code: `return`, jt: 0, jf: 0, k: allow),
            ]
        }
        program += [
            Instruction(code: `return`, jt: 0, jf: 0, k: allow),
            Instruction(code: `return`, jt: 0, jf: 0, k: errno | UInt32(EPERM)),
        ]
        return program
    }

    /// Sets `PR_SET_NO_NEW_PRIVS` and installs `profile`'s filter on this process (and every
    /// process it starts). Throws with the errno when the kernel refuses.
    static func install(_ profile: Sandbox.SyscallProfile) throws(SystemError) {
        guard csystem_no_new_privs() == 0 else { throw .current("prctl(PR_SET_NO_NEW_PRIVS)", "the worker") }
        guard let program = program(profile) else { return }
        let result = program.withUnsafeBytes { csystem_install_filter($0.baseAddress, UInt16(program.count)) }
        guard result == 0 else { throw .current("seccomp(SECCOMP_SET_MODE_FILTER)", "the worker") }
    }
}
