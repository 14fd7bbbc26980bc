import Dispatch
import MQTTCodec
import ServiceKit

/// A host in a fleet: connects to an MQTT broker and turns messages into the events
/// `host ctl` would cause (issue 17). Configured by its settings (``MQTTBridgeSettings``);
/// without them it does nothing and opens no socket.
///
/// Topics (`<prefix>` is `servicehost/<hostId>` unless set; the fleet's is `servicehost/all`):
/// - `<prefix>/push`, `servicehost/all/push`: the payload is a push (APNs JSON), delivered as
///   `host ctl push` does, following the app state;
/// - `<prefix>/url`, `servicehost/all/url`: the payload is a URL, delivered as `host ctl open`;
/// - `<prefix>/post/NAME`, `servicehost/all/post/NAME`: a notification NAME with the payload
///   (JSON, or none when empty), as `host ctl post`;
/// - `<prefix>/ctl`: a control request object with `replyTo` (the topic for the reply),
///   carried out only with `"commands": true`;
/// - `<prefix>/state` (published, retained): `{"status":"online","state":…,"services":[…],
///   "version":…}` on every connection and app state change; the will is `offline`.
///
/// Every message reaches the host through `sh_host.control`, so the host's grant
/// (`"requests"` in services.json) and the control socket's rules apply. A QoS 1 message is
/// acknowledged only after the host answered its request; the last 1024 delivered messages
/// are kept in the store, so a redelivery after a crash is acknowledged, not delivered again.
///
/// Log lines start with a stable word: `mqtt.off`, `mqtt.settings`, `mqtt.connected`,
/// `mqtt.unreachable`, `mqtt.disconnected`, `mqtt.refused`, `mqtt.protocolError`,
/// `mqtt.subscribeRefused`, `mqtt.badMessage`, `mqtt.delivered` (debug), `mqtt.duplicate`,
/// `mqtt.commandRefused`, `mqtt.requestFailed`, `mqtt.storeFailed`. Some carry `key=value`
/// fields between the word and the colon, for scripts and tests: `mqtt.refused code=5`,
/// `mqtt.protocolError error=tooLarge` (an ``MQTTError/Code``, or `unexpected`, and `packet=`
/// when the packet is known), `mqtt.duplicate packet=5`.
final class MQTTBridgeService: ApplicationService {
    // Set once at didFinishLaunching on the main thread; read there and from the bridge.
    private var bridge: Bridge?

    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        let settings: MQTTBridgeSettings
        do {
            guard let read = try MQTTBridgeSettings.read(options.settings) else {
                host.log(.info, "mqtt.off: no settings, so no broker: the bridge opens no socket")
                return true
            }
            settings = read
        } catch {
            host.log(.error, "mqtt.settings: \(error.description); the bridge stays off")
            return true
        }
        let bridge = Bridge(settings: settings, host: host)
        if let bytes = try? host.store.get(DeliveredMessages.storeKey) { bridge.delivered.restore(bytes) }
        self.bridge = bridge
        bridge.start()
        return true
    }

    func didBecomeActive() { bridge?.publishState() }
    func willResignActive() { bridge?.publishState() }
    func didEnterBackground() { bridge?.publishState() }
    func willEnterForeground() { bridge?.publishState() }
    func willTerminate() { bridge?.stop() }
}

/// The running bridge: the client, the routing of messages to requests, the acks.
final class Bridge: Sendable {
    let settings: MQTTBridgeSettings
    let host: HostContext
    let delivered = DeliveredMessages()
    private let acks = AckOrder()
    // Set once in init, before the client's thread starts.
    nonisolated(unsafe) private var client: MQTTClient!

    init(settings: MQTTBridgeSettings, host: HostContext) {
        self.settings = settings
        self.host = host
        let prefixes = [settings.prefix, MQTTBridgeSettings.fleetPrefix]
        let subscriptions =
            prefixes.flatMap { ["\($0)/push", "\($0)/url", "\($0)/post/+"] } + ["\(settings.prefix)/ctl"]
        let will = MQTTPublish(
            topic: "\(settings.prefix)/state", payload: Array("offline".utf8), qos: settings.qos, retain: true)
        client = MQTTClient(
            settings: settings, subscriptions: subscriptions.map { MQTTSubscription($0, qos: 1) }, will: will,
            handlers: .init(
                message: { [weak self] in self?.receive($0) },
                connected: { [weak self] in
                    self?.acks.reset()
                    self?.publishState()
                },
                log: { level, message in host.log(level, message) }))
    }

    func start() { client.start() }

    func stop() {
        client.stop(
            sending: MQTTPublish(
                topic: "\(settings.prefix)/state", payload: Array("offline".utf8), qos: 0, retain: true))
    }

    /// Publishes the retained state: the app state and, from a `list` request, the services.
    func publishState() {
        let submitted =
            (try? host.control(.object(["command": "list"])) { [self] reply in
                let services = reply["services"]?.arrayValue?.compactMap { $0["id"] } ?? []
                sendState(services: services)
            }) != nil
        if !submitted { sendState(services: []) }
    }

    private func sendState(services: [JSONValue]) {
        let state: JSONValue = .object([
            "status": "online", "state": .string(host.appState.name), "hostId": .string(settings.hostID),
            "services": .array(services), "version": .string(host.hostVersion),
        ])
        client.publish(topic: "\(settings.prefix)/state", Array(state.serialized.utf8), qos: settings.qos, retain: true)
    }

