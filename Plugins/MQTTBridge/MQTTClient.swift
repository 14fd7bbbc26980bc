import Dispatch
import Glibc
import MQTTCodec
import ServiceKit

/// An MQTT 5 or 3.1.1 client (``MQTTBridgeSettings/protocolVersion``) on its own thread: connects, subscribes, reads, pings, and on any
/// failure drops the connection and reconnects after a backoff with jitter
/// (``ReconnectBackoff``: 0.5 s doubling to 30 s while sessions fail before doing useful
/// work), until ``stop(sending:)``.
///
/// The broker's input is untrusted: every packet goes through ``MQTTFrameReader`` with the
/// `maxPacket` limit; a message over it is read past without being buffered and handed to
/// ``Handlers/skipped``; anything malformed or unexpected (or another packet too large) ends
/// the connection with a log line naming the packet and the reason.
final class MQTTClient: Sendable {
    struct Handlers: Sendable {
        /// A message arrived (connection thread).
        let message: @Sendable (MQTTPublish) -> Void
        /// A message over `maxPacket` was read past, its payload dropped (connection thread).
        let skipped: @Sendable (MQTTSkippedPublish) -> Void
        /// CONNACK accepted and the subscriptions sent (connection thread).
        let connected: @Sendable () -> Void
        let log: @Sendable (LogLevel, String) -> Void
    }

    private struct Connection {
        var fd: Int32 = -1
        var stopped = false
        var nextID: UInt16 = 0
        /// PUBACKs sent on this connection: whether it did useful work (``ReconnectBackoff``).
        var acknowledged = 0
    }

    private let settings: MQTTBridgeSettings
    private let subscriptions: [MQTTSubscription]
    private let will: MQTTPublish
    private let handlers: Handlers
    // The socket, shared by the connection thread (reads) and writers on any thread.
    private let connection = Locked(Connection())

    init(settings: MQTTBridgeSettings, subscriptions: [MQTTSubscription], will: MQTTPublish, handlers: Handlers) {
        self.settings = settings
        self.subscriptions = subscriptions
        self.will = will
        self.handlers = handlers
    }

    /// Starts the connection thread.
    func start() {
        DispatchQueue(label: "servicehost.mqtt-bridge.connection").async { [self] in run() }
    }

    /// Sends `packet` on the current connection; false when there is none (the broker will
    /// redeliver what an unsent PUBACK was for).
    @discardableResult
    func send(_ packet: MQTTPacket) -> Bool {
        let bytes = packet.encoded(version: version)
        return connection.withLock { connection in
            guard connection.fd >= 0, Self.writeAll(connection.fd, bytes) else { return false }
            if case .puback = packet { connection.acknowledged += 1 }
            return true
        }
    }

    /// Publishes `message` at `qos` (a QoS 1 message gets the next packet id), with
    /// `properties` in MQTT 5.
    @discardableResult
    func publish(
        topic: String, _ payload: [UInt8], qos: UInt8, retain: Bool, properties: MQTTProperties = MQTTProperties()
    ) -> Bool {
        connection.withLock { connection in
            guard connection.fd >= 0 else { return false }
            var message = MQTTPublish(topic: topic, payload: payload, qos: qos, retain: retain, properties: properties)
            if qos > 0 {
                connection.nextID = connection.nextID == UInt16.max ? 1 : connection.nextID + 1
                message.id = connection.nextID
            }
            return Self.writeAll(connection.fd, MQTTPacket.publish(message).encoded(version: version))
        }
    }

    /// Subscribes to `filters` on the current connection (a fleet bundle's topics, issue 41);
    /// false when there is none (the caller subscribes again when connected).
    @discardableResult
    func subscribe(_ filters: [MQTTSubscription]) -> Bool {
        connection.withLock { connection in
            guard connection.fd >= 0 else { return false }
            connection.nextID = connection.nextID == UInt16.max ? 1 : connection.nextID + 1
            return Self.writeAll(
                connection.fd, MQTTPacket.subscribe(id: connection.nextID, filters: filters).encoded(version: version))
        }
    }

    /// Unsubscribes from `filters`; false when there is no connection.
    @discardableResult
    func unsubscribe(_ filters: [String]) -> Bool {
        connection.withLock { connection in
            guard connection.fd >= 0 else { return false }
            connection.nextID = connection.nextID == UInt16.max ? 1 : connection.nextID + 1
            return Self.writeAll(
                connection.fd, MQTTPacket.unsubscribe(id: connection.nextID, filters: filters).encoded(version: version)
            )
        }
    }

