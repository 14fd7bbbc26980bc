import Foundation
import TestSupport
import Testing

/// The command line of the real `host`: one set of parsing rules for every command.
@Suite struct CommandLineTests {
    private func host(_ arguments: [String]) throws -> CommandResult {
        try Command.run(try Repository.product("host"), arguments)
    }

    @Test(arguments: [
        (["--plugins", "/tmp", "--strict=no"], "host: --strict is a flag and takes no value (given 'no')"),
        (["inspet", "/tmp"], "host: unknown command 'inspet'; did you mean 'inspect'?"),
        (["--plugins", "/tmp", "--stirct"], "host: unknown option --stirct; did you mean '--strict'?"),
        (
            ["--plugins", "/tmp", "--event-timeout", "1e300"],
            "host: --event-timeout: '1e300' is out of range: SECS must be more than 0 and at most 86400 (a day)"
        ),
        (
            ["--plugins", "/tmp", "--max-payload", "2^62"],
            "host: --max-payload: '2^62' is not a number of bytes from 1 to 16777216"
        ),
        (
            ["--plugins", "/tmp", "--max-payload=4611686018427387904"],
            "host: --max-payload: '4611686018427387904' is not a number of bytes from 1 to 16777216"
        ),
        (
            ["--plugins", "/tmp", "--shutdown-timeout", "1e19"],
            "host: --shutdown-timeout: '1e19' is out of range: SECS must be more than 0 and at most 86400 (a day)"
        ),
        (["ctl", "stat"], "host: ctl: unknown command 'stat'; did you mean 'state'?"),
        (["ctl", "--json=yes", "state"], "host: ctl: --json is a flag and takes no value (given 'yes')"),
        (["ctl", "--timeout", "0", "state"], "host: ctl: --timeout: '0' is not a positive number of seconds"),
        (["inspect", "--jsn", "/tmp"], "host: inspect: unknown option --jsn; did you mean '--json'?"),
    ])
    func badCommandLines_exitTwo_namingTheArgument(arguments: [String], message: String) throws {
        let result = try host(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.hasPrefix(message + "\n"), "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test(arguments: [
        (["ctl", "--help"], "  --control PATH "),
        (["ctl", "scene", "connect", "-h"], "  --activity TYPE[,URL] "),
        (["inspect", "--help"], "  --state-dir DIR "),
        (["--plugins", "/tmp", "--help"], "  --safe-mode "),
    ])
    func help_printsTheCommandsOptions_andExitsZero(arguments: [String], expected: String) throws {
        let result = try host(arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        #expect(result.stdout.contains(expected), "\(arguments): \(result.stdout)")
    }

    @Test func equalsForms_runAHost_andDriveIt() throws {
        let running = try RunningHost()
        try running.probe(
            "a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_OPEN_URL)"])
        try running.start(["--log-level=debug", "--event-timeout=5", "--first-launch=always"])
        let state = try host(["ctl", "--control=\(running.control)", "state"])
        #expect(state.status == 0, "\(state.stderr)")
        #expect(state.stdout.contains("state: active"))
        let open = try host(["ctl", "--control=\(running.control)", "--json", "open", "myapp://item/1"])
        #expect(open.status == 0, "\(open.stderr)")
        let reply = try JSONSerialization.jsonObject(with: Data(open.stdout.utf8)) as? [String: Any]
        #expect(reply?["handledBy"] as? String == "test.a" && reply?["ok"] as? Bool == true)
        let stopped = running.stop()
        #expect(stopped.status == 0)
        #expect(stopped.records.contains { $0.level == "debug" }, "--log-level=debug took effect")
    }
}
