import Foundation
import TestSupport
import Testing

/// A system source written as a plugin (issue 38, extension `dev.servicehost.sources/1`): the C
/// fixture `ignition_source.c` watches a FIFO the test writes to on the host's main loop, moves
/// the app, posts `ignition.changed` and sets `ignition.current`, which the host answers; the
/// real `host` binary with a probe that logs every lifecycle event.
@Suite(.timeLimit(.minutes(10)))
struct PluginSourceTests {
    /// The fixture's own lines ("ignition move 0").
    static func lines(_ records: [LogRecord]) -> [String] {
        records.filter { $0.source == "test.ignition" && $0.event == nil }.map(\.message)
    }

    /// A host with the fixture reading `fifo`, probe a and the Logger.
    static func host(_ extra: [String] = []) throws -> (RunningHost, String) {
        let host = try RunningHost()
        let fifo = host.scratch.file("ignition")
        guard mkfifo(fifo, 0o600) == 0 else { throw TestFailure("mkfifo: \(errno)") }
        try Command.compileC(
            Repository.fixture("CPlugins/ignition_source.c"), to: host.lib + "/ignition.so",
            defines: ["IGNITION_FIFO=\"\(fifo)\""])
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.scratch.copy(try Repository.product("libLogger.so"), to: "lib/libLogger.so")
        try host.start(extra)
        return (host, fifo)
    }

    static func write(_ text: String, to fifo: String) throws {
        guard let handle = FileHandle(forWritingAtPath: fifo) else { throw TestFailure("\(fifo) cannot be opened") }
        handle.write(Data(text.utf8))
        handle.closeFile()
    }

    static func state(_ host: RunningHost, _ state: String) -> Bool {
        eventually { (try? host.ctl("state").stdout.contains("state: \(state)")) == true }
    }

    @Test func aPluginSource_movesTheApp_inUIKitsOrder_andItsStateIsReadable() throws {
        let (host, fifo) = try Self.host()
        try Self.write("0", to: fifo)
        #expect(Self.state(host, "background"))
        let current = try host.ctlJSON("request", "ignition.current")
        #expect((current.reply["result"] as? [String: Any])?["on"] as? Bool == false, "\(current.reply)")
        try Self.write("1", to: fifo)
        #expect(Self.state(host, "active"))
        // Resigns, then stops watching (one read: the FIFO gives both bytes at once).
        try Self.write("ru", to: fifo)
        #expect(Self.state(host, "inactive"))
        #expect(host.stop().status == 0)

        let records = host.records
        #expect(
            Self.lines(records) == [
                "ignition watch 1", "ignition state 0", "ignition move 0", "ignition state 0", "ignition move 0",
                "ignition move 0", "ignition unwatch 0",
            ])
        // The launch's didBecomeActive, each move in UIKit's order, then SIGTERM's didEnterBackground.
        let kinds = records.probe(3, 4, 5, 6).filter { $0.source == "test.a" }.map {
            $0.message.dropFirst("probe test.a: event ".count).prefix { $0.isNumber }
        }
        #expect(kinds == ["3", "4", "5", "6", "3", "4", "5"])
        let posted = records.messages(from: "dev.servicehost.logger").filter {
            $0.hasPrefix("notification ignition.changed from test.ignition: ")
        }
        #expect(
            posted == [
                #"notification ignition.changed from test.ignition: {"on":false}"#,
                #"notification ignition.changed from test.ignition: {"on":true}"#,
            ])
    }

    @Test func inAWorker_theExtensionIsUnsupported() throws {
        let (host, _) = try Self.host(["--isolation", "process"])
        let records = host.stop().records
        #expect(Self.lines(records) == ["ignition watch 0", "ignition state -2"])
    }
}
