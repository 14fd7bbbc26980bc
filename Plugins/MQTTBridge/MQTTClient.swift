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
        /// A connection handed over by the copy this one replaces was taken over: no CONNECT,
        /// the subscriptions in force (connection thread).
        let resumed: @Sendable () -> Void
        let log: @Sendable (LogLevel, String) -> Void
    }

    /// A connection between two packets, as one copy of the bridge hands it to the next
    /// (``park(within:forwardingTo:)``, ``start(adopting:)``; issue 42).
    struct Session: Sendable {
        var fd: Int32
        /// The keep-alive in force, in seconds; CLOCK_MONOTONIC times of the last PINGREQ and
        /// of the one not answered yet.
        var keepAlive: Double
        var lastPing: Double
        var pingOutstanding: Double?
        var nextID: UInt16
        /// Bytes read that do not make a whole packet yet.
        var held: [UInt8]
    }

    private struct Connection {
        var fd: Int32 = -1
        var stopped = false
        var nextID: UInt16 = 0
        /// PUBACKs sent on this connection: whether it did useful work (``ReconnectBackoff``).
        var acknowledged = 0
        /// Asked to park for a hand-over; the connection thread answers with `parked` (nil: it
        /// could not) and a signal.
        var parking = false
        var parked: Session?
        /// After a hand-over: the channel to the replacement, where this copy's writes go
        /// (``ChannelRecord``), so the socket keeps one writer.
        var forward: Int32 = -1
    }

    private let settings: MQTTBridgeSettings
    private let subscriptions: [MQTTSubscription]
    private let will: MQTTPublish
    private let handlers: Handlers
    // The socket, shared by the connection thread (reads) and writers on any thread.
    private let connection = Locked(Connection())
    /// Wakes the connection thread's poll for a hand-over: the pipe's read end and write end.
    private let wake: (read: Int32, write: Int32)
    private let parkedSignal = DispatchSemaphore(value: 0)

    init(settings: MQTTBridgeSettings, subscriptions: [MQTTSubscription], will: MQTTPublish, handlers: Handlers) {
        self.settings = settings
        self.subscriptions = subscriptions
        self.will = will
        self.handlers = handlers
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        }
        wake = (ends[0], ends[1])
    }

    deinit {
        if wake.read >= 0 { close(wake.read) }
        if wake.write >= 0 { close(wake.write) }
    }

    /// Starts the connection thread; with `adopted`, it goes on with that connection first
    /// (no CONNECT), then connects as usual when it ends.
    func start(adopting adopted: Session? = nil) {
        DispatchQueue(label: "servicehost.mqtt-bridge.connection").async { [self] in run(adopting: adopted) }
    }

    /// Sends `packet` on the current connection; false when there is none (the broker will
    /// redeliver what an unsent PUBACK was for).
    @discardableResult
    func send(_ packet: MQTTPacket) -> Bool {
        let bytes = packet.encoded(version: version)
        return connection.withLock { connection in
            guard Self.write(&connection, bytes) else { return false }
            if case .puback = packet { connection.acknowledged += 1 }
            return true
        }
    }

    /// Writes bytes the copy this one replaced sent through its channel (whole packets).
    @discardableResult
    func write(raw bytes: [UInt8]) -> Bool { connection.withLock { Self.write(&$0, bytes) } }

    /// Sends `record` to the replacement once the connection was handed over; false before,
    /// or when the channel is closed (the caller does the work itself).
    func forward(_ record: ChannelRecord) -> Bool {
        connection.withLock { $0.fd < 0 && $0.forward >= 0 && Self.writeAll($0.forward, record.encoded) }
    }

    /// Closes the channel to the replacement: this copy has nothing more to write (the
    /// replacement sees its end and sends its own PUBACKs from then on).
    func endForwarding() {
        connection.withLock { connection in
            guard connection.forward >= 0 else { return }
            close(connection.forward)
            connection.forward = -1
        }
    }

    /// Parks the connection for the copy that replaces this one (issue 42): the connection
    /// thread stops between two reads, after the packets it read were handled, and leaves the
    /// socket open and connected; writes go to `channel` from then on. Returns the connection,
    /// or nil when there is none to hand over (not connected, a message over `maxPacket` being
    /// read past, too many bytes held, or the thread did not stop within `timeout` seconds):
    /// then this client runs on and ``stop(sending:)`` ends it as before.
    func park(within timeout: Double, forwardingTo channel: Int32) -> Session? {
        let asked = connection.withLock { connection in
            guard connection.fd >= 0, !connection.stopped else { return false }
            connection.parking = true
            connection.parked = nil
            connection.forward = channel
            return true
        }
        guard asked else { return nil }
        var byte: UInt8 = 1
        _ = Glibc.write(wake.write, &byte, 1)
        _ = parkedSignal.wait(timeout: .now() + timeout)
        // Parked or not (then writes go to the socket again), answered under the lock: a thread
        // that parks after the wait gave up sees `parking` cleared and goes on.
        return connection.withLock { connection in
            connection.parking = false
            guard let parked = connection.parked else {
                connection.forward = -1
                return nil
            }
            connection.parked = nil
            return parked
        }
    }

    /// Publishes `message` at `qos` (a QoS 1 message gets the next packet id), with
    /// `properties` in MQTT 5.
    @discardableResult
    func publish(
        topic: String, _ payload: [UInt8], qos: UInt8, retain: Bool, properties: MQTTProperties = MQTTProperties()
    ) -> Bool {
        connection.withLock { connection in
            guard connection.fd >= 0 || connection.forward >= 0 else { return false }
            var message = MQTTPublish(topic: topic, payload: payload, qos: qos, retain: retain, properties: properties)
            if qos > 0 {
                connection.nextID = connection.nextID == UInt16.max ? 1 : connection.nextID + 1
                message.id = connection.nextID
            }
            return Self.write(&connection, MQTTPacket.publish(message).encoded(version: version))
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

    private func run(adopting adopted: Session?) {
        var backoff = ReconnectBackoff()
        var adopted = adopted
        while !isStopped {
            var ended: (acceptedAt: Double?, reason: String)?
            if let taken = adopted {
                adopted = nil
                ended = session(taken.fd, adopting: taken)
            } else {
                switch settings.broker.connect() {
                case .failure(let error):
                    handlers.log(backoff.failures == 0 ? .warn : .debug, "mqtt.unreachable: \(error)")
                case .success(let fd):
                    ended = session(fd)
                }
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
    /// `adopting`: a connection the copy this one replaces handed over, already accepted.
    private func session(_ fd: Int32, adopting adopted: Session? = nil) -> (acceptedAt: Double?, reason: String) {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)  // a stuck broker never blocks a writer for long
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var keepAlive = adopted?.keepAlive ?? Double(settings.keepAlive)
        var reader = MQTTFrameReader(maxPacket: settings.maxPacket, version: version)
        var acceptedAt: Double? = adopted.map { _ in now() }
        var accepted: Bool { acceptedAt != nil }
        let end: String
        // Handed to the next copy: the socket stays open.
        var handedOver = false
        connection.withLock { $0.acknowledged = 0 }
        defer {
            let waiting = connection.withLock { connection in
                connection.fd = -1
                defer { connection.parking = false }
                return connection.parking
            }
            if !handedOver { close(fd) }
            // Asked to park but ended otherwise: the asker need not wait for its timeout.
            if waiting { parkedSignal.signal() }
        }
        var lastPing = now()
        var pingOutstanding: Double?
        if let adopted {
            reader.append(adopted.held)
            lastPing = min(adopted.lastPing, lastPing)
            pingOutstanding = adopted.pingOutstanding.map { min($0, lastPing) }
            connection.withLock {
                $0.fd = fd
                $0.nextID = adopted.nextID
            }
            handlers.log(
                .info,
                "mqtt.adopted protocol=\(settings.protocolVersion.rawValue): went on with the connection to \(settings.broker) as \(settings.clientID) that the copy it replaces handed over (no new CONNECT)"
            )
            handlers.resumed()
        }
        // MQTT 5: the session outlives a disconnection by `sessionExpiry` seconds, not for ever.
        let connect = MQTTConnect(
            clientID: settings.clientID, cleanSession: false, keepAlive: settings.keepAlive, will: will,
            username: settings.username, password: settings.password,
            properties: MQTTProperties([(0x11, .fourByte(settings.sessionExpiry))]))
        guard adopted != nil || Self.writeAll(fd, MQTTPacket.connect(connect).encoded(version: version)) else {
            handlers.log(
                .warn,
                "mqtt.disconnected: cannot send CONNECT to \(settings.broker): \(String(cString: strerror(errno)))")
            return (nil, "cannot send CONNECT")
        }
        var buffer = [UInt8](repeating: 0, count: 65536)
        loop: while true {
            if isStopped {
                end = "stopped"
                break
            }
            // A hand-over (issue 42) is answered here, between two reads: every packet read so
            // far was handled, what is left of one is `reader.held`, the rest is in the socket.
            if connection.withLock({ $0.parking }) {
                let parked = connection.withLock { connection in
                    guard connection.parking, accepted, !reader.isReadingPast,
                        reader.pending <= BridgeHandOver.largestHeld
                    else { return false }
                    connection.parking = false
                    connection.parked = Session(
                        fd: fd, keepAlive: keepAlive, lastPing: lastPing, pingOutstanding: pingOutstanding,
                        nextID: connection.nextID, held: reader.held)
                    connection.fd = -1
                    connection.stopped = true
                    return true
                }
                if parked {
                    handedOver = true
                    parkedSignal.signal()
                    end = "handed over"
                    break
                }
                connection.withLock { $0.parking = false }
                parkedSignal.signal()
            }
            let waitMS = Int32(max(1, min(keepAlive / 2, 1) * 1000))
            var pollers = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&pollers, wake.read >= 0 ? 2 : 1, waitMS)
            if pollers[1].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 16)
                while Glibc.read(wake.read, &drained, drained.count) > 0 {}
            }
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
            guard ready > 0, pollers[0].revents != 0 else { continue }
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

    /// Writes `bytes` on the connection, or after a hand-over to the replacement's channel.
    private static func write(_ connection: inout Connection, _ bytes: [UInt8]) -> Bool {
        if connection.fd >= 0 { return writeAll(connection.fd, bytes) }
        return connection.forward >= 0 && writeAll(connection.forward, ChannelRecord.write(bytes).encoded)
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
