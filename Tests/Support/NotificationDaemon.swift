import Foundation

/// A private session bus for a test (issue 39): a real `dbus-daemon --session` on a socket in
/// the scratch folder, with `org.freedesktop.Notifications` served on it by `python3-dbusmock`'s
/// `notification_daemon` template, which records every call (`GetMethodCalls`). A host is pointed
/// at it with `DBUS_SESSION_BUS_ADDRESS` (``environment``). The packages are ``DBusMock``'s.
public final class NotificationDaemon {
    private let bus: PrivateBus
    /// The bus's address: `unix:path=…`.
    public var address: String { bus.address }

    /// The environment that points a host at this bus as its session bus.
    public var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }

    /// What a desktop's server can do (GNOME Shell's and dunst's include these): dbusmock's
    /// template offers no `actions` unless told.
    public static let desktopCapabilities = ["actions", "body", "body-markup", "persistence", "sound"]

    /// Starts a bus in `scratch` and the notification server's mock on it, answering
    /// `GetCapabilities` with `capabilities`.
    public init(in scratch: Scratch, capabilities: [String] = desktopCapabilities) throws {
        guard DBusMock.installed else { throw TestFailure("dbus-daemon and python3-dbusmock are not installed") }
        bus = try PrivateBus(in: scratch, socket: "session.sock")
        try bus.startMock(
            [
                "--template", "notification_daemon", "--parameters",
                #"{"capabilities": "\#(capabilities.joined(separator: " "))"}"#,
            ], environment: environment)
        guard eventually(within: 30, { (try? self.python("print(server.GetServerInformation()[0])")) == "mock-notify" })
        else { throw TestFailure("dbusmock's notification daemon did not appear on \(address)") }
    }

    /// Runs `code` in `/usr/bin/python3` with `server` (the Notifications interface) and `mock`
    /// (dbusmock's control interface) defined; its output, trimmed.
    @discardableResult
    public func python(_ code: String) throws -> String {
        try bus.python(
            """
            obj = bus.get_object('org.freedesktop.Notifications', '/org/freedesktop/Notifications')
            server = dbus.Interface(obj, 'org.freedesktop.Notifications')
            mock = dbus.Interface(obj, 'org.freedesktop.DBus.Mock')
            """, code)
    }

    /// From now on the server answers `GetServerInformation` only once `gate` exists (as a server
    /// being activated answers late); the mock answers nothing else meanwhile.
    public func answerServerInformation(once gate: String) throws {
        try python(
            """
            mock.AddMethod('org.freedesktop.Notifications', 'GetServerInformation', '', 'ssss',
                'import os, time\\nwhile not os.path.exists("\(gate)"): time.sleep(0.02)\\n'
                'ret = ("mock-notify", "test vendor", "1.0", "1.1")')
            """)
    }

    /// One `Notify` call as the server received it.
    public struct Notify: Equatable, Sendable {
        public var appName: String
        public var replacesID: UInt32
        public var summary: String
        public var body: String
        /// The actions as sent: key, label, key, label…
        public var actions: [String]
        /// The hints, their values as text ("1" for true).
        public var hints: [String: String]
        public var timeout: Int32
    }

    /// Every `Notify` call so far, in order. The mock numbers notifications from 1, so the
    /// n-th call's notification is id n.
    public func notifyCalls() throws -> [Notify] {
        let text = try python(
            """
            calls = [list(c[1]) for c in mock.GetMethodCalls('Notify')]
            def hint(v):
                return ('1' if v else '0') if isinstance(v, dbus.Boolean) else str(v)
            print(json.dumps([[str(a[0]), int(a[1]), str(a[3]), str(a[4]), [str(x) for x in a[5]],
                              {str(k): hint(v) for k, v in a[6].items()}, int(a[7])] for a in calls]))
            """)
        guard let rows = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[Any]] else {
            throw TestFailure("unexpected GetMethodCalls output: \(text)")
        }
        return rows.map { row in
            Notify(
                appName: row[0] as? String ?? "", replacesID: UInt32(row[1] as? Int ?? -1),
                summary: row[2] as? String ?? "", body: row[3] as? String ?? "", actions: row[4] as? [String] ?? [],
                hints: row[5] as? [String: String] ?? [:], timeout: Int32(row[6] as? Int ?? 0))
        }
    }

    /// The user clicked action `key` of notification `id` ("default": the notification itself).
    public func invokeAction(_ id: UInt32, _ key: String) throws {
        try python(
            "mock.EmitSignal('org.freedesktop.Notifications', 'ActionInvoked', 'us', [dbus.UInt32(\(id)), '\(key)'])")
    }

    /// Notification `id` closed for `reason` (2: dismissed by the user).
    public func close(_ id: UInt32, reason: UInt32) throws {
        try python(
            "mock.EmitSignal('org.freedesktop.Notifications', 'NotificationClosed', 'uu',"
                + " [dbus.UInt32(\(id)), dbus.UInt32(\(reason))])")
    }

    /// Stops the mock and the bus.
    public func stop() { bus.stop() }
}
