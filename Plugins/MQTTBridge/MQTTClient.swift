import Dispatch
import Glibc
import MQTTCodec
import ServiceKit

/// An MQTT 5 or 3.1.1 client (``MQTTBridgeSettings/protocolVersion``): connects, subscribes,
/// reads, pings, and on any failure drops the connection and reconnects after a backoff with
/// jitter (``ReconnectBackoff``: 0.5 s doubling to 30 s while sessions fail before doing
/// useful work), until ``stop(sending:)``.
///
/// Who reads the socket (issue 37): in the host's process, the host's main loop watches it
/// (extension `dev.servicehost.sources/1`, ``MainLoopState``), so a packet is read and handled
/// on the main thread with no other thread woken; in a worker process, or from a host without
/// the extension, a connection thread of its own polls it (``ReaderPath``).
///
/// The broker's input is untrusted: every packet goes through ``MQTTFrameReader`` with the
/// `maxPacket` limit; a message over it is read past without being buffered and handed to
/// ``Handlers/skipped``; anything malformed or unexpected (or another packet too large) ends
/// the connection with a log line naming the packet and the reason.
final class MQTTClient: Sendable {
    struct Handlers: Sendable {
        // Each is called by the socket's reader: the main thread (``ReaderPath/mainLoop``) or
        // the connection thread (``ReaderPath/thread``); none may wait for the main thread.
        /// A message arrived.
        let message: @Sendable (MQTTPublish) -> Void
        /// A message over `maxPacket` was read past, its payload dropped.
        let skipped: @Sendable (MQTTSkippedPublish) -> Void
        /// CONNACK accepted and the subscriptions sent.
        let connected: @Sendable () -> Void
        /// A connection handed over by the copy this one replaces was taken over: no CONNECT,
        /// the subscriptions in force.
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

    /// What the reader and the writers share, under ``connection``'s lock.
    struct Connection {
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
        /// ``ReaderPath/mainLoop``: what the connect queue's last attempt gave, for the main
        /// thread to take (``MainLoopState``).
        var attempt: Result<Int32, ConnectionError>?
    }

    let settings: MQTTBridgeSettings
    private let subscriptions: [MQTTSubscription]
    private let will: MQTTPublish
    let handlers: Handlers
    // The socket, shared by its reader (the main thread or the connection thread) and writers
    // on any thread.
    let connection = Locked(Connection())
    /// Wakes the connection thread's poll for a hand-over, or (``ReaderPath/mainLoop``) the
    /// main loop when an attempt to connect is over: the pipe's read end and write end.
    let wake: (read: Int32, write: Int32)
    private let parkedSignal = DispatchSemaphore(value: 0)
    /// The main-loop reader's state: main thread only.
    let mainLoop = MainLoopState()

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

    /// Starts; with `adopted`, goes on with that connection first (no CONNECT), then connects
    /// as usual when it ends. With `host`, on the main thread: the socket is read on the host's
    /// main loop when the host lets this service watch a descriptor there (in its own
    /// process), else on the connection thread.
    func start(adopting adopted: Session? = nil, watchingWith host: HostContext? = nil) {
        if let host, startOnMainLoop(host, adopting: adopted) { return }
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
        // On the main loop, this call (on the main thread) is between two reads already.
        if mainLoop.isOn { return parkOnMainLoop(forwardingTo: channel) }
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
            return Self.write(
                &connection, MQTTPacket.subscribe(id: connection.nextID, filters: filters).encoded(version: version))
        }
    }

    /// Unsubscribes from `filters`; false when there is no connection.
    @discardableResult
    func unsubscribe(_ filters: [String]) -> Bool {
        connection.withLock { connection in
            guard connection.fd >= 0 else { return false }
            connection.nextID = connection.nextID == UInt16.max ? 1 : connection.nextID + 1
            return Self.write(
                &connection, MQTTPacket.unsubscribe(id: connection.nextID, filters: filters).encoded(version: version))
        }
    }

