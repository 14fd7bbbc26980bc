import Glibc

/// Lock and unlock from systemd-logind (system bus), for the host's own session: `XDG_SESSION_ID`,
/// else logind's `GetSessionByPID` of the host's PID.
///
/// The session's `Lock` signal (or its `LockedHint` becoming true) delivers
/// protectedDataWillBecomeUnavailable, then the app resigns active (UIKit's order when the user
/// locks a phone); `Unlock` (or `LockedHint` false) delivers protectedDataDidBecomeAvailable,
/// then the app becomes active again if it was active when the session locked. The session's
/// `Active` becoming false (another user's session took the seat) moves the app to the
/// background; true brings it back as it was.
@MainActor
final class LockSource: SystemSource {
    let name = "lock"

    private static let destination = "org.freedesktop.login1"
    private static let path = "/org/freedesktop/login1"
    private static let manager = "org.freedesktop.login1.Manager"
    private static let session = "org.freedesktop.login1.Session"

    private var bus: SDBusConnection?
    private var driver: AppDriver?
    /// The session's object path.
    private var sessionPath = ""
    /// What the host last heard: the session locked, the session active on its seat.
    private var locked = false
    private var active = true
    /// Whether the app was active when the session locked (it becomes active again at unlock).
    private var activeBeforeLock = false
    /// Whether the app was in the foreground when the session became inactive.
    private var foregroundBeforeSwitch = false

    func check() -> SourceState {
        do throws(SDBusError) {
            let bus = try SDBusConnection(.system)
            defer { bus.close() }
            let path = try Self.sessionPath(bus)
            _ = try Self.flag(bus, path, "LockedHint")
            return .on("logind session \(path) on the system bus")
        } catch {
            return .off(error.sourceOff(peer: Self.absent))
        }
    }

    func start(_ driver: AppDriver) -> SourceState {
        do throws(SDBusError) {
            let bus = try SDBusConnection(.system)
            self.bus = bus
            let path = try Self.sessionPath(bus)
            sessionPath = path
            locked = try Self.flag(bus, path, "LockedHint")
            active = try Self.flag(bus, path, "Active")
            try bus.matchSignal(sender: Self.destination, path: path, interface: Self.session, member: "Lock") {
                [weak self] _ in self?.lock()
            }
            try bus.matchSignal(sender: Self.destination, path: path, interface: Self.session, member: "Unlock") {
                [weak self] _ in self?.unlock()
            }
            // The message's a{sv} is not read: the two properties are asked for again (a rare signal).
            try bus.matchSignal(
                sender: Self.destination, path: path, interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged"
            ) { [weak self] _ in self?.propertiesChanged() }
            self.driver = driver
            return .on("logind session \(path) on the system bus (locked: \(locked), active: \(active))")
        } catch {
            bus?.close()
            bus = nil
            return .off(error.sourceOff(peer: Self.absent))
        }
    }

    /// The host's session: `XDG_SESSION_ID`'s (`GetSession`), else its PID's (`GetSessionByPID`).
    private static func sessionPath(_ bus: SDBusConnection) throws(SDBusError) -> String {
        if let id = getenv("XDG_SESSION_ID").map({ String(cString: $0) }), !id.isEmpty {
            return try bus.call(
                destination: destination, path: path, interface: manager, member: "GetSession", [.string(id)]
            ) { message throws(SDBusError) in try message.readObjectPath() }
        }
        return try bus.call(
            destination: destination, path: path, interface: manager, member: "GetSessionByPID",
            [.uint32(UInt32(getpid()))]
        ) { message throws(SDBusError) in try message.readObjectPath() }
    }

    /// A boolean property of the session (sd-bus reads a "b" as a 32-bit int).
    private static func flag(_ bus: SDBusConnection, _ path: String, _ name: String) throws(SDBusError) -> Bool {
        try bus.property(
            destination: destination, path: path, interface: session, name: name, type: "b", as: Int32.self)
            != 0
    }

    /// Why the source is off when logind answered with an error.
    private static let absent = "the host runs in no logind session logind answers for"

    private func lock() {
        guard let driver, !locked else { return }
        locked = true
        activeBeforeLock = driver.host.state == .active
        driver.log.info("host", "the session locked", event: .sessionLock, .string("locked", "true"))
        driver.lock()
    }

    private func unlock() {
        guard let driver, locked else { return }
        locked = false
        driver.log.info("host", "the session was unlocked", event: .sessionLock, .string("locked", "false"))
        // After a user switch the app stays in the background until the session is active again.
        driver.unlock(becomeActive: activeBeforeLock && active)
    }

    private func propertiesChanged() {
        guard let bus, driver != nil else { return }
        guard let lockedNow = try? Self.flag(bus, sessionPath, "LockedHint"),
            let activeNow = try? Self.flag(bus, sessionPath, "Active")
        else { return }
        if activeNow != active { activeChanged(activeNow) }
        if lockedNow && !locked { lock() } else if !lockedNow && locked { unlock() }
    }

    private func activeChanged(_ activeNow: Bool) {
        guard let driver else { return }
        active = activeNow
        driver.log.info(
            "host", activeNow ? "the session is active again" : "another session took the seat",
            event: .sessionActive, .string("active", activeNow ? "true" : "false"))
        if !activeNow {
            foregroundBeforeSwitch = driver.host.state == .active || driver.host.state == .inactive
            driver.enterBackground()
        } else if foregroundBeforeSwitch {
            // A locked session comes back to the foreground, inactive, until it is unlocked.
            if locked {
                activeBeforeLock = true
                driver.enterForeground()
            } else {
                driver.becomeActive()
            }
        }
    }
}
