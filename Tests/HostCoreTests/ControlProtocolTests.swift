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
            ["state"], ["list"], ["list", "--all"], ["reload"], ["memory-warning"], ["activate"], ["resign"], ["background"], ["foreground"],
            ["terminate"],
            ["push", "--tap=reply", "p.json"], ["push", "-"], ["open", "myapp://item/42"],
            ["activity", "com.example.read", "--url", "https://e.com/1", "--user-info", #"{"n":1}"#],
            ["token", "00ff"], ["token-error", "no network"], ["post", "queue.enqueue", #"{"text":"hello"}"#], ["post", "ping"],
            ["request", "queue.count"], ["authorization"], ["authorization", "denied"],
            ["scene", "list"], ["scene", "resign", "main"], ["scene", "connect", "car", "--role", "car", "--url", "myapp://drive"],
            ["scene", "connect", "tv", "--activity", "com.example.read,https://e.com/1"], ["scene", "open", "car", "myapp://x"],
            ["scene", "activity", "car", "com.example.read", "--user-info", #"{"n":1}"#],
            ["stats"], ["stats", "a.b"], ["blame"], ["service", "restart", "a.b", "--force"], ["watch", "--logs"],
        ]
        let payload: (String) throws -> [UInt8] = { _ in Array(#"{"aps":{"alert":"hi"}}"#.utf8) }
        for line in lines {
            let message = try CtlCommand.parse(line, readInput: payload).message
            let request = try ControlRequest.parse(Array(message.json.serialized.utf8), maxPayload: 65536).get()
            #expect(request.spec.name == line[0], "\(line)")
        }
        // Every command has a line above.
        #expect(Set(lines.map(\.[0])) == Set(ControlCommands.names))
        let push = try ControlRequest.parse(Array(#"{"command":"push","payload":{"aps":{}},"tap":true}"#.utf8), maxPayload: 65536)
        guard case .push(_, let action) = try push.get().command else { throw TestFailure("not a push") }
        #expect(action == SH_ACTION_DEFAULT)
        let all = try ControlRequest.parse(Array(#"{"command":"list","all":true}"#.utf8), maxPayload: 65536).get()
        guard case .operate(.listAll) = all.command else { throw TestFailure("not list --all") }
    }

    @Test func requests_areTheREADMEsBytes() throws {
        #expect(
            ControlMessage(ControlMessage.Command("open", ["url": "myapp://item/42"]), id: 1).json.serialized
                == #"{"command":"open","id":1,"url":"myapp://item/42"}"#)
        var scene = try CtlCommand.parse(["scene", "connect", "car", "--role", "car", "--url", "myapp://drive/work"], readInput: { _ in [] })
            .message
        scene.id = 4
        #expect(
            scene.json.serialized
                == #"{"action":"connect","command":"scene","id":4,"name":"car","role":"car","urls":["myapp://drive/work"]}"#)
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
            var reply = ControlReply(ok: true)
            reply.receivers = receivers
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

    @Test func replies_roundTrip_throughTheirJSON() {
        var event = ControlReply(ok: true, id: 1)
        event.event = "willPresentNotification"
        event.handled = true
        event.receivers = ["a.b", "c.d"]
        event.answers = ["a.b": "banner", "c.d": "sound"]
        event.presentation = ["banner", "sound"]
        event.note = "why"

        var state = ControlReply(ok: true)
        state.snapshot = true
        state.state = "active"
        state.status = ControlReply.Status(
            serviceCount: 2, deviceToken: nil, busy: ControlReply.Call(service: "a.b", event: "openURL"),
            stuck: ControlReply.Call(service: "a.b", event: "openURL", seconds: 12, deadline: 0.5))

        var list = ControlReply(ok: true)
        list.services = [
            ControlReply.Service(
                id: "a.b", name: "A", version: "1.0.0", path: "/p/a.so", priority: -3, state: "stuck",
                events: ["openURL"], urls: ["myapp"], activities: [], subscriptions: ["*"],
                sceneRoles: ["main"], lastError: nil,
                isolation: ["isolation": "process", "stuckIn": "openURL", "restarts": 2])
        ]

        var reload = ControlReply(ok: true)
        reload.reload = ControlReply.Reload(added: ["a.b"], removed: [], replaced: ["c.d"], failures: ["x.so: bad"])

        var scene = ControlReply(ok: true)
        scene.state = "active"
        scene.handled = false
        scene.scene = ControlReply.SceneEntry(
            name: "car", role: "car", state: "foregroundActive", configuration: "car",
            configuredBy: "a.b", settings: ["template": "map"])
        var delivery = ControlReply()
        delivery.event = "sceneOpenURLContexts"
        delivery.handled = false
        delivery.receivers = []
        scene.deliveries = [delivery]

        var gone = ControlReply(ok: true)
        gone.scene = .some(nil)
        var scenes = ControlReply(ok: true)
        scenes.scenes = []

        for reply in [event, state, list, reload, scene, gone, scenes, ControlReply(ControlRefusal(id: "r", message: "no"))] {
            #expect(ControlReply(json: reply.json) == reply, "\(reply.json)")
        }
        #expect(gone.json.serialized == #"{"ok":true,"scene":null}"#)
        #expect(list.services?.first?.stuckIn == "openURL")
    }

    @Test func replies_areTheREADMEsBytes() {
        var open = ControlReply(ok: true, id: 1)
        open.event = "openURL"
        open.handled = true
        open.handledBy = "dev.servicehost.deeplinks"
        open.receivers = ["dev.servicehost.deeplinks"]
        #expect(open.json.serialized == #"{"event":"openURL","handled":true,"handledBy":"dev.servicehost.deeplinks","id":1,"ok":true,"receivers":["dev.servicehost.deeplinks"]}"#)
        #expect(
            ControlReply(ControlRefusal(id: 5, message: #"unknown scene "ghost" (connected: main, car)"#)).json.serialized
                == #"{"error":"unknown scene \"ghost\" (connected: main, car)","id":5,"ok":false}"#)
        var state = ControlReply(ok: true)
        state.state = "active"
        state.status = ControlReply.Status(serviceCount: 5, deviceToken: nil)
        #expect(state.json.serialized == #"{"deviceToken":null,"ok":true,"services":5,"state":"active"}"#)
    }

    /// The bytes a connection writes (``ControlReply/write(to:)``, no JSONValue) are the JSON's,
    /// member for member: every member set at once, escapes, fractions, negative numbers, the
    /// members merged from isolation and the operating replies, nested deliveries.
    @Test func replies_writtenInPlace_areTheirJSONsBytes() {
        var everything = ControlReply(ok: false, id: ["n": -1.5])
        everything.error = "quote \" backslash \\ newline \n tab \t bell \u{7} é 🚗"
        everything.snapshot = true
        everything.state = "active"
        everything.status = ControlReply.Status(
            serviceCount: 3, deviceToken: "00ff", busy: ControlReply.Call(service: "a.b", event: "openURL"),
            stuck: ControlReply.Call(service: "a.b", event: "openURL", seconds: 12.25, deadline: 0.5))
        everything.reload = ControlReply.Reload(added: ["a"], removed: [], replaced: ["c"], failures: ["x.so: \"bad\""])
        everything.event = "willPresentNotification"
        everything.handled = true
        everything.receivers = ["a.b", "c.d"]
        everything.handledBy = "a.b"
        everything.answers = ["c.d": "sound", "a.b": "banner"]
        everything.result = ["z": 1, "a": [true, .null, 1e300]]
        everything.presentation = ["banner"]
        everything.note = "why"
        let car = ControlReply.SceneEntry(
            name: "car", role: "car", state: "foregroundActive", configuration: "car", configuredBy: nil,
            settings: ["template": "map"], savedState: true)
        everything.scene = .some(car)
        everything.scenes = [car, ControlReply.SceneEntry(name: "m", role: "main", state: "s", configuration: "c")]
        everything.savedScenes = ["car"]
        everything.authorization = ControlReply.Authorization(status: "provisional", allowed: ["banner", "list"])
        var delivery = ControlReply()
        delivery.event = "sceneOpenURLContexts"
        delivery.receivers = []
        var operating = ControlReply(ok: true)
        operating.members = ["stats": ["calls": 2], "blame": []]
        everything.deliveries = [delivery, operating, ControlReply()]

        let service = ControlReply.Service(
            id: "a.b", name: "A \"quoted\"", version: "1.0.0", path: "/p/a.so", priority: -3, state: "running",
            events: ["openURL"], urls: ["myapp"], activities: ["x"], subscriptions: ["*"], sceneRoles: ["main"],
            lastError: "boom", retiredCopies: 2, activation: "lazy", activatedBy: "URL myapp://x")
        var isolated = service
        isolated.isolation = ["isolation": "process", "stuckIn": "openURL", "restarts": 2, "activation": "eager"]
        var list = ControlReply(ok: true, id: "l")
        list.services = [service, isolated]
        // `state`'s count and a list at once: the list wins, as in the JSON.
        var both = list
        both.status = ControlReply.Status(serviceCount: 9, deviceToken: nil)
        var gone = ControlReply(ok: true)
        gone.scene = .some(nil)

        for reply in [everything, list, both, gone, operating, ControlReply(), ControlReply(ControlRefusal(id: nil, message: "no"))] {
            var written: [UInt8] = []
            reply.write(to: &written)
            #expect(String(decoding: written, as: UTF8.self) == reply.json.serialized)
        }
    }

    @Test func ctl_printsAReplyFromItsTypedFields() {
        var state = ControlReply(ok: true)
        state.state = "active"
        state.status = ControlReply.Status(
            serviceCount: 1, deviceToken: "00ff",
            stuck: ControlReply.Call(service: "a.b", event: "openURL", seconds: 12, deadline: 0.5))
        #expect(
            CtlCommand.text(of: state, command: "state")
                == "state: active\nservices: 1\ndevice token: 00ff\nstuck: a.b has not returned from openURL for 12 s (its deadline is 0.5 s)")
        // The seconds come from the socket's reply: a number past Int's range is printed, not
        // converted (`Int(_:)` trapped the client on 1e300).
        for (seconds, printed) in [(12.7, "12"), (1e300, JSONValue.number(1e300).serialized), (-1e300, JSONValue.number(-1e300).serialized)] {
            state.status?.stuck?.seconds = seconds
            #expect(CtlCommand.text(of: state, command: "state").hasSuffix("openURL for \(printed) s (its deadline is 0.5 s)"))
        }
        var unhandled = ControlReply(ok: true)
        unhandled.handled = false
        #expect(CtlCommand.status(of: unhandled) == 3)
        #expect(CtlCommand.status(of: ControlReply(ControlRefusal(id: nil, message: "x"))) == 1)
    }
}
