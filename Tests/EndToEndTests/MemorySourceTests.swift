import Foundation
import TestSupport
import Testing

/// The memory source (issue 38, item 4): its PSI trigger taken by the kernel, its settings
/// checked, and real memory pressure raised where the machine has a cgroup v1 memory controller
/// (a child cgroup with a small limit and a process thrashing file pages in it).
@Suite(.timeLimit(.minutes(10)))
struct MemorySourceTests {
    static let psi = FileManager.default.fileExists(atPath: "/proc/pressure/memory")
    /// cgroup v1's memory controller, where a test makes a child cgroup of its own.
    static let memoryV1 = "/sys/fs/cgroup/memory"
    static let canThrash =
        psi && getuid() == 0 && FileManager.default.fileExists(atPath: memoryV1 + "/memory.limit_in_bytes")

    /// A cgroup v1 memory child limited to 24 MiB, a 40 MiB file written from inside it (its
    /// pages charged there) and read again and again: each pass refaults the pages the last one
    /// evicted, and the kernel counts the waits as memory stalls in /proc/pressure/memory, where
    /// the host's trigger is (a v1 host has no cgroup `memory.pressure`). The default trigger
    /// (200 ms stalled in 2 s) fired within 2 s in each of three tries on the development machine.
    /// The file is in /var/tmp: on a tmpfs its pages could not be evicted without swap. The
    /// trigger is on the system's file, so another process's stall fires it too: the test fails
    /// when the source gives no warning at all.
    @Test(.enabled(if: canThrash, "needs PSI, root and a cgroup v1 memory controller"))
    func realPressure_inAMemoryCgroup_raisesDidReceiveMemoryWarning() throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"",
                "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_MEMORY_WARNING)",
            ])
        try host.start(["--source", "memory=on", "--memory-warning-interval", "30"])
        let name = "servicehost-test-\(UUID().uuidString.prefix(8))"
        let cgroup = Self.memoryV1 + "/" + name
        let file = "/var/tmp/\(name).bin"
        try FileManager.default.createDirectory(atPath: cgroup, withIntermediateDirectories: false)
        defer {
            try? FileManager.default.removeItem(atPath: file)
            // rmdir, once the thrasher (killed below) has left it.
            _ = eventually(within: 10) { rmdir(cgroup) == 0 }
        }
        try "24M".write(toFile: cgroup + "/memory.limit_in_bytes", atomically: false, encoding: .utf8)
        let thrasher = try Command.start(
            "/bin/sh",
            [
                "-c",
                "echo $$ > \(cgroup)/cgroup.procs && dd if=/dev/urandom of=\(file) bs=1M count=40 status=none"
                    + " && while :; do cat \(file) > /dev/null; done",
            ])
        defer {
            thrasher.send(SIGKILL)
            _ = thrasher.wait()
        }
        #expect(eventually(within: 60) { host.events.contains("didReceiveMemoryWarning test.a") })
        let records = host.stop().records
        #expect(records.named(.memoryPressure).contains { $0.string("warned") == "true" })
        #expect(records.probe(9).map(\.source).first == "test.a")
    }

    @Test(.enabled(if: psi && getuid() == 0, "needs PSI (/proc/pressure/memory) and root to write a trigger"))
    func theTrigger_isTakenByTheKernel_withTheSettingsGiven() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start([
            "--source", "memory=on", "--memory-pressure", "full 200000 2000000", "--memory-warning-interval", "30",
        ])
        let records = host.stop().records
        let on = records.named(.sourceOn).filter { $0.string("source") == "memory" }
        #expect(on.count == 1)
        #expect(on.first?.string("reason")?.hasPrefix(#"PSI trigger "full 200000 2000000" on "#) == true)
        #expect(on.first?.string("reason")?.hasSuffix("at most one warning per 30.0 s") == true)
    }

    @Test(arguments: [
        ("some 150000", "is not a PSI trigger"), ("half 1 1000000", "is not a PSI trigger"),
        ("some 1000 100000", "the window must be"), ("some 0 1000000", "the stall must be"),
        ("some 2000000 1000000", "the stall must be"),
    ])
    func aBadTrigger_isRefusedWithTheReason(trigger: String, reason: String) throws {
        let result = try Command.run(
            try Repository.product("host"), ["--memory-pressure", trigger, "--plugins", "/nonexistent"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("'\(trigger)'") && result.stderr.contains(reason), "\(result.stderr)")
    }

    @Test func turnedOff_theSourceSaysSo() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start(["--source", "memory=off"])
        let off = host.stop().records.named(.sourceOff).filter { $0.string("source") == "memory" }
        #expect(off.count == 1 && off.first?.string("reason")?.hasPrefix("turned off") == true)
    }
}