    /// Stops for good: sends `last` (e.g. the retained `offline` state) and DISCONNECT, so the
    /// broker does not also publish the will, and closes the socket. Main thread.
    func stop(sending last: MQTTPublish?) {
        connection.withLock { connection in
            connection.stopped = true
            guard connection.fd >= 0 else { return }
            if let last { _ = Self.writeAll(connection.fd, MQTTPacket.publish(last).encoded(version: version)) }
            if Self.writeAll(connection.fd, MQTTPacket.disconnect().encoded(version: version)) {
                Self.awaitBrokerClose(connection.fd, within: 0.3)
            }
            shutdown(connection.fd, Int32(SHUT_RDWR))  // wakes the reader, which closes it
        }
        // The main loop's reader is this thread: it ends the session now.
        if mainLoop.isOn { stopOnMainLoop() }
    }

    var version: MQTTVersion { settings.protocolVersion.codec }

    var isStopped: Bool { connection.withLock { $0.stopped } }

    /// Which reader reads the socket: the `reader=` field of `mqtt.connected` and `mqtt.adopted`.
    enum ReaderPath: String, Sendable {
        /// The host's main loop watches the socket (extension `dev.servicehost.sources/1`, in
        /// the host's process): packets are read and handled on the main thread, no other thread
        /// woken.
        case mainLoop
        /// The connection thread polls and reads it (a worker process, or a host without the
        /// extension).
        case thread
    }

    /// One connection's protocol state between two reads. Owned by its one reader, never
    /// shared: the connection thread's stack (``ReaderPath/thread``) or the main thread's
    /// ``MainLoopState`` (``ReaderPath/mainLoop``), so it needs no lock.
    struct Link {
        let fd: Int32
        let path: ReaderPath
        /// The keep-alive in force, in seconds (the broker's, once its CONNACK says one).
        var keepAlive: Double
        var reader: MQTTFrameReader
        /// CLOCK_MONOTONIC time of the CONNACK (nil: not accepted yet); of the last PINGREQ, or
        /// of the CONNECT before the CONNACK; of the PINGREQ not answered yet.
        var acceptedAt: Double?
        var lastPing: Double
        var pingOutstanding: Double?
        var accepted: Bool { acceptedAt != nil }
    }

