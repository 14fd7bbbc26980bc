import CSystem
import Glibc
import ServiceJSON

/// Power (on battery, on AC, low battery) so services can defer heavy work, posted to the
/// subscribed services as `power.changed` `{"onBattery": Bool, "low": Bool, "percentage": 0…100
/// or null}` on each change (and logged as `power.changed`); the state at start is in the
/// source's on line, not posted.
///
/// From UPower on the system bus where it answers (its `OnBattery`, and its display device's
/// `Percentage` and `WarningLevel`, read again at each `PropertiesChanged`); else from the
/// kernel's `/sys/class/power_supply`, read again at each kernel uevent (a
/// `NETLINK_KOBJECT_UEVENT` socket on the main loop: the kernel sends one when a supply is
/// plugged, unplugged or changes status). With neither (a machine on mains only, a container)
/// the source is off and says why.
@MainActor
final class PowerSource: SystemSource {
    let name = "power"
    let stateRequest: String? = PowerSource.currentRequest

    /// The notification posted.
    static let notification = "power.changed"
    /// The request the host answers with the current state.
    nonisolated static let currentRequest = "power.current"
    /// The folder the kernel lists power supplies in; `SERVICEHOST_POWER_SUPPLY_ROOT` replaces
    /// it (the tests' fake tree).
    nonisolated static var supplyRoot: String {
        getenv("SERVICEHOST_POWER_SUPPLY_ROOT").map { String(cString: $0) } ?? "/sys/class/power_supply"
    }

    private static let upower = "org.freedesktop.UPower"
    private static let upowerPath = "/org/freedesktop/UPower"
    private static let displayDevice = "/org/freedesktop/UPower/devices/DisplayDevice"
    private static let device = "org.freedesktop.UPower.Device"

    private var driver: AppDriver?
    private var bus: SDBusConnection?
    private var uevents: Int32 = -1
    private var watch: MainLoop.Watch?
    private var published = PublishedState<PowerState>(
        request: PowerSource.currentRequest, notification: PowerSource.notification)

    func check() -> SourceState {
        switch Self.upowerState() {
        case .success((let bus, let state)):
            bus.close()
            return .on("UPower on the system bus (\(state.description))")
        case .failure(let upowerReason):
            let root = Self.supplyRoot
            switch PowerSupplies.read(root: root) {
            case .some(let state): return .on("\(root) and kernel uevents (\(state.description))")
            case .none: return .off(Self.absent(root, upowerReason))
            }
        }
    }

    func start(_ driver: AppDriver) -> SourceState {
        switch Self.upowerState() {
        case .success((let bus, let state)):
            do throws(SDBusError) {
                for path in [Self.upowerPath, Self.displayDevice] {
                    // The message's a{sv} is not read: the three properties are asked for again.
                    try bus.matchSignal(
                        sender: Self.upower, path: path, interface: "org.freedesktop.DBus.Properties",
                        member: "PropertiesChanged"
                    ) { [weak self] _ in self?.upowerChanged() }
                }
            } catch {
                bus.close()
                return .off("UPower's signals could not be matched: \(error)")
            }
            self.bus = bus
            self.driver = driver
            published.start(state, driver: driver)
            return .on("UPower on the system bus (\(state.description))")
        case .failure(let upowerReason):
            let root = Self.supplyRoot
            guard let state = PowerSupplies.read(root: root) else { return .off(Self.absent(root, upowerReason)) }
            uevents = csystem_uevent_socket()
            guard uevents >= 0 else {
                return .off(
                    "kernel uevents are not available: \(SystemError.current("socket(NETLINK_KOBJECT_UEVENT)", root))")
            }
            do throws(SystemError) {
                watch = try driver.watch(uevents, name: "uevents") { [weak self] in self?.uevent() }
            } catch {
                close(uevents)
                uevents = -1
                return .off("kernel uevents could not be watched: \(error)")
            }
            self.driver = driver
            published.start(state, driver: driver)
            return .on("\(root) and kernel uevents (\(state.description))")
        }
    }

    private static func absent(_ root: String, _ upowerReason: String) -> String {
        "no power supply in \(root) and no UPower (\(upowerReason))"
    }

    /// UPower answering on the system bus (the connection, the state read), or why not.
    private enum UPower {
        case success((SDBusConnection, PowerState))
        case failure(String)
    }

    /// A connection to the system bus with UPower's state read, or why not.
    private static func upowerState() -> UPower {
        let bus: SDBusConnection
        do throws(SDBusError) { bus = try SDBusConnection(.system) } catch {
            // Opening fails for the library or the bus, never for a peer.
            return .failure(error.sourceOff(peer: "no system bus"))
        }
        do throws(SDBusError) {
            return .success((bus, try read(bus)))
        } catch {
            bus.close()
            return .failure("UPower does not answer on the system bus: \(error)")
        }
    }

