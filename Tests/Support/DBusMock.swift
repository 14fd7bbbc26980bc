import Foundation

/// A private D-Bus for a test (issue 38): a real `dbus-daemon` on a socket in the scratch
/// folder, a child of the test, with systemd-logind's interface (and UPower's, when asked) served
/// on it by `python3-dbusmock`'s `logind` and `upower` templates, the standard way desktop
/// projects test their clients. A host is pointed at it with `DBUS_SYSTEM_BUS_ADDRESS` (``environment``).
///
/// `dbus-daemon` and `python3-dbusmock` are Debian packages; ``installed`` installs them with
/// apt-get when they are missing and the machine allows it (root), as ``Mosquitto`` does.
public final class DBusMock {
    /// Whether the parts are there (installed now if need be), else the reason printed once.
    public static let installed: Bool = SystemPackages.ensure(
        ["dbus-daemon", "python3-dbusmock"], providing: [PrivateBus.daemon, PrivateBus.python],
        check: { (try? Command.run(PrivateBus.python, ["-c", "import dbusmock, dbus"]).status) == 0 },
        for: "the system-event tests")

    private let bus: PrivateBus
    /// The bus's address: `unix:path=…`.
    public var address: String { bus.address }

    /// The environment that points a host at this bus as its system bus.
    public var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": address] }

    /// Starts a bus in `scratch` and the mocks of `templates` on it (each a `python3 -m dbusmock`
    /// of its own): `logind` (with `InhibitDelayMaxUSec`, which the template leaves out, set to
    /// `delayMax` microseconds) and `upower` (UPower, on AC, its display device without a battery).
    public init(in scratch: Scratch, delayMax: UInt64 = 5_000_000, templates: [String] = ["logind"]) throws {
        guard Self.installed else { throw TestFailure("dbus-daemon and python3-dbusmock are not installed") }
        bus = try PrivateBus(in: scratch, socket: "bus.sock")
        for template in templates {
            try bus.startMock(["--system", "--template", template], environment: environment)
        }
        if templates.contains("logind") {
            guard
                eventually(
                    within: 30, { (try? self.python("print(bool(manager.ListSessions() is not None))")) == "True" })
            else { throw TestFailure("dbusmock's logind did not appear on \(address)") }
            _ = try python(
                "mock.AddProperty('org.freedesktop.login1.Manager', 'InhibitDelayMaxUSec', dbus.UInt64(\(delayMax)))")
        }
        if templates.contains("upower") {
            guard eventually(within: 30, { (try? self.upower("print(upower.GetDisplayDevice())")) != nil }) else {
                throw TestFailure("dbusmock's upower did not appear on \(address)")
            }
        }
    }

    /// Runs `code` in `/usr/bin/python3` with `bus` (this bus), `manager` (logind's Manager) and
    /// `mock` (dbusmock's control interface on it) defined; its output, trimmed.
    @discardableResult
    public func python(_ code: String) throws -> String {
        try bus.python(
            """
            obj = bus.get_object('org.freedesktop.login1', '/org/freedesktop/login1')
            manager = dbus.Interface(obj, 'org.freedesktop.login1.Manager')
            mock = dbus.Interface(obj, 'org.freedesktop.DBus.Mock')
            """, code)
    }

    /// Emits logind's `PrepareForSleep(sleeping)`.
    public func prepareForSleep(_ sleeping: Bool) throws {
        try python(
            "mock.EmitSignal('org.freedesktop.login1.Manager', 'PrepareForSleep', 'b', [\(sleeping ? "True" : "False")])"
        )
    }

    /// Emits logind's `PrepareForShutdown(true)`.
    public func prepareForShutdown() throws {
        try python("mock.EmitSignal('org.freedesktop.login1.Manager', 'PrepareForShutdown', 'b', [True])")
    }

    /// Adds logind session `id` (dbusmock's `AddSession`, on seat0 for uid 1000), `active` on its seat.
    public func addSession(_ id: String, active: Bool = true) throws {
        try python("mock.AddSession('\(id)', 'seat0', dbus.UInt32(1000), 'user', \(active ? "True" : "False"))")
    }

    /// Runs `code` with `session` (session `id`'s Session interface) and `sessionMock` (its mock
    /// interface) defined: `session.Lock()` emits `Lock`, `session.SetLockedHint(True)` changes
    /// `LockedHint` with `PropertiesChanged`.
    @discardableResult
    public func session(_ id: String, _ code: String) throws -> String {
        try python(
            """
            sobj = bus.get_object('org.freedesktop.login1', '/org/freedesktop/login1/session/\(id)')
            session = dbus.Interface(sobj, 'org.freedesktop.login1.Session')
            sessionMock = dbus.Interface(sobj, 'org.freedesktop.DBus.Mock')
            \(code)
            """)
    }

    /// Sets session `id`'s `Active` (false: another session took the seat), with `PropertiesChanged`.
    public func setSessionActive(_ id: String, _ active: Bool) throws {
        let value = active ? "True" : "False"
        try session(id, "sessionMock.UpdateProperties('org.freedesktop.login1.Session', {'Active': \(value)})")
    }

    /// Runs `code` with `upower` (UPower's interface), `upowerProperties` (its properties) and
    /// `display` (its display device's properties) defined: `upowerProperties.Set(…, 'OnBattery',
    /// True)` and `display.Set(…)` emit `PropertiesChanged`, as UPower does.
    @discardableResult
    public func upower(_ code: String) throws -> String {
        try bus.python(
            """
            obj = bus.get_object('org.freedesktop.UPower', '/org/freedesktop/UPower')
            upower = dbus.Interface(obj, 'org.freedesktop.UPower')
            upowerProperties = dbus.Interface(obj, 'org.freedesktop.DBus.Properties')
            display = dbus.Interface(
                bus.get_object('org.freedesktop.UPower', '/org/freedesktop/UPower/devices/DisplayDevice'),
                'org.freedesktop.DBus.Properties')
            """, code)
    }

    /// Sets UPower's `OnBattery`.
    public func setOnBattery(_ onBattery: Bool) throws {
        try upower(
            "upowerProperties.Set('org.freedesktop.UPower', 'OnBattery', dbus.Boolean(\(onBattery ? "True" : "False")))"
        )
    }

    /// Sets a property of UPower's display device (`value` in Python: `dbus.Double(50.0)`).
    public func setDisplayDevice(_ name: String, _ value: String) throws {
        try upower("display.Set('org.freedesktop.UPower.Device', '\(name)', \(value))")
    }

    /// The inhibitors logind holds (`ListInhibitors`): "WHAT WHO MODE" each.
    public func inhibitors() throws -> [String] {
        let text = try python("for i in manager.ListInhibitors(): print(i[0], i[1], i[3])")
        return text.split(separator: "\n").map(String.init)
    }

    /// Stops the mocks and the bus.
    public func stop() { bus.stop() }
}
