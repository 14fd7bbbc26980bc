import Foundation
import TestSupport
import Testing

@testable import HostCore

/// The power source's reading of a `/sys/class/power_supply` tree (issue 38, item 7): which
/// supplies count, when the machine is on battery, low, and at what charge, and that odd
/// attribute values are read without a trap.
@Suite struct PowerSuppliesTests {
    /// A tree of `supplies` (name → attributes), each value written as the kernel shows it.
    static func tree(_ supplies: [String: [String: String]]) throws -> (Scratch, String) {
        let scratch = try Scratch()
        let root = try scratch.folder("power_supply")
        for (name, attributes) in supplies {
            _ = try scratch.folder("power_supply/\(name)")
            for (attribute, value) in attributes {
                try scratch.write("power_supply/\(name)/\(attribute)", Array("\(value)\n".utf8))
            }
        }
        return (scratch, root)
    }

    static func read(_ supplies: [String: [String: String]]) throws -> PowerState? {
        let (scratch, root) = try tree(supplies)
        // The folder goes with the scratch: kept until it is read.
        return withExtendedLifetime(scratch) { PowerSupplies.read(root: root) }
    }

    @Test func noSupply_orNoFolder_isNone() throws {
        #expect(try Self.read([:]) == nil)
        #expect(PowerSupplies.read(root: "/nonexistent/power_supply") == nil)
        // A UPS and a folder without a type are not the machine's supplies.
        #expect(try Self.read(["ups": ["type": "UPS", "online": "1"], "odd": [:]]) == nil)
    }

    @Test func withoutALineSupply_aDischargingBatteryIsOnBattery() throws {
        let state = try Self.read(["BAT0": ["type": "Battery", "status": "Discharging", "capacity": "57"]])
        #expect(state == PowerState(onBattery: true, low: false, percentage: 57))
    }

    @Test func aUSBSupplyOnline_isOnAC() throws {
        let state = try Self.read([
            "usb": ["type": "USB_PD", "online": "1"],
            "BAT0": ["type": "Battery", "status": "Charging", "capacity": "5"],
        ])
        #expect(state == PowerState(onBattery: false, low: false, percentage: 5))
    }

    @Test func lowFromTheFirmwaresLevel_orAtTwentyPercent() throws {
        let critical = try Self.read([
            "AC": ["type": "Mains", "online": "0"],
            "BAT0": ["type": "Battery", "status": "Discharging", "capacity": "50", "capacity_level": "Critical"],
        ])
        #expect(critical == PowerState(onBattery: true, low: true, percentage: 50))
        let twenty = try Self.read([
            "AC": ["type": "Mains", "online": "0"],
            "BAT0": ["type": "Battery", "status": "Discharging", "capacity": "20"],
        ])
        #expect(twenty?.low == true)
    }

    @Test func twoBatteries_averageTheirCharge_andAnAbsentOneDoesNotCount() throws {
        let state = try Self.read([
            "AC": ["type": "Mains", "online": "1"], "BAT0": ["type": "Battery", "capacity": "40"],
            "BAT1": ["type": "Battery", "capacity": "81"],
            "BAT2": ["type": "Battery", "present": "0", "capacity": "0"],
        ])
        #expect(state == PowerState(onBattery: false, low: false, percentage: 61))
    }

    @Test func oddValues_areReadWithoutATrap() throws {
        let state = try Self.read([
            "BAT0": ["type": "Battery", "status": "Discharging", "capacity": "9223372036854775807"],
            "BAT1": ["type": "Battery", "status": "Discharging", "capacity": "9223372036854775807"],
            "BAT2": ["type": "Battery", "status": "Discharging", "capacity": "-5"],
            "BAT3": ["type": "Battery", "status": "Discharging", "capacity": "abc"],
        ])
        // Clamped to 0…100 each before the average: (100 + 100 + 0) / 3.
        #expect(state == PowerState(onBattery: true, low: false, percentage: 67))
    }
}
