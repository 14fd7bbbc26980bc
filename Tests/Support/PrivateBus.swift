import Foundation

/// A private D-Bus for one test: a real `dbus-daemon` with the session configuration (everyone
/// may own and call anything) on a socket in the scratch folder, a child of the test, and the
/// `python3-dbusmock` processes serving on it. ``DBusMock`` (the system bus's logind and UPower)
/// and ``NotificationDaemon`` (the session bus's notification server) are built on it.
final class PrivateBus {
    static let daemon = "/usr/bin/dbus-daemon"
    /// dbusmock runs under `/usr/bin/python3` (the `python3` on PATH may be another interpreter).
    static let python = "/usr/bin/python3"

    /// The bus's address: `unix:path=…`.
    let address: String
    private var processes: [Command.Running] = []

    /// Starts `dbus-daemon` on `socket` (a file name in `scratch`).
    init(in scratch: Scratch, socket name: String) throws {
        let socket = scratch.file(name)
        address = "unix:path=\(socket)"
        processes.append(
            try Command.start(Self.daemon, ["--session", "--address=\(address)", "--nofork", "--nopidfile"]))
        guard eventually(within: 20, { FileManager.default.fileExists(atPath: socket) }) else {
            stop()
            throw TestFailure("dbus-daemon did not listen on \(socket)")
        }
    }

    /// Starts `python3 -m dbusmock ARGUMENTS` on this bus (`environment` names it as the bus the
    /// mock's `--system` or session flag means).
    func startMock(_ arguments: [String], environment: [String: String]) throws {
        processes.append(try Command.start(Self.python, ["-m", "dbusmock"] + arguments, environment: environment))
    }

    /// Runs `code` in `/usr/bin/python3` after `import dbus, json`, with `bus` connected to this
    /// bus and `prelude`'s names defined; its output, trimmed.
    func python(_ prelude: String, _ code: String) throws -> String {
        let script = """
            import dbus, json
            bus = dbus.bus.BusConnection('\(address)')
            \(prelude)
            \(code)
            """
        let result = try Command.run(Self.python, ["-c", script])
        guard result.status == 0 else { throw TestFailure("python against the bus failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the mocks and the bus (SIGKILL: children of the test inherit its blocked SIGTERM).
    func stop() {
        for process in processes.reversed() {
            process.send(SIGKILL)
            _ = process.wait()
        }
        processes = []
    }

    deinit { stop() }
}