    /// Stops for good: sends `last` (e.g. the retained `offline` state) and DISCONNECT, so the
    /// broker does not also publish the will, and closes the socket.
    func stop(sending last: MQTTPublish?) {
        connection.withLock { connection in
            connection.stopped = true
            guard connection.fd >= 0 else { return }
            if let last { _ = Self.writeAll(connection.fd, MQTTPacket.publish(last).encoded(version: version)) }
            _ = Self.writeAll(connection.fd, MQTTPacket.disconnect().encoded(version: version))
            shutdown(connection.fd, Int32(SHUT_RDWR))  // wakes the reader, which closes it
        }
    }

    private var version: MQTTVersion { settings.protocolVersion.codec }

    private var isStopped: Bool { connection.withLock { $0.stopped } }

    private func run() {
        var backoff = ReconnectBackoff()
        while !isStopped {
            var ended: (acceptedAt: Double?, reason: String)?
            switch settings.broker.connect() {
            case .failure(let error):
                handlers.log(backoff.failures == 0 ? .warn : .debug, "mqtt.unreachable: \(error)")
            case .success(let fd):
                ended = session(fd)
            }
            if isStopped { break }
            let acknowledged = connection.withLock { $0.acknowledged }
            backoff.ended(
                useful: ReconnectBackoff.isUseful(
                    acceptedAt: ended?.acceptedAt, endedAt: now(), acknowledged: acknowledged))
            let delay = backoff.delay(unit: Double.random(in: 0.5...1.0))
            if let ended, ended.acceptedAt != nil {
                handlers.log(
                    .warn,
                    "mqtt.disconnected failures=\(backoff.failures) acknowledged=\(acknowledged): \(ended.reason); reconnecting in \(Int(delay * 1000)) ms"
                )
            } else {
                handlers.log(.debug, "mqtt.reconnecting failures=\(backoff.failures): in \(Int(delay * 1000)) ms")
            }
            usleep(UInt32(delay * 1_000_000))
        }
    }