    /// UPower's `OnBattery`, and its display device's percentage (when a battery is present)
    /// and warning level (low from UP_DEVICE_LEVEL_LOW, 3, up).
    private static func read(_ bus: SDBusConnection) throws(SDBusError) -> PowerState {
        func flag(_ path: String, _ interface: String, _ name: String) throws(SDBusError) -> Bool {
            try bus.property(
                destination: upower, path: path, interface: interface, name: name, type: "b", as: Int32.self)
                != 0
        }
        let onBattery = try flag(upowerPath, upower, "OnBattery")
        let present = try flag(displayDevice, device, "IsPresent")
        // sd-bus writes a "d" as the double's 8 bytes.
        let percentage = try Double(
            bitPattern: bus.property(
                destination: upower, path: displayDevice, interface: device, name: "Percentage", type: "d",
                as: UInt64.self))
        let level = try bus.property(
            destination: upower, path: displayDevice, interface: device, name: "WarningLevel", type: "u",
            as: UInt32.self)
        return PowerState(
            onBattery: onBattery, low: onBattery && level >= 3,
            percentage: present ? PowerState.percent(percentage) : nil)
    }

    private func upowerChanged() {
        guard let bus, let fresh = try? Self.read(bus) else { return }
        post(fresh)
    }

    private func uevent() {
        // What a uevent says is not read: any of them is a reason to read the supplies again (the
        // socket is non-blocking: the loop ends when it is drained).
        var buffer = [UInt8](repeating: 0, count: 8192)
        while buffer.withUnsafeMutableBytes({ recv(uevents, $0.baseAddress, $0.count, 0) }) >= 0 {}
        guard let fresh = PowerSupplies.read(root: Self.supplyRoot) else { return }
        post(fresh)
    }

    /// Posts `power.changed` when `fresh` differs from what was posted last.
    private func post(_ fresh: PowerState) {
        guard let driver else { return }
        published.publish(fresh, driver: driver)
    }
}

/// On battery or not, low or not, and the batteries' charge.
struct PowerState: PublishedValue {
    var onBattery: Bool
    /// On battery and at or below ``lowPercentage`` (or the firmware or UPower says low).
    var low: Bool
    /// The system batteries' charge in whole percent; nil without a battery.
    var percentage: Int?

    /// UPower's default `PercentageLow`.
    static let lowPercentage = 20

    /// `value` rounded and clamped to 0…100 (nil for NaN).
    static func percent(_ value: Double) -> Int? {
        guard value.isFinite else { return nil }
        return Int(min(max(value, 0), 100).rounded())
    }

    var description: String {
        (onBattery ? "on battery" : "on AC") + (percentage.map { ", \($0)%" } ?? "") + (low ? ", low" : "")
    }

    func logChange(to log: Log) {
        log.info(
            "host", "power \(description)", event: .powerChanged, .string("onBattery", onBattery ? "true" : "false"),
            .string("low", low ? "true" : "false"), .string("percentage", percentage.map { "\($0)" } ?? ""))
    }

    /// The notification's payload.
    var json: JSONValue {
        .object([
            "onBattery": .bool(onBattery), "low": .bool(low),
            "percentage": percentage.map { .number(Double($0)) } ?? .null,
        ])
    }
}

/// The kernel's power supplies (`/sys/class/power_supply/NAME/{type,online,status,capacity,…}`).
enum PowerSupplies {
    /// The state the supplies under `root` give, nil when there is none (or `root` cannot be read).
    ///
    /// A line supply (`type` Mains, USB…) is on when its `online` is 1; a system battery is a
    /// `Battery` whose `scope` is not `Device` (a mouse's) and whose `present` is not 0. On
    /// battery: with line supplies listed, none online; without, a battery `Discharging`.
    static func read(root: String) -> PowerState? {
        guard let names = try? DirectoryHandle.open(root).names() else { return nil }
        var lines: [Bool] = []
        var batteries: [(status: String, capacity: Int?, level: String)] = []
        for name in names.sorted() {
            let folder = root + "/" + name + "/"
            func attribute(_ file: String) -> String? {
                guard let bytes = try? InputFile.read(folder + file, limit: 4096) else { return nil }
                return String(decoding: bytes, as: UTF8.self).trimmingWhitespace
            }
            switch attribute("type") {
            case "Battery":
                guard attribute("scope") != "Device", attribute("present") != "0" else { continue }
                batteries.append(
                    (
                        attribute("status") ?? "",
                        attribute("capacity").flatMap { Int($0) }.map { min(max($0, 0), 100) },
                        attribute("capacity_level") ?? ""
                    ))
            case nil, "UPS":
                continue
            default:
                lines.append(attribute("online") == "1")
            }
        }
        guard !lines.isEmpty || !batteries.isEmpty else { return nil }
        let onBattery =
            lines.isEmpty
            ? batteries.contains { $0.status == "Discharging" } : !batteries.isEmpty && !lines.contains(true)
        let capacities = batteries.compactMap(\.capacity)
        let percentage =
            capacities.isEmpty ? nil : PowerState.percent(Double(capacities.reduce(0, +)) / Double(capacities.count))
        let low =
            onBattery
            && ((percentage.map { $0 <= PowerState.lowPercentage } ?? false)
                || batteries.contains { ["Low", "Critical"].contains($0.level) })
        return PowerState(onBattery: onBattery, low: low, percentage: percentage)
    }
}

extension String {
    /// Without leading and trailing spaces and newlines (a sysfs attribute ends with one).
    fileprivate var trimmingWhitespace: String {
        let bytes = Array(utf8)
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
