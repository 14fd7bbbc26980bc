import Glibc
import MQTTCodec

/// `host fleet`'s connection to the broker (issue 41): MQTT 5 through the bridge's codec
/// (MQTTCodec: the packets, the frame reader and the broker address), on the calling thread,
/// every wait bounded by a deadline on ``FleetClock``. It publishes at QoS 1 and waits for each
/// PUBACK; it subscribes at QoS 0 and reads the retained messages as they come.
final class FleetConnection {
    let broker: BrokerAddress
    private let fd: Int32
    private let clock: FleetClock
    private var reader: MQTTFrameReader
    private var nextID: UInt16 = 0
    /// Messages that came while waiting for an acknowledgement, handed out first.
    private var arrived: [MQTTPublish] = []
    private var lastSent: Double
    /// The largest packet the broker takes (its CONNACK's Maximum Packet Size), when it said.
    private(set) var brokerMaxPacket: Int?
    /// QoS 1 messages sent before their PUBACKs: at most the broker's Receive Maximum (its
    /// CONNACK's, 65535 when it says none), and 16.
    private(set) var inFlight = 16
    let clientID: String
    /// This connection's own topic, read back to know the broker sent everything before it.
    private var marker: String { "servicehost/fleet/sync/\(clientID)" }

    static let keepAlive: UInt16 = 30
    /// The largest packet read: states, reports and rollouts are small; a bundle is never read.
    static let maxPacket = 16 << 20

