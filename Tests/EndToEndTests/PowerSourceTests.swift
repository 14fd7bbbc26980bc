import Foundation
import TestSupport
import Testing

/// The power source (issue 38, item 7): the real `host` binary with the bundled Logger (which
/// logs every notification), against UPower served by python3-dbusmock on a real private
/// `dbus-daemon`, in process and under `--isolation process`; against a power-supply tree the
/// test writes (`SERVICEHOST_POWER_SUPPLY_ROOT`) with real kernel uevents sent in a network
/// namespace of the host's own; and with neither.
@Suite(.timeLimit(.minutes(10)))
struct PowerSourceTests {
    /// The Logger's lines for `power.changed` payloads, in order.
    static func changes(_ records: [LogRecord]) -> [String] {
        let prefix = "notification power.changed from host: "
        return records.messages(from: "dev.servicehost.logger").compactMap { message in
            message.hasPrefix(prefix) ? String(message.dropFirst(prefix.count)) : nil
        }
    }

    static func on(_ records: [LogRecord]) -> String? {
        records.named(.sourceOn).first { $0.string("source") == "power" }?.string("reason")
    }

    static func host() throws -> RunningHost {
        let host = try RunningHost()
        try host.scratch.copy(try Repository.product("libLogger.so"), to: "lib/libLogger.so")
        return host
    }

    static func posted(_ host: RunningHost) -> Int {
        host.events.filter { $0 == "notification dev.servicehost.logger" }.count
    }

