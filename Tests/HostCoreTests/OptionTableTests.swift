import ServiceABI
import ServiceJSON
import Testing

@testable import HostCore

/// The option tables: one parser and one help for `host`, `host inspect` and `host ctl`.
@Suite struct OptionTableTests {
    private func runError(_ arguments: [String]) -> String? {
        do { _ = try RunOptions.parse(["--plugins", "/tmp"] + arguments) } catch { return error.message }
        return nil
    }

    @Test func equalsAndASeparateValue_areTheSame() throws {
        let split = try RunOptions.parse([
            "--plugins", "/a", "--trace", "t.jsonl", "--max-payload", "100",
            "--launch-scene", "car:car", "--event-timeout", "2",
        ])
        let joined = try RunOptions.parse([
            "--plugins=/a", "--trace=t.jsonl", "--max-payload=100",
            "--launch-scene=car:car", "--event-timeout=2",
        ])
        for options in [split, joined] {
            #expect(options.pluginDirectories == ["/a"] && options.traceFile == "t.jsonl" && options.maxPayload == 100)
            #expect(options.launchScene?.name == "car" && options.launchScene?.role == "car")
            #expect(options.isolation.eventTimeout == 2)
        }
        // Only the first "=" splits: the value keeps the rest.
        #expect(try RunOptions.parse(["--plugins=/a=b"]).pluginDirectories == ["/a=b"])
    }