    /// The connection thread (``ReaderPath/thread``): connects, runs each session, waits out
    /// the backoff, until stopped.
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
                case .failure(let error): unreachable(error, backoff)
                case .success(let fd): ended = session(fd)
                }
            }
            if isStopped { break }
            usleep(UInt32(reconnectDelay(&backoff, ended: ended) * 1_000_000))
        }
    }

    /// Logs an attempt to connect that failed: at warn the first in a row, then at debug.
    func unreachable(_ error: ConnectionError, _ backoff: ReconnectBackoff) {
        handlers.log(backoff.failures == 0 ? .warn : .debug, "mqtt.unreachable: \(error)")
    }

    /// Records how a session (nil: an attempt to connect) ended, logs it, and returns the wait
    /// in seconds before the next attempt.
    func reconnectDelay(_ backoff: inout ReconnectBackoff, ended: (acceptedAt: Double?, reason: String)?) -> Double {
        let acknowledged = connection.withLock { $0.acknowledged }
        backoff.ended(
            useful: ReconnectBackoff.isUseful(acceptedAt: ended?.acceptedAt, endedAt: now(), acknowledged: acknowledged)
        )
        let delay = backoff.delay(unit: Double.random(in: 0.5...1.0))
        if let ended, ended.acceptedAt != nil {
            handlers.log(
                .warn,
                "mqtt.disconnected failures=\(backoff.failures) acknowledged=\(acknowledged): \(ended.reason); reconnecting in \(Int(delay * 1000)) ms"
            )
        } else {
            handlers.log(.debug, "mqtt.reconnecting failures=\(backoff.failures): in \(Int(delay * 1000)) ms")
        }
        return delay
    }

    /// One connection on the connection thread, until it fails or the client stops: when the
    /// broker accepted it (nil: never) and why it ended.
    /// `adopting`: a connection the copy this one replaces handed over, already accepted.
    private func session(_ fd: Int32, adopting adopted: Session? = nil) -> (acceptedAt: Double?, reason: String) {
        guard var link = begin(fd, adopting: adopted, path: .thread) else {
            finish(fd, handedOver: false)
            return (nil, "cannot send CONNECT")
        }
        var handedOver = false
        var buffer = [UInt8](repeating: 0, count: Self.readSize)
        let end: String
        while true {
            if isStopped {
                end = "stopped"
                break
            }
            // A hand-over (issue 42) is answered here, between two reads: every packet read so
            // far was handled, what is left of one is `reader.held`, the rest is in the socket.
            if connection.withLock({ $0.parking }) {
                if connection.withLock({ park(link, from: &$0) }) {
                    handedOver = true
                    parkedSignal.signal()
                    end = "handed over"
                    break
                }
                connection.withLock { $0.parking = false }
                parkedSignal.signal()
            }
            let waitMS = Int32(Self.tickInterval(link.keepAlive) * 1000)
            var pollers = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&pollers, wake.read >= 0 ? 2 : 1, waitMS)
            if pollers[1].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 16)
                while Glibc.read(wake.read, &drained, drained.count) > 0 {}
            }
            if ready < 0 && errno != EINTR {
                end = "poll: \(String(cString: strerror(errno)))"
                break
            }
            if let ended = tick(&link, at: now()) {
                end = ended
                break
            }
            guard ready > 0, pollers[0].revents != 0 else { continue }
            if let ended = readAvailable(&link, into: &buffer) {
                end = ended
                break
            }
        }
        finish(fd, handedOver: handedOver)
        return (link.acceptedAt, end)
    }

    /// Bytes asked of the socket by one read.
    static let readSize = 65536

    /// Seconds between two keep-alive checks: half the keep-alive, at most 1 s, at least 1 ms.
    static func tickInterval(_ keepAlive: Double) -> Double { max(0.001, min(keepAlive / 2, 1)) }

    /// Starts a session on `fd`: sends CONNECT, or goes on with the connection `adopted`.
    /// Nil when CONNECT could not be sent (logged; the caller ends the session with
    /// ``finish(_:handedOver:)``). On the thread of `path`'s reader.
    func begin(_ fd: Int32, adopting adopted: Session?, path: ReaderPath) -> Link? {
        // A write blocks at most this long, then the connection is dropped (``write(_:_:)``):
        // writes come from the main thread (PUBACKs after the host's reply, the state, command
        // replies), which must not wait long on a broker that stops reading. It only blocks when
        // the socket's send buffer is full, so 1 s is the broker taking nothing for a second.
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var link = Link(
            fd: fd, path: path, keepAlive: adopted?.keepAlive ?? Double(settings.keepAlive),
            reader: MQTTFrameReader(maxPacket: settings.maxPacket, version: version),
            acceptedAt: adopted.map { _ in now() }, lastPing: now(), pingOutstanding: nil)
        connection.withLock { $0.acknowledged = 0 }
        if let adopted {
            link.reader.append(adopted.held)
            link.lastPing = min(adopted.lastPing, link.lastPing)
            link.pingOutstanding = adopted.pingOutstanding.map { min($0, link.lastPing) }
            connection.withLock {
                $0.fd = fd
                $0.nextID = adopted.nextID
            }
            handlers.log(
                .info,
                "mqtt.adopted protocol=\(settings.protocolVersion.rawValue) reader=\(path.rawValue): went on with the connection to \(settings.broker) as \(settings.clientID) that the copy it replaces handed over (no new CONNECT)"
            )
            handlers.resumed()
            return link
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
            return nil
        }
        return link
    }

    /// Ends a session's hold on `fd`: no writer uses it any more, and it is closed unless it
    /// was handed over. A hand-over asked of a session that ended otherwise is answered (nil),
    /// so the asker need not wait for its timeout.
    func finish(_ fd: Int32, handedOver: Bool) {
        let waiting = connection.withLock { connection in
            if connection.fd == fd { connection.fd = -1 }
            defer { connection.parking = false }
            return connection.parking
        }
        if !handedOver { close(fd) }
        if waiting { parkedSignal.signal() }
    }

    /// With the lock held: parks `link` for a hand-over when it can be (accepted, between two
    /// packets, not reading past a message, few bytes held): the session for the replacement
    /// is in `parked`, writes go to the channel from then on, and the client is stopped.
    func park(_ link: Link, from connection: inout Connection) -> Bool {
        guard connection.parking, link.accepted, !link.reader.isReadingPast,
            link.reader.pending <= BridgeHandOver.largestHeld
        else { return false }
        connection.parking = false
        connection.parked = Session(
            fd: link.fd, keepAlive: link.keepAlive, lastPing: link.lastPing, pingOutstanding: link.pingOutstanding,
            nextID: connection.nextID, held: link.reader.held)
        connection.fd = -1
        connection.stopped = true
        return true
    }

    /// The keep-alive's checks at `time`: a PINGREQ when due; why the session ends when the
    /// CONNACK or a PINGRESP is overdue.
    func tick(_ link: inout Link, at time: Double) -> String? {
        if !link.accepted && time - link.lastPing > max(link.keepAlive, 10) {
            return "no CONNACK from \(settings.broker) within \(Int(max(link.keepAlive, 10))) s"
        }
        if let sent = link.pingOutstanding, time - sent > link.keepAlive {
            return "no PINGRESP within the keep-alive (\(Int(link.keepAlive)) s)"
        }
        if link.accepted && time - link.lastPing >= link.keepAlive / 2 {
            send(.pingreq)
            link.lastPing = time
            if link.pingOutstanding == nil { link.pingOutstanding = time }
        }
        return nil
    }

    /// Reads what the socket holds without waiting (`MSG_DONTWAIT`), handling each whole
    /// packet as it comes and keeping a part of one in `link.reader`, until the socket is
    /// drained (`EAGAIN`, or a read shorter than asked) or 16 reads were made (the main loop
    /// serves its other descriptors, then calls again: the watch is level-triggered). Why the
    /// session ends, or nil.
    func readAvailable(_ link: inout Link, into buffer: inout [UInt8]) -> String? {
        for _ in 0..<16 {
            let count = buffer.withUnsafeMutableBytes { bytes in
                retryingOnInterrupt { recv(link.fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT)) }
            }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return nil }
            if count <= 0 {
                return count == 0 ? "the broker closed the connection" : "read: \(String(cString: strerror(errno)))"
            }
            BrokerAddress.acknowledgeNow(link.fd)
            link.reader.append(buffer[..<count])
            if let end = handleFrames(&link) { return end }
            if count < buffer.count { return nil }
        }
        return nil
    }

    /// Handles every whole packet `link.reader` holds; why the session ends, or nil.
    private func handleFrames(_ link: inout Link) -> String? {
        let time = now()
        do {
            while let frame = try link.reader.nextFrame() {
                if case .skipped(let message) = frame {
                    guard link.accepted, message.qos < 2 else {
                        let end =
                            link.accepted
                            ? "a QoS 2 message on \(message.topic): the bridge subscribes at QoS 1 only"
                            : "unexpected PUBLISH from the broker before CONNACK"
                        handlers.log(.error, "mqtt.protocolError error=unexpected packet=PUBLISH: \(end)")
                        return end
                    }
                    handlers.skipped(message)
                    continue
                }
                guard case .packet(let packet) = frame else { continue }
                switch packet {
                case .connack(let sessionPresent, let code, let properties) where !link.accepted:
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
                        return "refused"
                    }
                    link.acceptedAt = time
                    // MQTT 5 3.2.2.3.14: the broker's keep-alive replaces ours (0, "none", is
                    // left aside: pinging anyway costs nothing and keeps the loop's waits).
                    if let server = properties.serverKeepAlive, server > 0 { link.keepAlive = Double(server) }
                    connection.withLock { $0.fd = link.fd }
                    handlers.log(
                        .info,
                        "mqtt.connected protocol=\(settings.protocolVersion.rawValue) sessionPresent=\(sessionPresent) reader=\(link.path.rawValue): \(settings.broker) as \(settings.clientID)"
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
                case .publish(let message) where link.accepted:
                    guard message.qos < 2 else {
                        let end = "a QoS 2 message on \(message.topic): the bridge subscribes at QoS 1 only"
                        handlers.log(.error, "mqtt.protocolError error=unexpected packet=PUBLISH: \(end)")
                        return end
                    }
                    handlers.message(message)
                case .pingresp: link.pingOutstanding = nil
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
                    let end =
                        "the broker disconnected: \(MQTTReasonCode.name(code, packet: "DISCONNECT"))\(Self.saying(properties))"
                    handlers.log(
                        .warn, "mqtt.brokerDisconnected code=\(code)\(reasonField(code, "DISCONNECT")): \(end)")
                    return end
                default:
                    let end = "unexpected \(packet.name) from the broker" + (link.accepted ? "" : " before CONNACK")
                    handlers.log(.error, "mqtt.protocolError error=unexpected packet=\(packet.name): \(end)")
                    return end
                }
            }
        } catch {
            let packet = error.packet.map { " packet=\($0)" } ?? ""
            handlers.log(
                .error,
                "mqtt.protocolError error=\(error.code.rawValue)\(packet): \(error.description) from \(settings.broker); dropping the connection"
            )
            return error.description
        }
        return nil
    }

    /// ` reason=NAME` for the log in MQTT 5, where `code` is a reason code; nothing in 3.1.1.
    private func reasonField(_ code: UInt8, _ packet: String) -> String {
        version == .v5 ? " reason=\(MQTTReasonCode.name(code, packet: packet))" : ""
    }

    /// The broker's reason string (MQTT 5), as `: TEXT` for the log, or nothing.
    private static func saying(_ properties: MQTTProperties) -> String {
        properties.reasonString.map { " (the broker says \(JSONValue.string($0)))" } ?? ""
    }

    func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Writes `bytes` on the connection, or after a hand-over to the replacement's channel.
    /// A write to the broker that fails or times out (``begin(_:adopting:path:)``'s send
    /// timeout) may have sent part of a packet: the connection is shut down, its reader sees
    /// the end and connects anew, rather than the next packet going out after a torn one.
    private static func write(_ connection: inout Connection, _ bytes: [UInt8]) -> Bool {
        if connection.fd >= 0 {
            guard writeAll(connection.fd, bytes) else {
                shutdown(connection.fd, Int32(SHUT_RDWR))
                return false
            }
            return true
        }
        return connection.forward >= 0 && writeAll(connection.forward, ChannelRecord.write(bytes).encoded)
    }

    /// After DISCONNECT: waits until the broker closed its end (it does once it read the
    /// DISCONNECT), at most `seconds`. A socket closed with bytes unread (a PUBACK on its way),
    /// or left by a process that ends (a worker is killed right after willTerminate), sends a
    /// reset, and a reset makes the broker drop what it had not read yet: `offline` and the
    /// DISCONNECT, so it would publish the will. Called with the lock held, so the reader
    /// cannot close the descriptor meanwhile (its ``finish(_:handedOver:)`` waits for it).
    private static func awaitBrokerClose(_ fd: Int32, within seconds: Double) {
        shutdown(fd, Int32(SHUT_WR))
        // POLLRDHUP (poll.h, a GNU extension the Glibc module does not import): the peer's FIN.
        // A signal restarts the wait whole: at most `seconds` more each time.
        var poller = pollfd(fd: fd, events: Int16(0x2000), revents: 0)
        _ = retryingOnInterrupt { poll(&poller, 1, Int32(seconds * 1000)) }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
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
