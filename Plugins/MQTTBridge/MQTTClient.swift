import Dispatch
import Glibc
import MQTTCodec
import ServiceKit

/// An MQTT 3.1.1 client on its own thread: connects, subscribes, reads, pings, and on any
/// failure drops the connection and reconnects after a backoff with jitter (0.5 s doubling
/// to 30 s, each wait a random 50–100% of that), until ``stop(sending:)``.
///
/// The broker's input is untrusted: every packet goes through ``MQTTFrameReader`` with the
/// `maxPacket` limit, and anything malformed, too large or unexpected ends the connection
/// with a log line naming the packet and the reason.
final class MQTTClient: Sendable {
    struct Handlers: Sendable {
        /// A message arrived (connection thread).
        let message: @Sendable (MQTTPublish) -> Void
        /// CONNACK accepted and the subscriptions sent (connection thread).
        let connected: @Sendable () -> Void
        let log: @Sendable (LogLevel, String) -> Void
    }

    private struct Connection {
        var fd: Int32 = -1
        var stopped = false
        var nextID: UInt16 = 0
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
        let bytes = packet.encoded()
        return connection.withLock { connection in
            guard connection.fd >= 0 else { return false }
            return Self.writeAll(connection.fd, bytes)
        }
    }

    /// Publishes `message` at `qos` (a QoS 1 message gets the next packet id).
    @discardableResult
    func publish(topic: String, _ payload: [UInt8], qos: UInt8, retain: Bool) -> Bool {
        connection.withLock { connection in
            guard connection.fd >= 0 else { return false }
            var message = MQTTPublish(topic: topic, payload: payload, qos: qos, retain: retain)
            if qos > 0 {
                connection.nextID = connection.nextID == UInt16.max ? 1 : connection.nextID + 1
                message.id = connection.nextID
            }
            return Self.writeAll(connection.fd, MQTTPacket.publish(message).encoded())
        }
    }

    /// Stops for good: sends `last` (e.g. the retained `offline` state) and DISCONNECT, so the
    /// broker does not also publish the will, and closes the socket.
    func stop(sending last: MQTTPublish?) {
        connection.withLock { connection in
            connection.stopped = true
            guard connection.fd >= 0 else { return }
            if let last { _ = Self.writeAll(connection.fd, MQTTPacket.publish(last).encoded()) }
            _ = Self.writeAll(connection.fd, MQTTPacket.disconnect.encoded())
            shutdown(connection.fd, Int32(SHUT_RDWR))  // wakes the reader, which closes it
        }
    }

    private var isStopped: Bool { connection.withLock { $0.stopped } }

    private func run() {
        var failures = 0
        while !isStopped {
            switch settings.broker.connect() {
            case .failure(let error):
                handlers.log(failures == 0 ? .warn : .debug, "mqtt.unreachable: \(error)")
            case .success(let fd):
                if session(fd) { failures = 0 }
            }
            if isStopped { break }
            let delay = min(0.5 * Double(1 << min(failures, 6)), 30) * Double.random(in: 0.5...1.0)
            failures += 1
            handlers.log(.debug, "mqtt.reconnecting: in \(delay) s")
            usleep(UInt32(delay * 1_000_000))
        }
    }

    /// One connection, until it fails or the client stops; true when the broker accepted it.
    private func session(_ fd: Int32) -> Bool {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)  // a stuck broker never blocks a writer for long
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let keepAlive = Double(settings.keepAlive)
        var reader = MQTTFrameReader(maxPacket: settings.maxPacket)
        var accepted = false
        let end: String
        defer {
            connection.withLock { $0.fd = -1 }
            close(fd)
        }
        let connect = MQTTConnect(
            clientID: settings.clientID, cleanSession: false, keepAlive: settings.keepAlive, will: will,
            username: settings.username, password: settings.password)
        guard Self.writeAll(fd, MQTTPacket.connect(connect).encoded()) else {
            handlers.log(
                .warn,
                "mqtt.disconnected: cannot send CONNECT to \(settings.broker): \(String(cString: strerror(errno)))")
            return false
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
                end = "no PINGRESP within the keep-alive (\(settings.keepAlive) s)"
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
            reader.append(buffer[..<count])
            do {
                while let packet = try reader.next() {
                    switch packet {
                    case .connack(_, let code) where !accepted:
                        guard code == 0 else {
                            handlers.log(
                                .error,
                                "mqtt.refused code=\(code): \(settings.broker) refused the connection: \(MQTTConnectReturn.describe(code)) (CONNACK return code \(code))"
                            )
                            end = "refused"
                            break loop
                        }
                        accepted = true
                        connection.withLock { $0.fd = fd }
                        handlers.log(.info, "mqtt.connected: \(settings.broker) as \(settings.clientID)")
                        send(.subscribe(id: 1, filters: subscriptions))
                        handlers.connected()
                    case .suback(_, let codes):
                        if let index = codes.firstIndex(of: 0x80) {
                            handlers.log(
                                .error,
                                "mqtt.subscribeRefused: the broker refused the subscription to \(subscriptions[min(index, subscriptions.count - 1)].filter)"
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
                    case .puback, .unsuback: break
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
        if accepted && end != "stopped" { handlers.log(.warn, "mqtt.disconnected: \(end)") }
        return accepted
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
