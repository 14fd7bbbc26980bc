import Glibc
import TestSupport
import Testing

@testable import HostCore

/// Issue 43's configuration: the top-level `"sandbox"` default under each service's own keys,
/// every mistake an error naming the key's path, and the seccomp program's shape.
@Suite struct SandboxConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> HostConfiguration {
        try HostConfiguration.parse(text, file: "services.json")
    }

    @Test func theDefault_isUnderEachIsolatedServicesOwnKeys() throws {
        let configuration = try parse(
            #"""
            {"sandbox": {"memoryMax": "256M", "tasksMax": 64, "syscalls": "default"},
             "services": {
               "test.a": {"isolation": "process", "sandbox": {"memoryMax": 67108864, "cpuQuota": 50, "syscalls": "strict"}},
               "test.b": {"isolation": "process"},
               "test.c": {"sandbox": {"tasksMax": 8}}
             }}
            """#)
        var settings = IsolationSettings(stateDirectory: "/nonexistent")
        settings.adopt(configuration)
        #expect(
            settings.sandbox(for: "test.a")
                == Sandbox(memoryMax: 64 << 20, cpuQuota: 50, tasksMax: 64, syscalls: .strict))
        #expect(settings.sandbox(for: "test.b") == Sandbox(memoryMax: 256 << 20, tasksMax: 64, syscalls: .default))
        // In the host: no sandbox, and the check and the log say so.
        #expect(settings.sandbox(for: "test.c") == nil)
        #expect(settings.sandboxesIgnored == ["test.c"])
        settings.isolation = .process
        #expect(settings.sandbox(for: "test.c")?.tasksMax == 8)
        #expect(
            settings.sandbox(for: "test.unlisted") == Sandbox(memoryMax: 256 << 20, tasksMax: 64, syscalls: .default))
        #expect(settings.sandboxesIgnored == [])
        // A file's services share one worker: the strictest of each key.
        #expect(
            settings.sandbox(forWorkerOf: ["test.a", "test.c"])
                == Sandbox(memoryMax: 64 << 20, cpuQuota: 50, tasksMax: 8, syscalls: .strict))
    }

    /// Identity, writes, network and lists: an identity is taken whole (a service's user
    /// replaces the default's dynamic user), and a worker's services must agree on it.
    @Test func theNewKeys_overlayAndCombine() throws {
        let configuration = try parse(
            #"""
            {"sandbox": {"dynamicUser": true, "writablePaths": ["/tmp", "/var/tmp"]},
             "services": {
               "test.a": {"isolation": "process", "sandbox": {"user": "0", "network": false,
                 "syscalls": {"profile": "strict", "allow": ["ptrace"], "deny": ["mkdir"]}}},
               "test.b": {"isolation": "process", "sandbox": {"writablePaths": ["/tmp"]}}
             }}
            """#)
        var settings = IsolationSettings(stateDirectory: "/nonexistent")
        settings.adopt(configuration)
        let a = try #require(settings.sandbox(for: "test.a"))
        #expect(a.user == "0" && a.dynamicUser == nil && a.network == false)
        #expect(a.profile == .strict && a.allowSyscalls == ["ptrace"] && a.denySyscalls == ["mkdir"])
        #expect(a.writablePaths == ["/tmp", "/var/tmp"])
        let b = try #require(settings.sandbox(for: "test.b"))
        #expect(b.dynamicUser == true && b.user == nil && b.writablePaths == ["/tmp"])
        let both = try #require(settings.sandbox(forWorkerOf: ["test.a", "test.b"]))
        #expect(both.writablePaths == ["/tmp"] && both.network == false && both.denySyscalls == ["mkdir"])
        #expect(Sandbox.identityConflict([a, b]) != nil && Sandbox.identityConflict([b, b]) == nil)
    }

    /// What the host writes on a worker's command line is what the worker reads back.
    @Test func theWorkersOptions_readBackAsWritten() throws {
        var sandbox = Sandbox(syscalls: .strict)
        sandbox.allowSyscalls = ["ptrace"]
        sandbox.denySyscalls = ["mkdir", "chmod"]
        sandbox.writablePaths = ["/var/tmp", "/a folder/with spaces"]
        sandbox.network = false
        sandbox.audit = true
        let written = WorkerSandbox(sandbox, identity: (60_600, 60_601))
        #expect(try WorkerSandbox.parse(ArraySlice(written.arguments))?.get() == written)
        #expect(WorkerSandbox.parse([]) == nil)
        for bad in [["--identity", "60600"], ["--syscalls", "lax"], ["--syscalls"], ["--unknown", "x"]] {
            guard case .failure? = WorkerSandbox.parse(ArraySlice(bad)) else {
                Issue.record("\(bad) was read")
                continue
            }
        }
    }

    @Test(arguments: [
        (#"{"sandbox": {"memoryMax": "12Q"}}"#, "sandbox.memoryMax"),
        (#"{"sandbox": {"memoryMax": 1000}}"#, "sandbox.memoryMax"),
        (#"{"sandbox": {"memoryMax": "99999999999999999999G"}}"#, "sandbox.memoryMax"),
        (#"{"sandbox": {"cpuQuota": 0}}"#, "sandbox.cpuQuota"),
        (#"{"sandbox": {"tasksMax": 0}}"#, "sandbox.tasksMax"),
        (#"{"sandbox": {"tasksMax": 1.5}}"#, "sandbox.tasksMax"),
        (#"{"sandbox": {"ioWeight": 10001}}"#, "sandbox.ioWeight"),
        (#"{"sandbox": {"syscalls": "paranoid"}}"#, "sandbox.syscalls"),
        (#"{"sandbox": {"memmoryMax": "1G"}}"#, "sandbox.memmoryMax"),
        (#"{"sandbox": []}"#, "sandbox"),
        (#"{"services": {"test.a": {"sandbox": {"tasksMax": -1}}}}"#, "services.test.a.sandbox.tasksMax"),
    ])
    func aMistake_namesTheKey(_ text: String, _ path: String) {
        do {
            _ = try parse(text)
            Issue.record("no error for \(text)")
        } catch {
            #expect(error.keyPath == path, "\(error)")
        }
    }

    @Test func bytes_readAsSystemdWritesThem() {
        #expect(Sandbox.bytes("1024") == 1024)
        #expect(Sandbox.bytes("64K") == 64 << 10)
        #expect(Sandbox.bytes("256m") == 256 << 20)
        #expect(Sandbox.bytes("2G") == 2 << 30)
        #expect(Sandbox.bytes("1T") == 1 << 40)
        #expect(Sandbox.bytes("") == nil && Sandbox.bytes("G") == nil && Sandbox.bytes("-1M") == nil)
        #expect(Sandbox.bytes("20000000000T") == nil)
        #expect(Sandbox.text(bytes: 64 << 20) == "64M" && Sandbox.text(bytes: 1_000_001) == "1000001")
    }

    /// Every jump of the classic BPF program lands inside it, and it ends in returns.
    @Test(arguments: [Sandbox.SyscallProfile.default, .strict])
    func theSeccompProgram_jumpsOnlyWithinItself(_ profile: Sandbox.SyscallProfile) throws {
        let program = try #require(SyscallFilter.program(profile))
        #expect(program.count < 256)
        for (index, instruction) in program.enumerated() where instruction.code & 0x07 == 0x05 {
            #expect(index + 1 + Int(instruction.jt) < program.count && index + 1 + Int(instruction.jf) < program.count)
        }
        // Ends allowing; each denied number is followed by its EPERM return.
        #expect(program.last?.code == 0x06 && program.last?.k == 0x7fff_0000)
        #expect(program.contains { $0.code == 0x06 && $0.k == 0x0005_0000 | UInt32(EPERM) })
        #expect(SyscallFilter.program(.unrestricted) == nil)
        #expect(SyscallFilter.denied.map(\.name).contains("ptrace"))
        #expect(MemoryLayout<SyscallFilter.Instruction>.stride == 8)
    }

    /// A custom list over a profile: `deny` adds its calls, `allow` takes the profile's out; a
    /// filter that would deny nothing is none.
    @Test func customLists_changeWhatTheProgramDenies() throws {
        let ptrace = try #require(SyscallFilter.number("ptrace"))
        let mkdir = try #require(SyscallFilter.number("mkdir"))
        #expect(SyscallFilter.number("no_such_call") == nil)
        func denies(_ program: [SyscallFilter.Instruction], _ number: Int32) -> Bool {
            program.indices.dropLast().contains {
                program[$0].code == 0x15 && program[$0].k == UInt32(bitPattern: number)
                    && program[$0 + 1].k == 0x0005_0000 | UInt32(EPERM)
            }
        }
        let custom = try #require(SyscallFilter.program(.default, allow: ["ptrace"], deny: ["mkdir"]))
        #expect(denies(custom, mkdir) && !denies(custom, ptrace))
        let only = try #require(SyscallFilter.program(.unrestricted, deny: ["mkdir"]))
        #expect(denies(only, mkdir) && !denies(only, ptrace))
        #expect(SyscallFilter.program(.default, allow: SyscallFilter.denied.map(\.name)) == nil)
    }
}

/// Where the host makes workers' cgroups: read from /proc/self/cgroup and /proc/self/mounts (here
/// files of a scratch folder standing in for them).
@Suite struct CgroupTreeTests {
    private func discover(_ membership: String, _ mounts: String, in scratch: Scratch) throws -> Result<
        CgroupTree, SandboxUnavailable
    > {
        let cgroup = try scratch.write("cgroup", Array(membership.utf8))
        let mountsFile = try scratch.write("mounts", Array(mounts.utf8))
        return CgroupTree.discover(cgroupFile: cgroup, mountsFile: mountsFile)
    }

    @Test func aHybridHierarchy_givesTheV1ControllersUnderTheHostsOwnCgroups() throws {
        let scratch = try Scratch()
        let root = try scratch.folder("sys")
        for folder in ["memory/api/1", "pids", "cpu"] { _ = try scratch.folder("sys/" + folder) }
        let tree = try discover(
            "4:memory:/api/1\n8:pids:/\n1:cpu:/\n0::/\n",
            """
            cgroup \(root)/memory cgroup rw,relatime,memory 0 0
            cgroup \(root)/pids cgroup rw,relatime,pids 0 0
            cgroup \(root)/cpu cgroup rw,relatime,cpu 0 0
            cgroup2 \(root)/unified cgroup2 rw,relatime 0 0
            """, in: scratch
        ).get()
        #expect(tree.version == .v1)
        #expect(tree.bases[.memory] == root + "/memory/api/1" && tree.bases[.pids] == root + "/pids")
        #expect(tree.bases[.cpu] == root + "/cpu" && tree.bases[.io] == nil)
    }

    @Test func noControllerAnywhere_isUnavailable_saysWhy() throws {
        let scratch = try Scratch()
        let root = try scratch.folder("sys")
        _ = try scratch.folder("sys/unified")
        let result = try discover("0::/\n", "cgroup2 \(root)/unified cgroup2 rw 0 0\n", in: scratch)
        guard case .failure(let reason) = result else {
            Issue.record("a tree without controllers")
            return
        }
        #expect(reason.description.contains("no writable v1 memory, pids or cpu hierarchy"))
    }
}
