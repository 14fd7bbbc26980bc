import ServiceABI
import ServiceJSON
import TestSupport
import Testing

@testable import HostCore

/// The control protocol's typed requests and replies: one encoding and one decoding each,
/// and the bytes the README promises.
@Suite struct ControlProtocolTests {
    /// What `host ctl` writes for each command line is read by the host as that command.
    @Test func ctlMessages_areReadByTheHost_asTheCommandTheyName() throws {
        let lines: [[String]] = [
            ["state"], ["list"], ["list", "--all"], ["reload"], ["memory-warning"], ["activate"], ["resign"],
            ["background"], ["foreground"],
            ["terminate"],
            ["push", "--tap=reply", "p.json"], ["push", "-"], ["open", "myapp://item/42"], ["action", "compose"],
            ["activity", "com.example.read", "--url", "https://e.com/1", "--user-info", #"{"n":1}"#],
            ["token", "00ff"], ["token-error", "no network"], ["post", "queue.enqueue", #"{"text":"hello"}"#],
            ["post", "ping"],
            ["request", "queue.count"], ["authorization"], ["authorization", "denied"],
            ["scene", "list"], ["scene", "resign", "main"],
            ["scene", "connect", "car", "--role", "car", "--url", "myapp://drive"],
            ["scene", "connect", "tv", "--activity", "com.example.read,https://e.com/1"],
            ["scene", "open", "car", "myapp://x"],
            ["scene", "activity", "car", "com.example.read", "--user-info", #"{"n":1}"#],
            ["stats"], ["stats", "a.b"], ["blame"], ["service", "restart", "a.b", "--force"], ["watch", "--logs"],
            ["deploy", "/srv/set", "--probation", "5"], ["deploy", "status"], ["deploy", "--cancel"], ["rollback"],
            ["configure", "a.b", #"{"level":"debug"}"#],
        ]
        let payload: (String) throws -> [UInt8] = { _ in Array(#"{"aps":{"alert":"hi"}}"#.utf8) }
        for line in lines {
            let message = try CtlCommand.parse(line, readInput: payload).message
            let request = try ControlRequest.parse(Array(message.json.serialized.utf8), maxPayload: 65536).get()
            #expect(request.spec.name == line[0], "\(line)")
        }
        // Every command has a line above.
        #expect(Set(lines.map(\.[0])) == Set(ControlCommands.names))
        let push = ControlRequest.parse(
            Array(#"{"command":"push","payload":{"aps":{}},"tap":true}"#.utf8), maxPayload: 65536)
        guard case .push(_, let action) = try push.get().command else { throw TestFailure("not a push") }
        #expect(action == SH_ACTION_DEFAULT)
        let all = try ControlRequest.parse(Array(#"{"command":"list","all":true}"#.utf8), maxPayload: 65536).get()
        guard case .operate(.listAll) = all.command else { throw TestFailure("not list --all") }
        // deploy: a relative DIR is sent absolute; the probation is range-checked on both sides.
        let deploy = try CtlCommand.parse(["deploy", "set"], readInput: payload).message
        let directory = try #require(deploy.json["directory"]?.stringValue)
        #expect(directory.hasPrefix("/") && directory.hasSuffix("/set"))
        let parsed = try ControlRequest.parse(Array(deploy.json.serialized.utf8), maxPayload: 65536).get()
        guard case .operate(.deploy(directory, 30)) = parsed.command else { throw TestFailure("not a deploy") }
        for seconds in ["0", "-1", "86401", "x"] {
            #expect(throws: UsageError.self) {
                try CtlCommand.parse(["deploy", "/s", "--probation", seconds], readInput: payload)
            }
        }
        for member in [#""seconds":0"#, #""seconds":86401"#, #""seconds":"5""#] {
            let text = #"{"command":"deploy","directory":"/s","# + member + "}"
            guard case .failure = ControlRequest.parse(Array(text.utf8), maxPayload: 65536) else {
                throw TestFailure("accepted \(text)")
            }
        }
    }

    @Test func requests_areTheREADMEsBytes() throws {
        #expect(
            ControlMessage(ControlMessage.Command("open", ["url": "myapp://item/42"]), id: 1).json.serialized
                == #"{"command":"open","id":1,"url":"myapp://item/42"}"#)
        var scene = try CtlCommand.parse(
            ["scene", "connect", "car", "--role", "car", "--url", "myapp://drive/work"], readInput: { _ in [] }
        )
        .message
        scene.id = 4
        #expect(
            scene.json.serialized
                == #"{"action":"connect","command":"scene","id":4,"name":"car","role":"car","urls":["myapp://drive/work"]}"#
        )
    }

    @Test func badRequests_nameTheCommandAndTheMember() {
        func error(_ object: [String: JSONValue]) -> String? {
            let line = Array(JSONValue.object(object).serialized.utf8)
            if case .failure(let refusal) = line.withUnsafeBytes({ ControlRequest.parseFully($0, maxPayload: 65536) }) {
                return refusal.message
            }
            return nil
        }
        #expect(error(["command": "push", "payload": [:], "tap": "yes"]) == #"push: "tap" must be true or false"#)
        #expect(error(["command": "open"]) == #"open: missing "url""#)
        #expect(error(["command": "open", "url": .null]) == #"open: missing "url""#)
        #expect(error(["command": "token", "hex": 1]) == #"token: "hex" must be a string"#)
        #expect(error(["id": 3])?.hasPrefix(#"missing "command" (one of state, list, reload, activate"#) == true)
        #expect(
            error(["command": "scene", "action": "connect", "name": "c", "urls": ["a", 1]])
                == #"scene: each of "urls" must be a string"#)
    }

    /// A list of strings is written from a memo of its text while it is the same list: a
    /// copy changed in place (new storage) and a list freed and made again are written anew.
    @Test func replies_writeTheirCurrentReceivers_afterAnotherListWasWritten() {
        func written(_ receivers: [String]) -> String {
            let reply = ControlReply(ok: true, .delivery(ControlReply.Delivery(receivers: receivers)))
            var out: [UInt8] = []
            reply.write(to: &out)
            return String(decoding: out, as: UTF8.self)
        }
        let first = ["a.b", "c.d", "e\"f"]
        #expect(written(first) == #"{"ok":true,"receivers":["a.b","c.d","e\"f"]}"#)
        #expect(written(first) == #"{"ok":true,"receivers":["a.b","c.d","e\"f"]}"#)
        var changed = first
        changed[1] = "x.y"
        #expect(written(changed) == #"{"ok":true,"receivers":["a.b","x.y","e\"f"]}"#)
        #expect(written(first) == #"{"ok":true,"receivers":["a.b","c.d","e\"f"]}"#)
        for index in 0..<50 {
            #expect(written(["s\(index)", "t"]) == #"{"ok":true,"receivers":["s"# + "\(index)" + #"","t"]}"#)
        }
    }

    /// One reply of each family, every member set.
    static let families: [ControlReply] = {
        let present = ControlReply.Delivery(
            event: "willPresentNotification", handled: true, receivers: ["a.b", "c.d"], handledBy: "a.b",
            answers: ["c.d": "sound", "a.b": "banner"], result: ["z": 1, "a": [true, .null, 1e300]],
            presentation: ["banner"], note: "quote \" backslash \\ newline \n tab \t bell \u{7} é 🚗")
        let service = ControlReply.Service(
            id: "a.b", name: "A \"quoted\"", version: "1.0.0", path: "/p/a.so", priority: -3, state: "running",
            events: ["openURL"], urls: ["myapp"], activities: ["x"], subscriptions: ["*"], sceneRoles: ["main"],
            answers: ["geo.locate"], lastError: "boom", retiredCopies: 2, activation: "lazy",
            activatedBy: "URL myapp://x")
        var isolated = service
        isolated.isolation = ["isolation": "process", "stuckIn": "openURL", "restarts": 2]
        let car = ControlReply.SceneEntry(
            name: "car", role: "car", state: "foregroundActive", configuration: "car", configuredBy: nil,
            settings: ["template": "map"], savedState: true)
        var stuck = ControlReply(
            ok: true, id: ["n": -1.5],
            .status(
                ControlReply.Status(
                    state: "active", serviceCount: 3, deviceToken: "00ff",
                    busy: ControlReply.Call(service: "a.b", event: "openURL"),
                    stuck: ControlReply.Call(service: "a.b", event: "openURL", seconds: 12.25, deadline: 0.5))))
        stuck.snapshot = true
        return [
            ControlReply(ok: true, id: 1, .delivery(present)),
            ControlReply(
                ok: true, .delivery(ControlReply.Delivery(event: "memoryWarning", handled: true, receivers: []))),
            stuck,
            ControlReply(ok: true, .status(ControlReply.Status(state: "background", serviceCount: 0))),
            ControlReply(ok: true, id: "l", .services(ControlReply.Services(services: [service, isolated]))),
            ControlReply(
                ok: true, .services(ControlReply.Services(services: [service], skipped: [["reason": "disabled"]]))),
            ControlReply(
                ok: true,
                .reload(ControlReply.Reload(added: ["a"], removed: [], replaced: ["c"], failures: ["x.so: \"bad\""]))),
            ControlReply(ok: true, id: 9, .moved(state: "inactive")),
            ControlReply(
                ok: true,
                .scene(
                    ControlReply.Scene(
                        state: "active", scene: .some(car), deliveries: [present, ControlReply.Delivery()],
                        delivery: ControlReply.Delivery(handled: false, note: "why")))),
            ControlReply(ok: true, .scene(ControlReply.Scene(state: "active", scene: .some(nil), delivery: present))),
            ControlReply(
                ok: true,
                .scene(
                    ControlReply.Scene(
                        state: "active",
                        scenes: [
                            car, ControlReply.SceneEntry(name: "m", role: "main", state: "s", configuration: "c"),
                        ],
                        savedScenes: ["car", "gone"]))),
            ControlReply(
                ok: true,
                .authorization(
                    ControlReply.Authorization(
                        status: "provisional", allowed: ["banner", "list"],
                        delivery: ControlReply.Delivery(handled: true, receivers: ["a.b"])))),
            ControlReply(
                ok: true,
                .operated(
                    ControlReply.Operated(state: "active", services: [service], members: ["restarted": ["a.b"]]))),
            ControlReply(ok: true, .operated(ControlReply.Operated(members: ["stats": ["calls": 2], "blame": []]))),
            ControlReply(ok: true, .operated(ControlReply.Operated(state: "active", services: []))),
            ControlReply(),
            ControlReply(ControlRefusal(id: "r", message: "no")),
            ControlReply(ControlRefusal(id: nil, message: "quote \" é")),
        ]
    }()

    /// What `host ctl` reads back is the family the host wrote.
    @Test func replies_roundTrip_throughTheirJSON() {
        for reply in Self.families {
            #expect(ControlReply(json: reply.json) == reply, "\(reply.json)")
        }
        #expect(ControlReply(json: Self.families[4].json).services?.last?.stuckIn == "openURL")
    }

    @Test func replies_areTheREADMEsBytes() {
        let open = ControlReply(
            ok: true, id: 1,
            .delivery(
                ControlReply.Delivery(
                    event: "openURL", handled: true, receivers: ["dev.servicehost.deeplinks"],
                    handledBy: "dev.servicehost.deeplinks")))
        #expect(
            open.json.serialized
                == #"{"event":"openURL","handled":true,"handledBy":"dev.servicehost.deeplinks","id":1,"ok":true,"#
                + #""receivers":["dev.servicehost.deeplinks"]}"#)
        #expect(
            ControlReply(ControlRefusal(id: 5, message: #"unknown scene "ghost" (connected: main, car)"#)).json
                .serialized
                == #"{"error":"unknown scene \"ghost\" (connected: main, car)","id":5,"ok":false}"#)
        let state = ControlReply(ok: true, .status(ControlReply.Status(state: "active", serviceCount: 5)))
        #expect(state.json.serialized == #"{"deviceToken":null,"ok":true,"services":5,"state":"active"}"#)
        let gone = ControlReply(ok: true, .scene(ControlReply.Scene(state: "active", scene: .some(nil))))
        #expect(gone.json.serialized == #"{"ok":true,"scene":null,"state":"active"}"#)
    }

    /// The bytes a connection writes (``ControlReply/write(to:)``, no JSONValue) are the JSON's,
    /// member for member, for every family: escapes, fractions, negative numbers, the members
    /// merged from isolation and the operating replies, nested deliveries.
    @Test func replies_writtenInPlace_areTheirJSONsBytes() {
        // Isolation's members are merged over the service's own (one that names `activation`).
        var overridden = Self.families[4]
        if case .services(var list) = overridden.body {
            list.services[1].isolation[.activation] = "eager"
            overridden.body = .services(list)
        }
        for reply in Self.families + [overridden] {
            var written: [UInt8] = []
            reply.write(to: &written)
            #expect(String(decoding: written, as: UTF8.self) == reply.json.serialized)
        }
    }

    @Test func ctl_printsAReplyFromItsTypedFields() {
        var status = ControlReply.Status(
            state: "active", serviceCount: 1, deviceToken: "00ff",
            stuck: ControlReply.Call(service: "a.b", event: "openURL", seconds: 12, deadline: 0.5))
        #expect(
            CtlCommand.text(of: ControlReply(ok: true, .status(status)), command: "state")
                == "state: active\nservices: 1\ndevice token: 00ff\n"
                + "stuck: a.b has not returned from openURL for 12 s (its deadline is 0.5 s)")
        // The seconds come from the socket's reply: a number past Int's range is printed, not
        // converted (`Int(_:)` trapped the client on 1e300).
        for (seconds, printed) in [
            (12.7, "12"), (1e300, JSONValue.number(1e300).serialized), (-1e300, JSONValue.number(-1e300).serialized),
        ] {
            status.stuck?.seconds = seconds
            #expect(
                CtlCommand.text(of: ControlReply(ok: true, .status(status)), command: "state")
                    .hasSuffix("openURL for \(printed) s (its deadline is 0.5 s)"))
        }
        let unhandled = ControlReply(ok: true, .delivery(ControlReply.Delivery(handled: false)))
        #expect(CtlCommand.status(of: unhandled) == CtlCommand.ExitStatus.notHandled.rawValue)
        #expect(CtlCommand.status(of: ControlReply(ok: true, .moved(state: "active"))) == 0)
        #expect(CtlCommand.status(of: ControlReply(ControlRefusal(id: nil, message: "x"))) == 1)
    }
}