    /// One connection, until it fails or the client stops: when the broker accepted it (nil:
    /// never) and why it ended.
    private func session(_ fd: Int32) -> (acceptedAt: Double?, reason: String) {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)  // a stuck broker never blocks a writer for long
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var keepAlive = Double(settings.keepAlive)
        var reader = MQTTFrameReader(maxPacket: settings.maxPacket, version: version)
        var acceptedAt: Double?
        var accepted: Bool { acceptedAt != nil }
        let end: String
        connection.withLock { $0.acknowledged = 0 }
        defer {
            connection.withLock { $0.fd = -1 }
            close(fd)
        }
        // MQTT 5: the session outlives a disconnection by `sessionExpiry` seconds, not for ever.
        let connect = MQTTConnect(
            clientID: settings.clientID, cleanSession: false, keepAlive: settings.keepAlive, will: will,
            username: settings.username, password: settings.password,
            properties: MQTTProperties([(0x11, .fourByte(settings.sessionExpiry))]))
        guard Self.writeAll(fd, MQTTPacket.connect(connect).encoded(version: version)) else {
            handlers.log(
                .warn,
                "mqtt.disconnected: cannot send CONNECT to \(settings.broker): \(String(cString: strerror(errno)))")
            return (nil, "cannot send CONNECT")
        }
        var lastPing = now()
        var pingOutstanding: Double?
        var buffer = [UInt8](repeating: 0, count: 65536)
        loop: while true {
            if isStopped {
                end = "stopped"
                break
            }
            let waitMS = Int32(max(1, min(keepAlive / 2, 1) * 1000))
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, waitMS)
            let time = now()
            if ready < 0 && errno != EINTR {
                end = "poll: \(String(cString: strerror(errno)))"
                break
            }
            if !accepted && time - lastPing > max(keepAlive, 10) {
                end = "no CONNACK from \(settings.broker) within \(Int(max(keepAlive, 10))) s"
                break
            }
            if let sent = pingOutstanding, time - sent > keepAlive {
                end = "no PINGRESP within the keep-alive (\(Int(keepAlive)) s)"
                break
            }
            if accepted && time - lastPing >= keepAlive / 2 {
                send(.pingreq)
                lastPing = time
                if pingOutstanding == nil { pingOutstanding = time }
            }
            guard ready > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { bytes in
                retryingOnInterrupt { read(fd, bytes.baseAddress, bytes.count) }
            }
            if count < 0 && errno == EAGAIN { continue }
            if count <= 0 {
                end = count == 0 ? "the broker closed the connection" : "read: \(String(cString: strerror(errno)))"
                break
            }
            BrokerAddress.acknowledgeNow(fd)
            reader.append(buffer[..<count])
            do {
                while let frame = try reader.nextFrame() {
                    if case .skipped(let message) = frame {
                        guard accepted, message.qos < 2 else {
                            end =
                                accepted
                                ? "a QoS 2 message on \(message.topic): the bridge subscribes at QoS 1 only"
                                : "unexpected PUBLISH from the broker before CONNACK"
                            handlers.log(.error, "mqtt.protocolError error=unexpected packet=PUBLISH: \(end)")
                            break loop
                        }
                        handlers.skipped(message)
                        continue
                    }
                    guard case .packet(let packet) = frame else { continue }
                    switch packet {
                    case .connack(let sessionPresent, let code, let properties) where !accepted:
                        guard code == 0 else {
                            // Below 0x80 under version 5 is a 3.1.1 broker's return code (1: it does
                            // not speak version 5).
                            let why =
                                version == .v5 && code >= 0x80
                                ? MQTTReasonCode.name(code, packet: "CONNACK") + Self.saying(properties)
                                : MQTTConnectReturn.describe(code)
                                    + (version == .v5 && code == 1 ? " (set \"protocol\": \"3.1.1\")" : "")
                            handlers.log(
                                .error,
                                "mqtt.refused code=\(code)\(code >= 0x80 ? reasonField(code, "CONNACK") : ""): \(settings.broker) refused the connection: \(why) (CONNACK return code \(code))"
                            )
                            end = "refused"
                            break loop
                        }
                        acceptedAt = time
                        // MQTT 5 3.2.2.3.14: the broker's keep-alive replaces ours (0, "none", is
                        // left aside: pinging anyway costs nothing and keeps the loop's waits).
                        if let server = properties.serverKeepAlive, server > 0 { keepAlive = Double(server) }
                        connection.withLock { $0.fd = fd }
                        handlers.log(
                            .info,
                            "mqtt.connected protocol=\(settings.protocolVersion.rawValue) sessionPresent=\(sessionPresent): \(settings.broker) as \(settings.clientID)"
                        )
                        send(.subscribe(id: 1, filters: subscriptions))
                        handlers.connected()
                    case .suback(let id, let codes):
                        for (index, code) in codes.enumerated() where code >= 0x80 {
                            handlers.log(
                                .error,
                                "mqtt.subscribeRefused code=\(code)\(reasonField(code, "SUBACK")): the broker refused the subscription to \(id == 1 ? subscriptions[min(index, subscriptions.count - 1)].filter : "a fleet bundle's topics")"
                            )
                        }
                    case .publish(let message) where accepted:
                        guard message.qos < 2 else {
                            end = "a QoS 2 message on \(message.topic): the bridge subscribes at QoS 1 only"
                            handlers.log(.error, "mqtt.protocolError error=unexpected packet=PUBLISH: \(end)")
                            break loop
                        }
                        handlers.message(message)
                    case .pingresp: pingOutstanding = nil
                    case .puback(let id, let code):
                        // MQTT 5: the broker says why it did not take a message the bridge
                        // published (notAuthorized: an ACL); noMatchingSubscribers is no failure.
                        if MQTTReasonCode.isFailure(code) {
                            handlers.log(
                                .warn,
                                "mqtt.publishRefused code=\(code)\(reasonField(code, "PUBACK")) packet=\(id): the broker did not accept a message the bridge published"
                            )
                        }
                    case .unsuback: break
                    case .disconnect(let code, let properties) where version == .v5:
                        end =
                            "the broker disconnected: \(MQTTReasonCode.name(code, packet: "DISCONNECT"))\(Self.saying(properties))"
                        handlers.log(
                            .warn, "mqtt.brokerDisconnected code=\(code)\(reasonField(code, "DISCONNECT")): \(end)")
                        break loop
                    default:
                        end = "unexpected \(packet.name) from the broker" + (accepted ? "" : " before CONNACK")
                        handlers.log(.error, "mqtt.protocolError error=unexpected packet=\(packet.name): \(end)")
                        break loop
                    }
                }
            } catch {
                end = error.description
                let packet = error.packet.map { " packet=\($0)" } ?? ""
                handlers.log(
                    .error,
                    "mqtt.protocolError error=\(error.code.rawValue)\(packet): \(error.description) from \(settings.broker); dropping the connection"
                )
                break
            }
        }
        return (acceptedAt, end)
    }

    /// ` reason=NAME` for the log in MQTT 5, where `code` is a reason code; nothing in 3.1.1.
    private func reasonField(_ code: UInt8, _ packet: String) -> String {
        version == .v5 ? " reason=\(MQTTReasonCode.name(code, packet: packet))" : ""
    }

    /// The broker's reason string (MQTT 5), as `: TEXT` for the log, or nothing.
    private static func saying(_ properties: MQTTProperties) -> String {
        properties.reasonString.map { " (the broker says \(JSONValue.string($0)))" } ?? ""
    }

    private func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = retryingOnInterrupt {
                    Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                }
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
    }
}
