import Foundation
import TestSupport
import Testing

/// The sd_notify protocol against a real datagram socket standing in for systemd.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct SystemdTests {
    /// A host of one probe under a stand-in systemd, its watchdog at `watchdogUsec`.
    private func start(watchdogUsec: String) throws -> (
        host: RunningHost, systemd: DatagramListener, process: Command.Running
    ) {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let systemd = try DatagramListener(path: host.scratch.file("notify.sock"))
        let process = try Command.start(
            try Repository.product("host"),
            ["--plugins", host.lib, "--control", host.control, "--state-dir", host.stateDirectory],
            environment: ["NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": watchdogUsec])
        return (host, systemd, process)
    }

    @Test func notifiesReadyReloadingReadyStopping_andPingsTheWatchdog() throws {
        let (host, systemd, process) = try start(watchdogUsec: "400000")
        var seen: [String] = []
        func next(_ wanted: String) -> Bool {
            while let message = systemd.receive() {
                // Watchdog pings come every 200 ms throughout; count them, wait for the rest.
                seen.append(message)
                if message.hasPrefix(wanted) { return true }
            }
            return false
        }
        #expect(next("READY=1"))
        #expect(try host.ctl("reload").status == 0)
        #expect(next("RELOADING=1"))
        #expect(next("READY=1"))
        #expect(next("WATCHDOG=1"))
        process.send(SIGTERM)
        #expect(next("STOPPING=1"))
        #expect(process.wait().status == 0)
        let order = seen.filter { !$0.hasPrefix("WATCHDOG") }.map { String($0.prefix { $0 != "\n" }) }
        #expect(order == ["READY=1", "RELOADING=1", "READY=1", "STOPPING=1"])
    }

    /// A `WATCHDOG_USEC` of 2⁶⁴ − 1 trapped the host at start (the ping timer's nanoseconds
    /// overflowed): now it pings at once and then daily, and serves.
    @Test func theLargestWatchdogInterval_startsTheHost_andPingsAtOnce() throws {
        let (host, systemd, process) = try start(watchdogUsec: "18446744073709551615")
        var seen: [String] = []
        while seen.count < 2, let message = systemd.receive() { seen.append(String(message.prefix { $0 != "\n" })) }
        #expect(Set(seen) == ["READY=1", "WATCHDOG=1"], "\(seen)")
        #expect(try host.ctl("state").stdout.contains("state: active"))
        process.send(SIGTERM)
        #expect(process.wait().status == 0)
    }
}