    /// Connects and waits (10 s at most) for the broker's CONNACK.
    init(_ connection: FleetCommand.Connection, clock: FleetClock) throws(FleetError) {
        broker = connection.broker
        self.clock = clock
        clientID = "host-fleet-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        switch connection.broker.connect() {
        case .success(let fd): self.fd = fd
        case .failure(let error): throw FleetError(.unreachable, "\(error)")
        }
        reader = MQTTFrameReader(maxPacket: Self.maxPacket, version: .v5)
        lastSent = clock.now()
        let connect = MQTTConnect(
            clientID: clientID, cleanSession: true, keepAlive: Self.keepAlive, username: connection.username,
            password: connection.password)
        try send(.connect(connect))
        let deadline = clock.now() + 10
        while true {
            guard let packet = try nextPacket(until: deadline) else {
                close(fd)
                throw FleetError(.unreachable, "\(broker) sent no CONNACK within 10 s")
            }
            guard case .connack(_, let code, let properties) = packet else { continue }
            guard code == 0 else {
                close(fd)
                let why =
                    code >= 0x80 ? MQTTReasonCode.name(code, packet: "CONNACK") : MQTTConnectReturn.describe(code)
                throw FleetError(.unreachable, "\(broker) refused the connection: \(why) (CONNACK code \(code))")
            }
            if case .fourByte(let limit)? = properties[0x27] { brokerMaxPacket = Int(limit) }
            if case .twoByte(let limit)? = properties[0x21] { inFlight = max(1, min(inFlight, Int(limit))) }
            return
        }
    }

    deinit {
        _ = try? send(.disconnect())
        close(fd)
    }

    /// Publishes `payload` on `topic` at QoS 1 and waits for the broker's PUBACK (10 s at most);
    /// a refusal (an MQTT 5 reason code, e.g. `packetTooLarge`, `notAuthorized`) names the topic.
    func publish(_ topic: String, _ payload: [UInt8], retain: Bool) throws(FleetError) {
        try publish([(topic, payload)], retain: retain)
    }

    /// Publishes each message in order at QoS 1, up to ``inFlight`` of them before their PUBACKs
    /// (rather than one round trip each: a wave's hosts get their desired state together), and
    /// waits for every PUBACK (10 s at most since the last came); a refusal names the topic.
    func publish(_ messages: [(topic: String, payload: [UInt8])], retain: Bool) throws(FleetError) {
        var waiting: [UInt16: String] = [:]
        var next = messages.startIndex
        var deadline = clock.now() + 10
        while next < messages.endIndex || !waiting.isEmpty {
            while next < messages.endIndex && waiting.count < inFlight {
                nextID = nextID == UInt16.max ? 1 : nextID + 1
                let (topic, payload) = messages[next]
                try send(.publish(MQTTPublish(topic: topic, payload: payload, qos: 1, retain: retain, id: nextID)))
                waiting[nextID] = topic
                next += 1
            }
            guard let packet = try nextPacket(until: deadline) else {
                let topic = waiting.values.sorted().first ?? ""
                throw FleetError(.unreachable, "\(broker) did not acknowledge \(topic) within 10 s")
            }
            if case .publish(let message) = packet { arrived.append(message) }
            if case .puback(let id, let reason) = packet, let topic = waiting.removeValue(forKey: id) {
                guard !MQTTReasonCode.isFailure(reason) else {
                    throw FleetError(
                        .refused, "\(broker) refused \(topic): \(MQTTReasonCode.name(reason, packet: "PUBACK"))")
                }
                deadline = clock.now() + 10
            }
        }
    }

    /// Subscribes to `filters` at QoS 0, then reads until every retained message they match has
    /// come (the broker sends them before a message published after the SUBACK, here one of our
    /// own on a topic of this connection's); those messages, in order.
    func retained(_ filters: [String]) throws(FleetError) -> [MQTTPublish] {
        nextID = nextID == UInt16.max ? 1 : nextID + 1
        let id = nextID
        try send(.subscribe(id: id, filters: (filters + [marker]).map { MQTTSubscription($0, qos: 0) }))
        let deadline = clock.now() + 10
        while true {
            guard let packet = try nextPacket(until: deadline) else {
                throw FleetError(.unreachable, "\(broker) did not acknowledge the subscription within 10 s")
            }
            if case .publish(let message) = packet { arrived.append(message) }
            if case .suback(id, let codes) = packet {
                if let refused = codes.firstIndex(where: { $0 >= 0x80 }) {
                    let filter = refused < filters.count ? filters[refused] : marker
                    throw FleetError(
                        .refused,
                        "\(broker) refused the subscription to \(filter): \(MQTTReasonCode.name(codes[refused], packet: "SUBACK"))"
                    )
                }
                break
            }
        }
        return try arrivedSoFar()
    }

    /// The messages on the subscribed topics that the broker had before now, without waiting for
    /// a silence: a message of our own on this connection's marker topic (subscribed by
    /// ``retained(_:)``) is published and read back, and the broker delivers in order.
    func arrivedSoFar() throws(FleetError) -> [MQTTPublish] {
        // QoS 0: the message coming back is the answer, no PUBACK to wait for.
        try send(.publish(MQTTPublish(topic: marker, payload: [], qos: 0, retain: false)))
        let deadline = clock.now() + 10
        var messages: [MQTTPublish] = []
        while let message = try receive(until: deadline) {
            if message.topic == marker { return messages }
            messages.append(message)
        }
        throw FleetError(.unreachable, "\(broker) did not send the messages on its topics within 10 s")
    }

    /// The next message on a subscribed topic, or nil at `deadline`.
    func receive(until deadline: Double) throws(FleetError) -> MQTTPublish? {
        if !arrived.isEmpty { return arrived.removeFirst() }
        while true {
            guard let packet = try nextPacket(until: deadline) else { return nil }
            if case .publish(let message) = packet { return message }
        }
    }

    /// The next packet, or nil at `deadline`. A message met on the way is kept for
    /// ``receive(until:)`` (when asked for something else); the connection is kept alive.
    private func nextPacket(until deadline: Double) throws(FleetError) -> MQTTPacket? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            do {
                while let frame = try reader.nextFrame() {
                    guard case .packet(let packet) = frame else { continue }
                    switch packet {
                    case .publish(let message):
                        if message.qos == 1, let id = message.id { try send(.puback(id: id)) }
                        return packet
                    case .pingresp: continue
                    case .disconnect(let code, let properties):
                        throw FleetError(
                            .unreachable,
                            "\(broker) disconnected: \(MQTTReasonCode.name(code, packet: "DISCONNECT"))"
                                + (properties.reasonString.map { " (\($0))" } ?? ""))
                    default: return packet
                    }
                }
            } catch let error as MQTTError {
                throw FleetError(.unreachable, "\(error.description) from \(broker)")
            } catch let error as FleetError {
                throw error
            } catch {
                throw FleetError(.unreachable, "\(error)")
            }
            let now = clock.now()
            guard now < deadline else { return nil }
            if now - lastSent >= Double(Self.keepAlive) / 2 { try send(.pingreq) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let wait = Int32(max(1, min(deadline - now, 1) * 1000))
            let ready = poll(&poller, 1, wait)
            if ready < 0 && errno != EINTR {
                throw FleetError(.unreachable, "poll \(broker): \(String(cString: strerror(errno)))")
            }
            guard ready > 0 else { continue }
            let name = broker.description
            let result = buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(SystemError) in
                    try retryingOnInterrupt("read", name) { read(fd, bytes.baseAddress, bytes.count) }
                }
            }
            let count: Int
            switch result {
            case .success(let read): count = read
            case .failure(let error): throw FleetError(.unreachable, "\(error)")
            }
            guard count > 0 else { throw FleetError(.unreachable, "\(broker) closed the connection") }
            BrokerAddress.acknowledgeNow(fd)
            reader.append(buffer[..<count])
        }
    }

    /// Writes `packet` whole.
    private func send(_ packet: MQTTPacket) throws(FleetError) {
        let bytes = packet.encoded(version: .v5)
        let name = broker.description
        let sent = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written =
                    (try? retryingOnInterrupt("send", name) {
                        Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                    }) ?? -1
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
        guard sent else {
            throw FleetError(.unreachable, "send \(packet.name) to \(broker): \(String(cString: strerror(errno)))")
        }
        lastSent = clock.now()
    }
}
