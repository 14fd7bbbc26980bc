import Foundation
import TestSupport
import Testing

/// The memory source (issue 38, item 4): its PSI trigger taken by the kernel, its settings
/// checked. Raising real memory pressure needs a cgroup v2 child with a low `memory.high`; this
/// suite does not do it yet (see SystemEvents.md).
@Suite(.timeLimit(.minutes(10)))
struct MemorySourceTests {
    static let psi = FileManager.default.fileExists(atPath: "/proc/pressure/memory")

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