    @Test func aFlagGivenAValue_isAnError_notTheFlag() {
        #expect(runError(["--strict=no"]) == "--strict is a flag and takes no value (given 'no')")
        #expect(runError(["--safe-mode="]) == "--safe-mode is a flag and takes no value (given '')")
        #expect(throws: UsageError("inspect: --json is a flag and takes no value (given 'yes')")) {
            try InspectCommand.run(["--json=yes", "/nowhere"])
        }
    }

    @Test func unknownOptionsAndCommands_suggestTheNearest() throws {
        #expect(runError(["--stirct"]) == "unknown option --stirct; did you mean '--strict'?")
        #expect(runError(["--frobnicate"]) == "unknown option --frobnicate")
        #expect(
            runError(["--log-level", "debgu"])
                == "--log-level: unknown level 'debgu' (use error, warn, info or debug); did you mean 'debug'?")
        #expect(Usage.unknownCommand("inspet") == UsageError("unknown command 'inspet'; did you mean 'inspect'?"))
        #expect(Usage.unknownCommand("zzz") == UsageError("unknown command 'zzz'"))
        #expect(throws: UsageError("ctl: unknown option --contrl; did you mean '--control'?")) {
            try CtlCommand.parse(["--contrl", "x", "state"], readInput: { _ in [] })
        }
        do {
            _ = try CtlCommand.parse(["memory-warnign"], readInput: { _ in [] })
            Issue.record("an unknown ctl command parsed")
        } catch {
            #expect(error.message.hasPrefix("ctl: unknown command 'memory-warnign'; did you mean 'memory-warning'?"))
        }
    }

    @Test(arguments: [
        (
            ["--event-timeout", "1e300"],
            "--event-timeout: '1e300' is out of range: SECS must be more than 0 and at most 86400 (a day)"
        ),
        (
            ["--shutdown-timeout", "1e19"],
            "--shutdown-timeout: '1e19' is out of range: SECS must be more than 0 and at most 86400 (a day)"
        ),
        (
            ["--fetch-timeout=inf"],
            "--fetch-timeout: 'inf' is out of range: SECS must be more than 0 and at most 86400 (a day)"
        ),
        (["--fetch-timeout=nan"], "--fetch-timeout: 'nan' is not a positive number of seconds"),
        (
            ["--max-payload", "4611686018427387904"],
            "--max-payload: '4611686018427387904' is not a number of bytes from 1 to 16777216"
        ),
        (["--max-payload", "2^62"], "--max-payload: '2^62' is not a number of bytes from 1 to 16777216"),
        (["--max-payload", "0"], "--max-payload: '0' is not a number of bytes from 1 to 16777216"),
    ])
    func numbers_areRangeChecked_withTheRangeInTheError(arguments: [String], message: String) {
        #expect(runError(arguments) == message)
    }

    @Test func theLimits_areAccepted() throws {
        let options = try RunOptions.parse(["--plugins", "/a", "--max-payload", "16777216", "--fetch-timeout", "86400"])
        #expect(options.maxPayload == 16 << 20 && options.fetchTimeout == 86400)
    }

    @Test func help_isReportedByEveryParser() {
        #expect(throws: UsageError.help) { try RunOptions.parse(["--plugins", "/a", "--help"]) }
        #expect(throws: UsageError.help) { try InspectCommand.run(["-h"]) }
        #expect(throws: UsageError.help) { try CtlCommand.parse(["--help"], readInput: { _ in [] }) }
        #expect(throws: UsageError.help) {
            try CtlCommand.parse(["scene", "connect", "--help"], readInput: { _ in [] })
        }
        #expect(UsageError.help.isHelp && !UsageError("x").isHelp)
    }

    @Test func theHelp_listsEveryOptionOfEveryTable() {
        for synopsis in RunOptions.table.options.map(\.synopsis) + InspectCommand.table.options.map(\.synopsis) {
            #expect(
                Usage.text.contains("  " + synopsis + " ") || Usage.text.contains("  " + synopsis + "\n"),
                "\(synopsis) is missing from host --help")
        }
        for synopsis in CtlCommand.table.options.map(\.synopsis) + CtlCommand.pushTable.options.map(\.synopsis)
            + CtlCommand.activityTable.options.map(\.synopsis) + CtlCommand.sceneConnectTable.options.map(\.synopsis)
        {
            #expect(CtlCommand.help.contains("  " + synopsis + " "), "\(synopsis) is missing from host ctl --help")
        }
        #expect(InspectCommand.help.contains("  --state-dir DIR           show the services"))
    }

    @Test func ctl_takesEqualsToo_andDashDashEndsTheOptions() throws {
        let invocation = try CtlCommand.parse(
            [
                "--control=/tmp/h.sock", "--json", "activity", "t", "--url=myapp://x",
                "--user-info", #"{"a":1}"#,
            ], readInput: { _ in [] })
        #expect(invocation.control == "/tmp/h.sock" && invocation.json)
        #expect(invocation.request == ["command": "activity", "type": "t", "url": "myapp://x", "userInfo": ["a": 1]])
        #expect(
            try CtlCommand.parse(["token-error", "--", "--weird"], readInput: { _ in [] }).request
                == ["command": "token-error", "message": "--weird"])
        #expect(
            try CtlCommand.parse(["token-error", "-1"], readInput: { _ in [] }).request
                == ["command": "token-error", "message": "-1"])
        #expect(
            throws: UsageError("ctl activity: --user-info: not valid JSON: byte 0: unexpected 'x', expected a value")
        ) {
            try CtlCommand.parse(["activity", "t", "--user-info=x"], readInput: { _ in [] })
        }
    }

    @Test func ctlPush_takesTheTapActionEitherWay() throws {
        // Sent as the file's text, byte for byte (the host parses it).
        let text = "{ \"aps\" : {}\n}"
        let payload: (String) throws -> [UInt8] = { _ in Array(text.utf8) }
        for arguments in [["push", "--tap=dismiss", "p.json"], ["push", "--tap", "dismiss", "p.json"]] {
            #expect(
                try CtlCommand.parse(arguments, readInput: payload).message.command
                    == ControlMessage.Command(
                        "push", ["payload": .string(text), "tap": true, "action": .string(SH_ACTION_DISMISS)]))
        }
        #expect(
            try CtlCommand.parse(["push", "--tap", "p.json"], readInput: payload).message.command
                == ControlMessage.Command("push", ["payload": .string(text), "tap": true]))
        #expect(
            try CtlCommand.parse(["push", "-"], readInput: payload).message.command
                == ControlMessage.Command("push", ["payload": .string(text)]))
        #expect(throws: UsageError.self) { try CtlCommand.parse(["push", "a", "b"], readInput: payload) }
        #expect(throws: UsageError("ctl push: p.json is not valid UTF-8")) {
            try CtlCommand.parse(["push", "p.json"], readInput: { _ in [0x7B, 0xFF, 0x7D] })
        }
    }
}
