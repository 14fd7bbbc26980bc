import Foundation
import TestSupport
import Testing

/// The control socket's protocol, permissions and robustness.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct ControlChannelTests {
    @Test func pipelinedRequests_areAnsweredInOrder_withTheirIDs() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start()
        let socket = try ControlSocket(path: host.control)
        socket.send((1...50).map { #"{"id":\#($0),"command":"\#($0 % 2 == 0 ? "state" : "list")"}"# + "\n" }.joined())
        for id in 1...50 {
            let reply = socket.readReply()
            #expect(reply?["id"] as? Int == id)
            #expect(reply?["ok"] as? Bool == true)
        }
    }

    /// Two clients pipelining at once, their lines cut at arbitrary bytes and interleaved:
    /// the host reads both on one thread, and each gets exactly its replies, in its order.
    /// A run of `reload`s read together is carried out once (issue 36, item 5), and each of
    /// them still gets its own reply with its own id, in order; a request between two runs
    /// keeps them apart.
    @Test func pipelinedReloads_coalesceIntoOneReload_eachAnsweredWithItsID() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start()
        let socket = try ControlSocket(path: host.control)
        let ids = ["r1", "r2", "r3", "s4", "r5", "r6"]
        socket.send(
            ids.map { #"{"id":"\#($0)","command":"\#($0.hasPrefix("r") ? "reload" : "state")"}"# + "\n" }.joined())
        let replies = ids.map { _ in socket.readReply() }
        #expect(replies.map { $0?["id"] as? String } == ids)
        #expect(replies.map { $0?["ok"] as? Bool } == ids.map { _ in true })
        #expect(replies[3]?["state"] as? String == "active")
        let records = host.stop().records
        #expect(records.named(.reloadDone).count == 2, "\(records.text.suffix(3000))")
    }

    @Test func twoClientsPipeliningInterleaved_eachGetsItsRepliesInItsOwnOrder() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start()
        let commands = ["state", "list", "memory-warning", "nope"]
        let clients = try ["a", "b"].map { name in
            let bytes = (1...200).map {
                #"{"id":"\#(name)\#($0)","command":"\#(commands[$0 % commands.count])"}"# + "\n"
            }
            return (name: name, socket: try ControlSocket(path: host.control), bytes: Array(bytes.joined().utf8))
        }
        // Chunks of 1 to 97 bytes, alternating clients, none of them reading yet.
        var offsets = [0, 0]
        var size = 1
        while offsets[0] < clients[0].bytes.count || offsets[1] < clients[1].bytes.count {
            for (index, client) in clients.enumerated() where offsets[index] < client.bytes.count {
                let end = min(offsets[index] + size, client.bytes.count)
                client.socket.send(Array(client.bytes[offsets[index]..<end]))
                offsets[index] = end
                size = size % 97 + 13
            }
        }
        for client in clients {
            for id in 1...200 {
                let reply = client.socket.readReply()
                #expect(reply?["id"] as? String == "\(client.name)\(id)")
                // The unknown command is refused; the others are carried out.
                #expect(reply?["ok"] as? Bool == (id % commands.count != 3), "\(String(describing: reply))")
            }
        }
    }

    @Test func badInput_getsAnErrorReply_andTheConnectionStaysUsable() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start(["--max-payload", "100"])
        let socket = try ControlSocket(path: host.control)
        let cases: [([UInt8], String)] = [
            (Array("{not json\n".utf8), "malformed JSON"),
            (Array(#"{"command":"fly"}"#.utf8) + [10], #"unknown command "fly""#),
            (Array(#"{"id":7}"#.utf8) + [10], #"missing "command""#),
            (Array(#"["state"]"#.utf8) + [10], "a request must be a JSON object"),
            (
                Array(
                    (#"{"command":"post","name":"n","payload":""# + String(repeating: "x", count: 200) + "\"}\n").utf8),
                "payload is 202 bytes, over the limit of 100 (--max-payload)"
            ),
            (Array(#"{"command":"open","url":"no scheme here"}"#.utf8) + [10], "invalid URL"),
            (Array(#"{"command":"token","hex":"abc"}"#.utf8) + [10], "invalid token"),
            (Array(#"{"command":"state","x":""#.utf8) + [0xC3, 0x28] + Array("\"}\n".utf8), "not valid UTF-8"),
            (Array(#"{"command":"push","payload":[1]}"#.utf8) + [10], "the push payload must be a JSON object"),
        ]
        for (bytes, expected) in cases {
            socket.send(bytes)
            let reply = socket.readReply()
            #expect(reply?["ok"] as? Bool == false)
            #expect(
                (reply?["error"] as? String)?.contains(expected) == true, "\(expected): \(String(describing: reply))")
            socket.send(#"{"command":"state"}"# + "\n")
            #expect(socket.readReply()?["state"] as? String == "active")
        }
        #expect(
            try ControlSocket(path: host.control).readReplyAfter(#"{"command":"state","id":"x"}"#)?["id"] as? String
                == "x")
    }

    @Test func aLineWithoutEnd_tooLongLines_andVanishingClients_leaveTheHostServing() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start(["--max-payload", "1000"])

        let unterminated = try ControlSocket(path: host.control)
        unterminated.send(#"{"command":"state"}"#)
        unterminated.shutdownWrite()
        #expect((unterminated.readReply()?["error"] as? String)?.contains("no newline") == true)
        #expect(unterminated.readReply() == nil)  // then closed

        let long = try ControlSocket(path: host.control)
        long.send(String(repeating: "x", count: 10_000))
        #expect((long.readReply()?["error"] as? String)?.contains("longer than 6096 bytes") == true)
        #expect(long.readReply() == nil)

        let vanishing = try ControlSocket(path: host.control)
        vanishing.send(#"{"command":"sta"#)
        _ = consume vanishing

        #expect(try host.ctl("state").stdout.contains("state: active"))
    }

    @Test func socketIsPrivate_aSecondHostIsRefused_andAStaleSocketIsReplaced() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start()
        var status = stat()
        #expect(stat(host.control, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)

        let second = try Command.run(
            try Repository.product("host"),
            [
                "--plugins", host.lib, "--control", host.control,
                "--state-dir", host.scratch.file("state2"),
                "--log-format", "json",
            ])
        #expect(second.status == 2)
        // Refused, naming the socket the first host serves (a second host that started would never exit).
        #expect(
            second.records.named(.controlUnavailable).map { [$0.level, $0.source, $0.string("path")] }
                == [["error", "host", host.control]], "\(second.stderr)")

        host.process?.send(SIGKILL)
        _ = host.process?.wait()
        #expect(FileManager.default.fileExists(atPath: host.control))  // left behind by kill -9
        try host.start()
        #expect(try host.ctl("state").status == 0)
    }

    @Test func requestsDuringLaunch_waitAndKeepTheirOrder() throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"", "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_OPEN_URL)",
                "PROBE_SLEEP_KIND=SH_EVENT_WILL_FINISH_LAUNCHING", "PROBE_SLEEP_MS=1500",
            ])
        try host.start(wait: false)
        let socket = try ControlSocket.connecting(to: host.control)
        socket.send(
            [
                #"{"command":"open","url":"myapp://1"}"#, #"{"command":"open","url":"myapp://2"}"#,
                #"{"command":"state"}"#,
            ].map { $0 + "\n" }.joined())
        #expect(socket.readReply()?["handledBy"] as? String == "test.a")
        #expect(socket.readReply()?["handledBy"] as? String == "test.a")
        #expect(socket.readReply()?["state"] as? String == "active")
        _ = host.stop()
        #expect(
            Array(host.events.prefix(5)) == [
                "willFinishLaunching test.a", "didFinishLaunching test.a",
                "didBecomeActive test.a", "openURL test.a", "openURL test.a",
            ])
    }

    @Test func ctlTerminate_shutsDownInReverse_andExitsZero() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.start()
        let result = try host.ctl("terminate")
        #expect(result.status == 0)
        #expect(result.stdout.contains("state: notRunning"))
        #expect(host.process!.wait().status == 0)
        #expect(
            Array(host.events.suffix(6)) == [
                "willResignActive test.b", "willResignActive test.a",
                "didEnterBackground test.b", "didEnterBackground test.a",
                "willTerminate test.b", "willTerminate test.a",
            ])
        #expect(!FileManager.default.fileExists(atPath: host.control))
    }

    @Test func ctlWithoutAHost_saysHowToStartOne() throws {
        let scratch = try Scratch()
        let result = try Command.run(
            try Repository.product("host"), ["ctl", "--control", scratch.file("none.sock"), "state"])
        #expect(result.status == 1)
        #expect(result.stderr.contains(scratch.file("none.sock")))  // the error names the socket
    }
}

extension ControlSocket {
    /// Sends one request line and reads its reply.
    func readReplyAfter(_ request: String) -> [String: Any]? {
        send(request + "\n")
        return readReply()
    }
}

extension ControlChannelTests {
    /// Connections are accepted from the `active with` line on, or as soon as the main thread
    /// is stuck, whichever comes first: a service stuck in its launch still gets `state`
    /// answered, from the snapshot, naming it.
    @Test func aServiceStuckInItsLaunch_stillGetsStateAnswered() throws {
        let host = try RunningHost()
        try host.probe("hang", ["PROBE_ID=\"test.hang\"", "PROBE_HANG_KIND=SH_EVENT_DID_FINISH_LAUNCHING"])
        try host.start(["--event-timeout", "1"], wait: false)
        // Connected before the launch gets stuck (or while it is): taken and answered then.
        let socket = try ControlSocket.connecting(to: host.control)
        socket.send(#"{"command":"state"}"# + "\n")
        let state = socket.readReply() ?? [:]
        let result = host.signal(SIGKILL)
        let stuck = state["stuck"] as? [String: Any]
        #expect(
            stuck?["service"] as? String == "test.hang" && stuck?["event"] as? String == "didFinishLaunching",
            "\(state)")
        #expect(state["snapshot"] as? Bool == true)
        #expect(result.records.named(.hostReady).isEmpty)
        #expect(
            result.records.named(.serviceStuck).map { $0.string("service") } == ["test.hang"], "\(result.records.text)")
    }

    /// A host whose main thread a service holds answers no request that needs it: `host ctl`
    /// gives up after `--timeout`, naming the socket (exit 1), instead of waiting forever; past
    /// the event's deadline the host answers `state` from its snapshot, naming the service.
    @Test func ctlGivesUpAfterItsTimeout_whenTheHostIsStuck() throws {
        let host = try RunningHost()
        try host.probe(
            "hang",
            [
                "PROBE_ID=\"test.hang\"",
                "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_MEMORY_WARNING)",
                "PROBE_HANG_KIND=SH_EVENT_DID_RECEIVE_MEMORY_WARNING",
            ])
        try host.start(["--event-timeout", "1"])
        let stuck = try host.ctl("--timeout", "0.3", "memory-warning")
        #expect(stuck.status == 1, "\(stuck.stderr)")
        #expect(stuck.stderr.contains(host.control))  // the error names the socket
        let state = try host.ctlJSON("state")
        #expect((state.reply["stuck"] as? [String: Any])?["service"] as? String == "test.hang", "\(state.reply)")
        _ = host.signal(SIGKILL)
    }
}