    /// A message from the broker (connection thread).
    private func receive(_ message: MQTTPublish) {
        let key = message.qos == 1 ? DeliveredMessages.Key(message) : nil
        var ticket: UInt64 = 0
        if let key, let id = message.id {
            if message.dup && delivered.contains(key) {
                host.log(
                    .info,
                    "mqtt.duplicate packet=\(id): \(message.topic) (packet \(id)) was delivered before; acknowledged, not delivered again"
                )
                let place = acks.enqueue(id: id, key: nil)
                acks.complete(place.ticket, key: nil, send: ack)
                return
            }
            let place = acks.enqueue(id: id, key: key)
            if place.alreadyWithHost {
                host.log(
                    .info,
                    "mqtt.duplicate packet=\(id): \(message.topic) (packet \(id)) is with the host already; acknowledged with it"
                )
                return
            }
            ticket = place.ticket
        }
        let finish: @Sendable () -> Void = { [self, ticket] in
            guard let key else { return }
            // The host took it: remember it before the PUBACK, so a redelivery is recognised.
            do { try host.store.set(DeliveredMessages.storeKey, delivered.insert(key)) } catch {
                host.log(.warn, "mqtt.storeFailed: \(error); a redelivery of \(message.topic) may be delivered again")
            }
            acks.complete(ticket, key: key, send: ack)
        }
        let request: JSONValue
        let replyTo: String?
        switch route(message) {
        case .failure(let problem):
            host.log(.warn, "mqtt.badMessage: \(message.topic): \(problem)")
            if let key { acks.complete(ticket, key: key, send: ack) }  // a redelivery would not be better
            return
        case .success(.commandRefused(let to)):
            host.log(.warn, "mqtt.commandRefused: \(message.topic): commands are off (settings.commands is false)")
            if let to {
                publishReply(
                    to,
                    .object([
                        "ok": false, "error": .string("commands are off for \(settings.hostID) (settings.commands)"),
                    ]))
            }
            if let key { acks.complete(ticket, key: key, send: ack) }
            return
        case .success(.request(let routed, let to)):
            request = routed
            replyTo = to
        }
        do {
            try host.control(request) { [self] reply in
                host.log(.debug, "mqtt.delivered: \(message.topic): \(reply.serialized)")
                if let replyTo { publishReply(replyTo, reply) }
                finish()
            }
        } catch {
            // Not acknowledged: the broker keeps it for a host that takes requests.
            host.log(
                .error, "mqtt.requestFailed: \(message.topic): the host takes no requests from this service (\(error))")
        }
    }

    private func ack(_ id: UInt16) { client.send(.puback(id: id)) }

    private func publishReply(_ topic: String, _ reply: JSONValue) {
        client.publish(topic: topic, Array(reply.serialized.utf8), qos: settings.qos, retain: false)
    }

    /// What a message becomes.
    enum Routed {
        /// A control request, and the topic for its reply (commands only).
        case request(JSONValue, replyTo: String?)
        /// A command while `commands` is off.
        case commandRefused(replyTo: String?)
    }

    /// The request a message becomes, and where a command's reply goes.
    func route(_ message: MQTTPublish) -> Result<Routed, RouteProblem> {
        var rest: Substring?
        for prefix in [settings.prefix, MQTTBridgeSettings.fleetPrefix] where message.topic.hasPrefix(prefix + "/") {
            rest = message.topic.dropFirst(prefix.count + 1)
            if message.topic == "\(settings.prefix)/ctl" { rest = "ctl" }
            break
        }
        guard let rest else { return .failure(RouteProblem("not a topic of this host")) }
        func json() -> Result<JSONValue, RouteProblem> {
            do { return .success(try JSONValue(parsing: message.payload)) } catch {
                return .failure(RouteProblem("the payload is not JSON: \(error)"))
            }
        }
        switch rest {
        case "push":
            return json().flatMap { payload in
                guard payload.objectValue != nil else {
                    return .failure(RouteProblem("a push payload must be a JSON object"))
                }
                return .success(.request(.object(["command": "push", "payload": payload]), replyTo: nil))
            }
        case "url":
            guard let url = String(validating: message.payload, as: UTF8.self), !url.isEmpty else {
                return .failure(RouteProblem("the payload must be a URL in UTF-8"))
            }
            return .success(.request(.object(["command": "open", "url": .string(url)]), replyTo: nil))
        case "ctl":
            return json().flatMap { value in
                guard var object = value.objectValue else {
                    return .failure(RouteProblem("a command must be a JSON object"))
                }
                let replyTo = object.removeValue(forKey: "replyTo")?.stringValue
                guard settings.commands else { return .success(.commandRefused(replyTo: replyTo)) }
                return .success(.request(.object(object), replyTo: replyTo))
            }
        default:
            guard rest.hasPrefix("post/"), rest.count > 5 else {
                return .failure(RouteProblem("not a topic of this host"))
            }
            let name = String(rest.dropFirst(5))
            if message.payload.isEmpty {
                return .success(.request(.object(["command": "post", "name": .string(name)]), replyTo: nil))
            }
            return json().map {
                .request(.object(["command": "post", "name": .string(name), "payload": $0]), replyTo: nil)
            }
        }
    }
}

/// Why a message is not an event: said in the log, and the message is acknowledged.
struct RouteProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
