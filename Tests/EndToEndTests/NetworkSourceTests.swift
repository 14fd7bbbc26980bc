import Foundation
import TestSupport
import Testing

/// The network source (issue 38, item 6): the real `host` binary in a network namespace of its
/// own (`ip netns exec`) with a veth pair whose default route the test adds and removes (root),
/// the bundled Logger (which logs every notification) and OfflineQueue (which flushes when the
/// network comes back).
@Suite(.timeLimit(.minutes(10)), .enabled(if: getuid() == 0, "a network namespace needs root"))
struct NetworkSourceTests {
    /// A network namespace with a veth pair (veth0 10.77.0.1/24, up), removed at deinit.
    final class Namespace {
        let name = "sh-net-\(UUID().uuidString.prefix(8))"

        init() throws {
            try ip(["netns", "add", name])
            try ip(["-n", name, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1"])
            try ip(["-n", name, "addr", "add", "10.77.0.1/24", "dev", "veth0"])
            try ip(["-n", name, "link", "set", "veth0", "up"])
            try ip(["-n", name, "link", "set", "veth1", "up"])
        }

        func ip(_ arguments: [String]) throws {
            let result = try Command.run("/usr/sbin/ip", arguments)
            guard result.status == 0 else { throw TestFailure("ip \(arguments): \(result.stderr)") }
        }

        func addDefaultRoute() throws { try ip(["-n", name, "route", "add", "default", "via", "10.77.0.2"]) }
        func removeDefaultRoute() throws { try ip(["-n", name, "route", "del", "default"]) }

        deinit { _ = try? Command.run("/usr/sbin/ip", ["netns", "del", name]) }
    }

    /// The Logger's lines for `network.changed` payloads, in order.
    static func changes(_ host: RunningHost, _ records: [LogRecord]) -> [String] {
        records.messages(from: "dev.servicehost.logger").compactMap { message in
            guard message.hasPrefix("notification network.changed from host: ") else { return nil }
            return String(message.dropFirst("notification network.changed from host: ".count))
        }
    }

    @Test(arguments: ["in-process", "process"])
    func aDefaultRouteAddedAndRemoved_isPosted_andTheQueueFlushesWhenItComesBack(isolation: String) throws {
        let namespace = try Namespace()
        let host = try RunningHost()
        for name in ["Logger", "OfflineQueue"] {
            try host.scratch.copy(try Repository.product("lib\(name).so"), to: "lib/lib\(name).so")
        }
        // Reads the current state while the app launches (didBecomeActive: before the sources start).
        try host.probe(
            "asker", ["PROBE_ID=\"test.asker\"", "PROBE_ASK_ON_KIND=3", "PROBE_ASK_NAME=\"network.current\""])
        let wrapper = try host.scratch.script(
            "host-in-netns",
            """
            #!/bin/sh
            exec /usr/sbin/ip netns exec \(namespace.name) "\(try Repository.product("host"))" "$@"
            """)
        try host.start(["--isolation", isolation], executable: wrapper)
        let posted = { host.events.filter { $0 == "notification dev.servicehost.logger" }.count }
        try host.ctl("post", "queue.enqueue", #"{"text":"hi"}"#)
        #expect(eventually { posted() == 1 })
        try namespace.addDefaultRoute()
        #expect(eventually { posted() == 2 })  // the enqueue, then the route
        let current = try host.ctlJSON("request", "network.current")
        #expect(current.status == 0)
        let result = current.reply["result"] as? [String: Any]
        #expect(result?["online"] as? Bool == true && result?["interface"] as? String == "veth0", "\(current.reply)")
        try namespace.removeDefaultRoute()
        #expect(eventually { posted() == 3 })
        #expect(host.stop().status == 0)

        let records = host.records
        #expect(
            Self.changes(host, records) == [
                #"{"interface":"veth0","online":true}"#, #"{"interface":null,"online":false}"#,
            ])
        #expect(
            records.named(.networkChanged).map { "\($0.string("online") ?? "") \($0.string("interface") ?? "")" } == [
                "true veth0", "false ",
            ])
        // The state at start (offline: no default route yet) is in the source's on line, not posted.
        #expect(
            records.named(.sourceOn).first { $0.string("source") == "network" }?.string("reason")
                == "rtnetlink (offline)")
        // The launch's request waited for the source, then had the state at start.
        #expect(
            records.filter { $0.source == "test.asker" }.map(\.message).filter { $0.contains(": reply ") } == [
                #"probe test.asker: reply 0 {"interface":null,"online":false}"#
            ])
        let queue = records.messages(from: "dev.servicehost.offline-queue")
        #expect(queue.contains { $0.hasSuffix("network reachable: flushing") }, "\(queue)")
    }

    @Test func turnedOff_nothingIsPosted() throws {
        let host = try RunningHost()
        try host.scratch.copy(try Repository.product("libLogger.so"), to: "lib/libLogger.so")
        try host.start(["--source", "network=off"])
        let unanswered = try host.ctlJSON("request", "network.current")
        let records = host.stop().records
        #expect(records.named(.networkChanged).isEmpty)
        let off = records.named(.sourceOff).filter { $0.string("source") == "network" }
        #expect(off.count == 1 && off.first?.string("reason")?.hasPrefix("turned off") == true)
        #expect(
            unanswered.reply["note"] as? String == "the network source is off: turned off (--source network=off)",
            "\(unanswered.reply)")
        #expect(unanswered.status == 3)
    }
}
