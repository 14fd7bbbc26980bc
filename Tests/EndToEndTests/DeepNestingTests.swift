import Foundation
import TestSupport
import Testing

/// JSON nested 1 000 000 levels deep, through every entry point a user or client controls:
/// the parser's depth limit (128) must refuse it with a reason naming the input, and the host
/// must neither crash (a recursive parser would overflow its stack) nor stop serving.
@Suite struct DeepNestingTests {
    static let levels = 1_000_000

    /// `[[[…]]]`, `levels` deep.
    static func deepArray(_ levels: Int = levels) -> String {
        String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
    }

    @Test func controlSocket_refusesTheRequest_andAnswersTheNextOne() throws {
        let host = try RunningHost()
        try host.probe("probe", [])
        // A payload limit above the line's size, so the line reaches the JSON parser.
        try host.start(["--max-payload", "4000000"])
        let socket = try ControlSocket(path: host.control)
        socket.send("{\"command\":\"post\",\"name\":\"deep\",\"payload\":" + Self.deepArray() + "}\n")
        socket.send("{\"command\":\"state\",\"id\":2}\n")
        let refusal = try #require(socket.readReply())
        #expect(refusal["ok"] as? Bool == false)
        #expect((refusal["error"] as? String)?.contains("nesting deeper than 128") == true, "\(refusal)")
        let next = try #require(socket.readReply())
        #expect(next["ok"] as? Bool == true)
        #expect(next["id"] as? Int == 2)
        let stopped = host.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }

    // The refusal says what was wrong ("the push payload is not valid JSON"); naming the file is
    // Sources/host/main.swift's to add (issue 11, "a clear error naming the input").
    @Test func launchNotificationFile_isRefused_beforeTheHostStarts() throws {
        let host = try RunningHost()
        try host.probe("probe", [])
        let file = try host.file("deep.json", "{\"aps\":" + Self.deepArray() + "}")
        // A payload limit above the file's size (where it applies to the file), so the parser sees it.
        let result = try Command.run(
            try Repository.product("host"),
            [
                "--plugins", host.lib, "--launch-notification", file, "--max-payload", "4000000",
                "--control", host.control, "--state-dir", host.stateDirectory,
            ])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(
            result.stderr.contains("the push payload is not valid JSON: byte 134: nesting deeper than 128"),
            "\(result.stderr)")
        #expect(!result.stderr.contains("active with"))
    }

    @Test func configFile_isRefused_namingTheFileAndWhere() throws {
        let host = try RunningHost()
        try host.probe("probe", [])
        let file = try host.file(
            "services.json", "{\"services\":{\"test.probe\":{\"settings\":{\"x\":" + Self.deepArray() + "}}}}")
        let result = try Command.run(
            try Repository.product("host"),
            [
                "--plugins", host.lib, "--config", file, "--control", host.control,
                "--state-dir", host.stateDirectory,
            ])
        #expect(result.status == 2, "\(result.stderr)")
        // Four objects, then the 125th '[' is level 129: byte 167 of the line, column 168.
        #expect(result.stderr.contains("\(file): line 1, column 168: nesting deeper than 128"), "\(result.stderr)")
    }
}
