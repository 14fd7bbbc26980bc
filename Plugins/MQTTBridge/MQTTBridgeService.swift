import Dispatch
import Glibc
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
/// - `<prefix>/ctl`: a control request object; its reply goes to the MQTT 5 response topic
///   (with the correlation data) or the payload's `replyTo`, which ``ReplyTopic`` must allow;
///   carried out only with `"commands": true`, never when retained or expired; with commands
///   off nothing is published in reply;
/// - `<prefix>/state` (published, retained): `{"status":"online","state":…,"services":[…],
///   "version":…}` on every connection and app state change; the will is `offline`;
/// - `<prefix>/desired` (retained), `servicehost/bundles/<sha256>[/N]` (retained, subscribed
///   while fetched) and `<prefix>/reported` (published, retained): a fleet's desired and
///   reported state (``FleetAgent``, issue 41).
///
/// Every message reaches the host through `sh_host.control`, so the host's grant
/// (`"requests"` in services.json) and the control socket's rules apply. A QoS 1 message is
/// acknowledged only after the host answered its request; the last 1024 delivered messages
/// are kept in the store, so a redelivery after a crash is acknowledged, not delivered again.
/// A retained push, URL or post is delivered once by its digest (``RetainedMessages``). A
/// message over `maxPacket` is read past, acknowledged and logged, never delivered.
///
/// A reload or a restart in the host's process hands the live connection to the replacement
/// (`willReload`, ``BridgeHandOver``): no DISCONNECT, no new CONNECT, nothing lost (Fleet.md,
/// "Across a reload").
///
/// Log lines start with a stable word: `mqtt.off`, `mqtt.settings`, `mqtt.connected`,
/// `mqtt.unreachable`, `mqtt.disconnected`, `mqtt.refused`, `mqtt.protocolError`,
/// `mqtt.subscribeRefused`, `mqtt.badMessage`, `mqtt.delivered` (debug), `mqtt.duplicate`,
/// `mqtt.commandRefused`, `mqtt.oversized`, `mqtt.requestFailed`, `mqtt.storeFailed`,
/// `mqtt.publishRefused`, `mqtt.brokerDisconnected` (MQTT 5), and for the fleet's desired state
/// `mqtt.fleetDownloading`, `mqtt.fleetProbation`, `mqtt.fleetApplied`, `mqtt.fleetRolledBack`,
/// `mqtt.fleetRefused reason=`, `mqtt.fleetSkipped status=`, `mqtt.fleetWaiting generation=`,
/// `mqtt.fleetWatchFailed`, and across a
/// reload `mqtt.handedOver bytes= requests=`, `mqtt.adopted`, `mqtt.handOverRefused reason=`,
/// `mqtt.handOverUnclaimed`. Some carry
/// `key=value` fields between the word and the colon, for scripts and tests: `mqtt.refused code=5`,
/// `mqtt.protocolError error=tooLarge` (an ``MQTTError/Code``, or `unexpected`, and `packet=`
/// when the packet is known), `mqtt.duplicate packet=5` (and `retained=true`),
/// `mqtt.commandRefused reason=commandsOff` (a ``Bridge/CommandRefusal``),
/// `mqtt.oversized bytes=N topic=T packet=5`, `mqtt.disconnected failures=N acknowledged=N`,
/// `reason=NAME` beside `code=N` for MQTT 5 reason codes (``MQTTReasonCode``), `trace=ID` from
/// a `traceId` user property, `mqtt.connected protocol=5 sessionPresent=true reader=mainLoop` (and
/// `mqtt.adopted reader=`: `mainLoop` when the host's main loop reads the socket, `thread` in a
/// worker; ``MQTTClient/ReaderPath``).
final class MQTTBridgeService: ApplicationService, StateHandingOver {
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
        if let bytes = try? host.store.get(RetainedMessages.storeKey) { bridge.retained.restore(bytes) }
        self.bridge = bridge
        bridge.start(restoring: options.restoredState)
        return true
    }

    /// Replaced (a reload's new version, a restart by request): the connection, its packet
    /// ids and keep-alive, and the delivered and retained windows go to the replacement
    /// (``BridgeHandOver``), which goes on without a new CONNECT.
    func willReload() -> [UInt8]? { bridge?.handOver() }

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
    let retained = RetainedMessages()
    private let acks = AckOrder()
    // Set once in init, before the client's thread starts.
    nonisolated(unsafe) private var client: MQTTClient!
    // Set once in init, before the client's thread starts.
    nonisolated(unsafe) private(set) var fleet: FleetAgent!

    init(settings: MQTTBridgeSettings, host: HostContext) {
        self.settings = settings
        self.host = host
        let prefixes = [settings.prefix, MQTTBridgeSettings.fleetPrefix]
        let subscriptions =
            prefixes.flatMap { ["\($0)/push", "\($0)/url", "\($0)/post/+"] } + [
                "\(settings.prefix)/ctl", "\(settings.prefix)/desired",
            ]
        let will = MQTTPublish(
            topic: "\(settings.prefix)/state", payload: Array("offline".utf8), qos: settings.qos, retain: true)
        client = MQTTClient(
            settings: settings, subscriptions: subscriptions.map { MQTTSubscription($0, qos: 1) }, will: will,
            handlers: .init(
                message: { [weak self] in self?.receive($0) },
                skipped: { [weak self] in self?.readPast($0) },
                connected: { [weak self] in
                    self?.acks.reset()
                    self?.publishState()
                    self?.fleet.connected()
                },
                resumed: { [weak self] in self?.resumed() },
                log: { level, message in host.log(level, message) }))
        fleet = FleetAgent(settings: settings, host: host, client: client)
    }

    /// Work left after a hand-over (issue 42): the requests still with the host, and whether
    /// the reload is over (then the descriptors the replacement took copies of are closed).
    private struct Leaving {
        var handedOver = false
        var requests = 0
        var reloadOver = false
        /// Still reading what the copy before this one sends (``follow(_:barrier:)``).
        var following = false
        /// False once a request was refused at once: in a worker process, where the host takes
        /// none (`sh_host.control` is SH_UNSUPPORTED), nothing is handed over and the replacement
        /// (another process) connects anew.
        var takesRequests = true
        var socket: Int32 = -1
        var theirs: Int32 = -1
        var mine: Int32 = -1
    }

    /// What the replacement writes on the channel once the connection is its (adopted, or
    /// disconnected because it was made with other settings).
    static let takenByte = UInt8(ascii: "A")

    private let leaving = Locked(Leaving())

    /// Starts; with a state the copy this one replaces handed over, goes on with its
    /// connection (when it is still that socket in this process, and made with these
    /// settings) and its windows. Main thread (didFinishLaunching): the client reads the socket on the host's
    /// main loop where the host allows it (``MQTTClient/start(adopting:watchingWith:)``).
    func start(restoring restored: RestoredState?) {
        guard let restored else { return client.start(watchingWith: host) }
        let state: BridgeHandOver
        do throws(BridgeHandOver.Problem) { state = try BridgeHandOver.parse(restored.bytes) } catch {
            host.log(
                .warn,
                "mqtt.handOverRefused reason=unreadable: the state \(restored.serviceID) \(restored.version) handed over: \(error); connecting anew"
            )
            return client.start(watchingWith: host)
        }
        if !state.delivered.isEmpty { delivered.restore(state.delivered) }
        if !state.retained.isEmpty { retained.restore(state.retained) }
        guard let handed = state.connection else { return client.start(watchingWith: host) }
        guard state.pid == UInt32(getpid()) else {
            // A worker's replacement is another process: the old one's socket ended with it.
            host.log(
                .info,
                "mqtt.handOverRefused reason=otherProcess: the connection was handed over in process \(state.pid); connecting anew (the broker kept the session)"
            )
            return client.start(watchingWith: host)
        }
        guard let channel = HandOverSocket.adopt(handed.channel, inode: handed.channelInode) else {
            host.log(
                .warn,
                "mqtt.handOverRefused reason=descriptor: descriptor \(handed.channel) is no longer the hand-over's channel; connecting anew"
            )
            return client.start(watchingWith: host)
        }
        guard let socket = HandOverSocket.adopt(handed.socket, inode: handed.socketInode) else {
            host.log(
                .warn,
                "mqtt.handOverRefused reason=descriptor: descriptor \(handed.socket) is no longer the broker connection; connecting anew"
            )
            follow(channel, barrier: nil)
            return client.start(watchingWith: host)
        }
        guard handed.identity == settings.connectionIdentity else {
            // Made with other settings: ended cleanly (no will), and made anew with these.
            let bye = MQTTPacket.disconnect().encoded(version: settings.protocolVersion.codec)
            _ = bye.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(socket)
            host.log(
                .info,
                "mqtt.handOverRefused reason=settings: the connection handed over was made with other connection settings; disconnected it, connecting anew"
            )
            taken(channel)
            follow(channel, barrier: nil)
            return client.start(watchingWith: host)
        }
        taken(channel)
        // The old copy's last ids stay its own for the replies it still publishes.
        let next = (Int(handed.nextID) + BridgeHandOver.reservedIDs) % Int(UInt16.max)
        follow(channel, barrier: acks.hold())
        client.start(
            adopting: MQTTClient.Session(
                fd: socket, keepAlive: Double(handed.keepAliveMS) / 1000,
                lastPing: HandOverSocket.seconds(handed.lastPingNS),
                pingOutstanding: handed.pingOutstandingNS == 0 ? nil : HandOverSocket.seconds(handed.pingOutstandingNS),
                nextID: UInt16(next), held: handed.held),
            watchingWith: host)
    }

    /// Tells the copy this one replaces that its connection was taken care of.
    private func taken(_ channel: Int32) {
        var byte = Self.takenByte
        _ = Glibc.send(channel, &byte, 1, Int32(MSG_NOSIGNAL))
    }

    /// Reads what the copy this one replaced still sends (``ChannelRecord``) until it closes
    /// its end: pairs to remember and bytes for the broker, in its order; then PUBACKs held
    /// behind `barrier` go out.
    private func follow(_ channel: Int32, barrier: UInt64?) {
        leaving.withLock { $0.following = true }
        DispatchQueue(label: "servicehost.mqtt-bridge.hand-over").async { [self] in
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            reading: while true {
                let count = chunk.withUnsafeMutableBytes { bytes in
                    retryingOnInterrupt { Glibc.read(channel, bytes.baseAddress, bytes.count) }
                }
                guard count > 0 else { break }
                buffer += chunk[..<count]
                do throws(BridgeHandOver.Problem) {
                    while let record = try ChannelRecord.next(from: &buffer) {
                        switch record {
                        case .write(let bytes): if barrier != nil { client.write(raw: bytes) }
                        case .delivered(let id, let digest):
                            remember(DeliveredMessages.Key(id: id, digest: digest), topic: "a message")
                        case .retained(let digest): remember(retained: digest, topic: "a message")
                        }
                    }
                } catch {
                    host.log(.error, "mqtt.handOverRefused reason=channel: the old copy's channel: \(error)")
                    break reading
                }
            }
            close(channel)
            if let barrier { acks.complete(barrier, key: nil, send: ack) }
            leaving.withLock { $0.following = false }
            endForwardingWhenDone()
        }
    }

    /// The connection handed over was taken: this copy's state, and the fleet's retained
    /// desired state again (a subscription sends it anew), as after a connection.
    private func resumed() {
        publishState()
        fleet.connected()
        client.subscribe([MQTTSubscription(fleet.desiredTopic, qos: 1)])
    }

    /// willReload: parks the connection and returns what the replacement goes on with. The
    /// socket and the replacement's end of the channel stay open until the reload is over (the
    /// replacement takes copies of its own then), this copy's end until its last request with
    /// the host was answered; a replacement that took nothing leaves the socket closed with the
    /// reload (the broker publishes the will) and connects anew.
    func handOver() -> [UInt8] {
        var state = BridgeHandOver(pid: UInt32(getpid()))
        fleet.stop()
        if leaving.withLock({ $0.takesRequests }), let pair = HandOverSocket.pair() {
            if let theirs = HandOverSocket.inode(of: pair.new),
                let session = client.park(within: 2, forwardingTo: pair.old)
            {
                if let inode = HandOverSocket.inode(of: session.fd) {
                    state.connection = BridgeHandOver.Connection(
                        socket: session.fd, socketInode: inode, channel: pair.new, channelInode: theirs,
                        identity: settings.connectionIdentity, keepAliveMS: UInt32(session.keepAlive * 1000),
                        nextID: session.nextID, lastPingNS: HandOverSocket.nanoseconds(session.lastPing),
                        pingOutstandingNS: session.pingOutstanding.map(HandOverSocket.nanoseconds) ?? 0,
                        held: session.held)
                    let requests = leaving.withLock {
                        $0.handedOver = true
                        $0.socket = session.fd
                        $0.theirs = pair.new
                        $0.mine = pair.old
                        return $0.requests
                    }
                    host.log(
                        .info,
                        "mqtt.handedOver bytes=\(session.held.count) requests=\(requests): the connection to \(settings.broker) goes to the replacement"
                    )
                    // Runs once the reload (and the replacement's launch in it) is over.
                    DispatchQueue.main.async { [self] in reloadOver() }
                } else {
                    close(session.fd)
                    client.endForwarding()
                    close(pair.new)
                }
            } else {
                close(pair.old)
                close(pair.new)
            }
        }
        state.delivered = delivered.stored
        state.retained = retained.stored
        return state.encoded
    }

    /// After the reload: the numbers the replacement took copies of are closed. A connection
    /// nobody took (the replacement failed, is lazy, or has no settings) is ended as a stop
    /// ends it, `offline` and DISCONNECT, so nothing holds it and the broker keeps no will.
    private func reloadOver() {
        let (socket, theirs, mine) = leaving.withLock { leaving in
            leaving.reloadOver = true
            return (leaving.socket, leaving.theirs, leaving.mine)
        }
        var byte: UInt8 = 0
        if recv(mine, &byte, 1, Int32(MSG_DONTWAIT)) != 1 || byte != Self.takenByte {
            let version = settings.protocolVersion.codec
            let offline = MQTTPublish(
                topic: "\(settings.prefix)/state", payload: Array("offline".utf8), qos: 0, retain: true)
            for packet in [MQTTPacket.publish(offline), .disconnect()] {
                let bytes = packet.encoded(version: version)
                _ = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            host.log(
                .info,
                "mqtt.handOverUnclaimed: no replacement took the connection to \(settings.broker); disconnected it")
        }
        close(socket)
        close(theirs)
        endForwardingWhenDone()
    }

    /// Closes this copy's end of the channel once the reload is over and no request is left.
    private func endForwardingWhenDone() {
        let done = leaving.withLock { $0.handedOver && $0.reloadOver && $0.requests == 0 && !$0.following }
        if done { client.endForwarding() }
    }

    func stop() {
        fleet.stop()
        client.stop(
            sending: MQTTPublish(
                topic: "\(settings.prefix)/state", payload: Array("offline".utf8), qos: 0, retain: true))
    }

    /// Publishes the retained state: the app state and, from a `list` request, the services.
    /// Not once the connection was handed over: the replacement publishes its own.
    func publishState() {
        guard !leaving.withLock({ $0.handedOver }) else { return }
        let submitted =
            (try? host.control(.object(["command": "list"])) { [self] reply in
                let services = reply["services"]?.arrayValue?.compactMap { $0["id"] } ?? []
                sendState(services: services)
            }) != nil
        if !submitted {
            leaving.withLock { $0.takesRequests = false }
            sendState(services: [])
        }
    }

    private func sendState(services: [JSONValue]) {
        guard !leaving.withLock({ $0.handedOver }) else { return }
        let state: JSONValue = .object([
            "status": "online", "state": .string(host.appState.name), "hostId": .string(settings.hostID),
            "services": .array(services), "version": .string(host.hostVersion),
        ])
        client.publish(topic: "\(settings.prefix)/state", Array(state.serialized.utf8), qos: settings.qos, retain: true)
    }

    /// A message from the broker: on the main thread when the host's main loop reads the
    /// socket, else on the connection thread (``MQTTClient/ReaderPath``).
    private func receive(_ message: MQTTPublish) {
        // The fleet's desired state and bundles (issue 41): retained state, not requests; they
        // are acknowledged at once (a redelivery is recognised by the fleet's record).
        if message.topic == fleet.desiredTopic || FleetAgent.isBundleTopic(message.topic) {
            if message.topic == fleet.desiredTopic { fleet.desired(message.payload) } else { fleet.piece(message) }
            acknowledgeNow(message.id)
            return
        }
        let digest = DeliveredMessages.Key.digest(message)
        let key = message.qos == 1 ? DeliveredMessages.Key(id: message.id ?? 0, digest: digest) : nil
        // A retained push, URL or post is delivered once by its digest (RetainedMessages); a
        // retained command is refused in `route`.
        let onceRetained = message.retain && message.topic != "\(settings.prefix)/ctl"
        if onceRetained && retained.contains(digest) {
            host.log(
                .info,
                "mqtt.duplicate retained=true\(Self.packetField(message.id)): \(message.topic) (retained) was delivered before; acknowledged, not delivered again"
            )
            acknowledgeNow(message.id)
            return
        }
        // Copies of one retained message come with new packet ids at each subscription: they
        // wait for the first one's answer by digest alone (no packet id is 0).
        let withHostKey = onceRetained ? DeliveredMessages.Key(id: 0, digest: digest) : key
        var ticket: UInt64 = 0
        if let key, let id = message.id {
            if message.dup && delivered.contains(key) {
                host.log(
                    .info,
                    "mqtt.duplicate packet=\(id): \(message.topic) (packet \(id)) was delivered before; acknowledged, not delivered again"
                )
                acknowledgeNow(id)
                return
            }
            let place = acks.enqueue(id: id, key: withHostKey)
            if place.alreadyWithHost {
                host.log(
                    .info,
                    "mqtt.duplicate packet=\(id): \(message.topic) (packet \(id)) is with the host already; acknowledged with it"
                )
                return
            }
            ticket = place.ticket
        }
        // The message is done with (delivered, refused or bad): remembered before the PUBACK,
        // so a redelivery or the next subscription's retained copy is recognised.
        let finish: @Sendable () -> Void = { [self, ticket] in
            if onceRetained { remember(retained: digest, topic: message.topic) }
            guard let key else { return }
            remember(key, topic: message.topic)
            acks.complete(ticket, key: withHostKey, send: ack)
        }
        let request: JSONValue
        let replyTo: Reply?
        // MQTT 5: a `traceId` user property follows the message into the bridge's log lines
        // (the host's trace has no field for it: sh_host.control carries the request alone).
        let traceID = Self.traceID(message)
        let trace = traceID.map { " trace=\(Self.field($0))" } ?? ""
        switch route(message) {
        case .failure(let problem):
            host.log(.warn, "mqtt.badMessage\(trace): \(message.topic): \(problem)")
            finish()  // a redelivery would not be better
            return
        case .success(.commandRefused(let reason, let why)):
            // Acknowledged and recorded like a delivered command; nothing is published.
            host.log(.warn, "mqtt.commandRefused reason=\(reason.rawValue)\(trace): \(message.topic): \(why)")
            finish()
            return
        case .success(.request(let routed, let to)):
            request = routed
            replyTo = to
        }
        leaving.withLock { $0.requests += 1 }
        do {
            try host.control(request) { [self] reply in
                // A traced message is one someone follows: said at info.
                host.log(
                    traceID == nil ? .debug : .info, "mqtt.delivered\(trace): \(message.topic): \(reply.serialized)")
                if let replyTo { publishReply(replyTo, reply, traceID: traceID) }
                finish()
                leaving.withLock { $0.requests -= 1 }
                endForwardingWhenDone()
            }
        } catch {
            leaving.withLock { $0.requests -= 1 }
            // Not acknowledged: the broker keeps it for a host that takes requests.
            host.log(
                .error, "mqtt.requestFailed: \(message.topic): the host takes no requests from this service (\(error))")
        }
    }

    /// A message over `maxPacket`, read past by the client: logged once (a redelivery of it is
    /// recognised), acknowledged in order, never delivered.
    private func readPast(_ message: MQTTSkippedPublish) {
        if FleetAgent.isBundleTopic(message.topic) { fleet.oversized(message.topic, size: message.size) }
        let key = message.id.map {
            DeliveredMessages.Key(
                id: $0,
                digest: DeliveredMessages.Key.digest(
                    MQTTPublish(topic: message.topic, payload: Array("oversized \(message.size)".utf8))))
        }
        if let key, message.dup, delivered.contains(key) {
            acknowledgeNow(message.id)
            return
        }
        host.log(
            .warn,
            "mqtt.oversized bytes=\(message.size) topic=\(Self.field(message.topic))\(Self.packetField(message.id)): \(message.topic) carries \(message.size) bytes, over settings.maxPacket (\(settings.maxPacket)); read past, acknowledged, not delivered"
        )
        guard let key else { return }
        remember(key, topic: message.topic)
        acknowledgeNow(message.id)
    }

    /// Remembers a message the host took, before its PUBACK: in the store, or after a
    /// hand-over through the replacement, which keeps the store from then on.
    private func remember(_ key: DeliveredMessages.Key, topic: String) {
        let bytes = delivered.insert(key)
        if client.forward(.delivered(id: key.id, digest: key.digest)) { return }
        do { try host.store.set(DeliveredMessages.storeKey, bytes) } catch {
            host.log(.warn, "mqtt.storeFailed: \(error); a redelivery of \(topic) may be delivered again")
        }
    }

    /// Remembers a retained message delivered, as ``remember(_:topic:)`` does a pair.
    private func remember(retained digest: UInt64, topic: String) {
        let bytes = retained.insert(digest)
        if client.forward(.retained(digest)) { return }
        do { try host.store.set(RetainedMessages.storeKey, bytes) } catch {
            host.log(.warn, "mqtt.storeFailed: \(error); the retained message on \(topic) may be delivered again")
        }
    }

    /// Acknowledges packet `id` (if any) in its place in the order, without the host.
    private func acknowledgeNow(_ id: UInt16?) {
        guard let id else { return }
        let place = acks.enqueue(id: id, key: nil)
        acks.complete(place.ticket, key: nil, send: ack)
    }

    private static func packetField(_ id: UInt16?) -> String { id.map { " packet=\($0)" } ?? "" }

    /// The message's first `traceId` user property (MQTT 5), its first 128 bytes.
    static func traceID(_ message: MQTTPublish) -> String? {
        message.properties.userProperties.first { $0.0 == "traceId" }.map {
            String(decoding: $0.1.utf8.prefix(128), as: UTF8.self)
        }
    }

    /// `text` as the value of a `key=value` log field: any byte but a letter, a digit or one of
    /// `/._-` is written %XX, so a topic cannot end the field or forge another.
    static func field(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "-"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return result
    }

    private func ack(_ id: UInt16) { client.send(.puback(id: id)) }

    /// The reply carries the command's correlation data and trace id back (MQTT 5).
    private func publishReply(_ reply: Reply, _ answer: JSONValue, traceID: String?) {
        var properties = MQTTProperties()
        if let correlation = reply.correlation { properties.items.append((0x09, .binary(correlation))) }
        if let traceID { properties.items.append((0x26, .pair("traceId", traceID))) }
        client.publish(
            topic: reply.topic, Array(answer.serialized.utf8), qos: settings.qos, retain: false, properties: properties)
    }

    /// Where a command's reply goes: the topic (MQTT 5's response topic, or the payload's
    /// `replyTo`) and the correlation data it carries back (MQTT 5).
    struct Reply: Equatable {
        let topic: String
        let correlation: [UInt8]?
    }

    /// What a message becomes.
    enum Routed: Equatable {
        /// A control request, and where its reply goes (commands only, allowed by ``ReplyTopic``).
        case request(JSONValue, replyTo: Reply?)
        /// A command not carried out: why (the log's `reason=`) and the sentence.
        case commandRefused(CommandRefusal, String)
    }

    /// Why a `<prefix>/ctl` message is not carried out: the `reason=` of `mqtt.commandRefused`.
    enum CommandRefusal: String, Equatable {
        /// `settings.commands` is false.
        case commandsOff
        /// Its `replyTo` breaks ``ReplyTopic``'s rule.
        case replyTopic
        /// It came with the retain flag: a stale command (``RetainedMessages``).
        case retained
        /// MQTT 5: its message expiry interval ran out (the broker forwarded 0 seconds left).
        case expired
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
            guard !message.retain else {
                return .success(
                    .commandRefused(
                        .retained, "a retained command is never carried out: it was left for later hosts, not sent now")
                )
            }
            guard settings.commands else {
                return .success(
                    .commandRefused(
                        .commandsOff, "commands are off (settings.commands is false); nothing is published in reply"))
            }
            // A broker forwards what is left of a message's expiry interval and drops it at 0;
            // a 0 here is a command that expired on its way.
            if message.properties.messageExpiry == 0 {
                return .success(.commandRefused(.expired, "its message expiry interval ran out before it arrived"))
            }
            let correlation = message.properties.correlationData
            return json().flatMap { value in
                guard var object = value.objectValue else {
                    return .failure(RouteProblem("a command must be a JSON object"))
                }
                let inPayload = object.removeValue(forKey: "replyTo")
                // MQTT 5's response topic wins over the payload's replyTo (kept for 3.1.1).
                if let topic = message.properties.responseTopic {
                    if let why = ReplyTopic.refusal(topic, prefix: settings.prefix) {
                        return .success(
                            .commandRefused(.replyTopic, "\(why) (response topic \(JSONValue.string(topic)))"))
                    }
                    return .success(.request(.object(object), replyTo: Reply(topic: topic, correlation: correlation)))
                }
                switch inPayload {
                case nil: return .success(.request(.object(object), replyTo: nil))
                case .string(let topic):
                    if let why = ReplyTopic.refusal(topic, prefix: settings.prefix) {
                        return .success(.commandRefused(.replyTopic, "\(why) (replyTo \(JSONValue.string(topic)))"))
                    }
                    return .success(.request(.object(object), replyTo: Reply(topic: topic, correlation: correlation)))
                case let other?:
                    return .success(.commandRefused(.replyTopic, "replyTo must be a string, not \(other)"))
                }
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