    @Test(
        .enabled(if: DBusMock.installed, "needs dbus-daemon and python3-dbusmock"),
        arguments: ["in-process", "process"])
    func upowersChanges_arePosted(isolation: String) throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch, templates: ["upower"])
        // On AC, a battery at 80 %.
        try bus.setDisplayDevice("IsPresent", "dbus.Boolean(True)")
        try bus.setDisplayDevice("Percentage", "dbus.Double(80.0)")
        let host = try Self.host()
        try host.start(["--isolation", isolation], environment: bus.environment)
        // The state at start is read, not posted.
        let current = try host.ctlJSON("request", "power.current")
        let result = current.reply["result"] as? [String: Any]
        #expect(
            result?["onBattery"] as? Bool == false && result?["low"] as? Bool == false
                && result?["percentage"] as? Int == 80, "\(current.reply)")
        try bus.setOnBattery(true)
        #expect(eventually { Self.posted(host) == 1 })
        try bus.setDisplayDevice("Percentage", "dbus.Double(14.6)")
        #expect(eventually { Self.posted(host) == 2 })
        // UP_DEVICE_LEVEL_LOW.
        try bus.setDisplayDevice("WarningLevel", "dbus.UInt32(3)")
        #expect(eventually { Self.posted(host) == 3 })
        try bus.setOnBattery(false)
        #expect(eventually { Self.posted(host) == 4 })
        #expect(host.stop().status == 0)

        let records = host.records
        #expect(Self.on(records) == "UPower on the system bus (on AC, 80%)")
        #expect(
            Self.changes(records) == [
                #"{"low":false,"onBattery":true,"percentage":80}"#, #"{"low":false,"onBattery":true,"percentage":15}"#,
                #"{"low":true,"onBattery":true,"percentage":15}"#, #"{"low":false,"onBattery":false,"percentage":15}"#,
            ])
        #expect(
            records.named(.powerChanged).map {
                "\($0.string("onBattery") ?? "") \($0.string("low") ?? "") \($0.string("percentage") ?? "")"
            } == ["true false 80", "true false 15", "true true 15", "false false 15"])
    }

    /// A tree like `/sys/class/power_supply`: an AC adapter, a laptop battery, a mouse's battery
    /// (scope Device: not the system's, never counted).
    final class SupplyTree {
        let root: String
        private let scratch: Scratch

        init(_ scratch: Scratch) throws {
            self.scratch = scratch
            root = try scratch.folder("power_supply")
            _ = try scratch.folder("power_supply/AC")
            _ = try scratch.folder("power_supply/BAT0")
            _ = try scratch.folder("power_supply/hidpp_battery_0")
            try set("AC", ["type": "Mains", "online": "1"])
            try set(
                "BAT0",
                ["type": "Battery", "present": "1", "status": "Charging", "capacity": "80", "capacity_level": "Normal"])
            try set(
                "hidpp_battery_0",
                [
                    "type": "Battery", "scope": "Device", "status": "Discharging", "capacity": "5",
                    "capacity_level": "Low",
                ])
        }

        /// Writes each attribute of `supply` as the kernel shows it (with a newline).
        func set(_ supply: String, _ attributes: [String: String]) throws {
            for (name, value) in attributes {
                try scratch.write("power_supply/\(supply)/\(name)", Array("\(value)\n".utf8))
            }
        }
    }

    /// A datagram to the uevent group of network namespace `namespace`, as the kernel sends.
    static func uevent(in namespace: NetworkSourceTests.Namespace) throws {
        let script = #"""
            import socket
            s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15)
            s.sendto(b"change@/devices/test/power_supply/BAT0\0ACTION=change\0SUBSYSTEM=power_supply\0", (0, 1))
            """#
        let result = try Command.run(
            "/usr/sbin/ip", ["netns", "exec", namespace.name, "/usr/bin/python3", "-c", script])
        guard result.status == 0 else { throw TestFailure("sending a uevent: \(result.stderr)") }
    }

    @Test(.enabled(if: getuid() == 0, "a network namespace needs root"), arguments: ["in-process", "process"])
    func aSupplyTree_isReadAgainAtEachUevent(isolation: String) throws {
        let namespace = try NetworkSourceTests.Namespace()
        let host = try Self.host()
        let tree = try SupplyTree(host.scratch)
        let wrapper = try host.scratch.script(
            "host-in-netns",
            """
            #!/bin/sh
            exec /usr/sbin/ip netns exec \(namespace.name) "\(try Repository.product("host"))" "$@"
            """)
        // No system bus: the tree, not a UPower the machine may run.
        let environment = [
            "SERVICEHOST_POWER_SUPPLY_ROOT": tree.root,
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(host.scratch.file("no-bus.sock"))",
        ]
        try host.start(["--isolation", isolation], executable: wrapper, environment: environment)
        try tree.set("AC", ["online": "0"])
        try tree.set("BAT0", ["status": "Discharging"])
        try Self.uevent(in: namespace)
        #expect(eventually { Self.posted(host) == 1 })
        // A uevent that changes nothing posts nothing: the next post is the next change.
        try Self.uevent(in: namespace)
        try tree.set("BAT0", ["capacity": "20"])
        try Self.uevent(in: namespace)
        #expect(eventually { Self.posted(host) == 2 })
        try tree.set("AC", ["online": "1"])
        try tree.set("BAT0", ["status": "Charging"])
        try Self.uevent(in: namespace)
        #expect(eventually { Self.posted(host) == 3 })
        #expect(host.stop().status == 0)

        let records = host.records
        #expect(Self.on(records) == "\(tree.root) and kernel uevents (on AC, 80%)")
        #expect(
            Self.changes(records) == [
                #"{"low":false,"onBattery":true,"percentage":80}"#, #"{"low":true,"onBattery":true,"percentage":20}"#,
                #"{"low":false,"onBattery":false,"percentage":20}"#,
            ])
    }

    @Test func noSupplyAndNoUPower_theSourceIsOffWithTheReason_andHostCheckSaysSo() throws {
        let host = try Self.host()
        let empty = try host.scratch.folder("power_supply")
        let environment = [
            "SERVICEHOST_POWER_SUPPLY_ROOT": empty,
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(host.scratch.file("no-bus.sock"))",
        ]
        let reason = "no power supply in \(empty) and no UPower (no system bus: "
        try host.start(environment: environment)
        let unanswered = try host.ctlJSON("request", "power.current")
        #expect(unanswered.status == 3)
        #expect((unanswered.reply["note"] as? String)?.hasPrefix("the power source is off: \(reason)") == true)
        let records = host.stop().records
        let off = records.named(.sourceOff).filter { $0.string("source") == "power" }
        #expect(off.count == 1 && off.first?.string("reason")?.hasPrefix(reason) == true, "\(off)")
        #expect(records.named(.powerChanged).isEmpty)

        let check = try Command.run(
            try Repository.product("host"), ["check", "--plugins", host.lib], environment: environment)
        #expect(
            lines(check.stdout, containing: "source power: ").first?.hasPrefix("source power: off (\(reason)") == true)
    }
}
