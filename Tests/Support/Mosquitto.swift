import Foundation

/// A real Mosquitto broker for a test, on a loopback port of its own, logging every packet
/// to a file the test can read (issue 17).
///
/// The broker is the Debian package `mosquitto` (with `mosquitto-clients` for
/// `mosquitto_pub`); ``installed`` installs them with apt-get when they are missing and the
/// machine allows it (root), and otherwise says loudly why the tests that need it are skipped.
public final class Mosquitto {
    /// The broker's executable, or nil (with the reason printed once) when it cannot be had.
    public static let installed: String? =
        SystemPackages.ensure(
            ["mosquitto", "mosquitto-clients"], providing: ["/usr/sbin/mosquitto", "/usr/bin/mosquitto_pub"],
            for: "the MQTT end-to-end tests") ? "/usr/sbin/mosquitto" : nil

    public let port: Int
    public let logPath: String
    private let configPath: String
    private var process: Command.Running?

    /// Starts a broker on a free loopback port (or `port`), in `scratch`. With `persistent`, it
    /// saves sessions and retained messages in `scratch` at every change, so they outlive a
    /// ``stop()`` (SIGKILL) and ``start()``, as a production broker's persistence does.
    /// `config`: more lines for its configuration (an `acl_file`).
    public init(in scratch: Scratch, port: Int? = nil, persistent: Bool = false, config: String = "") throws {
        guard let executable = Self.installed else { throw TestFailure("mosquitto is not installed") }
        self.port = port ?? Self.freePort()
        logPath = scratch.file("mosquitto-\(self.port).log")
        // As root, mosquitto would drop to the `mosquitto` user, who cannot write in a 0700 scratch folder.
        configPath = try scratch.write(
            "mosquitto-\(self.port).conf",
            Array(
                """
                listener \(self.port) 127.0.0.1
                allow_anonymous true
                \(persistent ? "persistence true\npersistence_location \(scratch.file(""))\nautosave_on_changes true\nautosave_interval 1" : "persistence false")
                log_dest file \(logPath)
                log_type all
                max_queued_messages 10000
                \(getuid() == 0 ? "user root" : "")
                \(config)

                """.utf8))
        _ = executable
        try start()
    }

    /// Starts (again) on the same port.
    public func start() throws {
        process = try Command.start(Self.installed!, ["-c", configPath])
        guard eventually(within: 20, { Self.accepts(port) }) else {
            throw TestFailure("mosquitto did not listen on \(port)")
        }
    }

    /// Stops the broker (SIGKILL: children of the test process inherit its blocked SIGTERM) and
    /// waits for it.
    public func stop() {
        process?.send(SIGKILL)
        _ = process?.wait()
        process = nil
    }

    /// `mosquitto_pub -q QOS -t TOPIC -m MESSAGE` (and `-r` when `retain`, then `options`, such
    /// as `-V mqttv5 -D PUBLISH response-topic T`), waiting for the broker's acknowledgement.
    public func publish(
        _ topic: String, _ message: String, qos: Int = 1, retain: Bool = false, options: [String] = []
    ) throws {
        let result = try Command.run(
            "/usr/bin/mosquitto_pub",
            [
                "-h", "127.0.0.1", "-p", String(port), "-q", String(qos),
                "-t", topic, "-m", message,
            ] + (retain ? ["-r"] : []) + options)
        guard result.status == 0 else { throw TestFailure("mosquitto_pub failed: \(result.stderr)") }
    }

    /// The retained message on `topic` (`mosquitto_sub -C 1`), or nil when none arrives.
    public func retained(_ topic: String) throws -> String? {
        let running = try Command.start(
            "/usr/bin/mosquitto_sub", ["-h", "127.0.0.1", "-p", String(port), "-t", topic, "-C", "1", "-W", "5"])
        // `-W` times out with SIGALRM, which the test runner blocks for its children: with nothing
        // retained the client would wait for ever, so the deadline is kept here.
        if !eventually(within: 5, { !running.isRunning }) { running.send(SIGKILL) }
        let result = running.wait()
        return result.status == 0 ? result.stdout.trimmingCharacters(in: .newlines) : nil
    }

    /// `mosquitto_sub -i CLIENT -t TOPIC -C COUNT`, started and subscribed (its SUBACK is in the
    /// broker's log) before this returns; `wait()` gives the COUNT messages, one a line.
    /// `options` come last (`-V mqttv5 -F '%D %p'`).
    public func subscriber(_ topic: String, count: Int, client: String, options: [String] = []) throws
        -> Command.Running
    {
        let running = try Command.start(
            "/usr/bin/mosquitto_sub",
            ["-h", "127.0.0.1", "-p", String(port), "-i", client, "-t", topic, "-C", String(count), "-W", "60"]
                + options)
        guard eventually(within: 30, { self.count(.sent, "SUBACK", client: client) >= 1 }) else {
            running.send(SIGKILL)
            throw TestFailure("mosquitto_sub \(client) did not subscribe to \(topic)")
        }
        return running
    }

    /// The broker's log so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// One packet in the broker's log (`log_type all`): received from or sent to a client.
    public struct Packet: Equatable {
        public enum Direction: Equatable { case received, sent }
        public let direction: Direction
        /// The MQTT packet type as the broker names it (`PUBACK`, `SUBACK`).
        public let type: String
        /// The client id.
        public let client: String
        /// A PUBLISH's topic, as the broker logs it between quotes; nil for other packets.
        public var topic: String? = nil
    }

    /// The packets the broker logged so far, in order. Mosquitto has no structured log; its
    /// per-packet lines have one fixed shape, `TIME: Received TYPE from CLIENT (…)` and
    /// `TIME: Sending TYPE to CLIENT (…)`, read here once so tests compare fields.
    public var packets: [Packet] {
        log.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count >= 5 else { return nil }
            switch (words[1], words[3]) {
            case ("Received", "from"):
                var packet = Packet(direction: .received, type: String(words[2]), client: String(words[4]))
                // `… PUBLISH from CLIENT (d0, q1, r0, m1, 'TOPIC', ... (N bytes))`
                if packet.type == "PUBLISH", let open = line.range(of: ", '"),
                    let close = line.range(of: "', ... (", options: .backwards), open.upperBound <= close.lowerBound
                {
                    packet.topic = String(line[open.upperBound..<close.lowerBound])
                }
                return packet
            case ("Sending", "to"): return Packet(direction: .sent, type: String(words[2]), client: String(words[4]))
            default: return nil
            }
        }
    }

    /// How many `type` packets the broker received from (or sent to) `client` so far.
    public func count(_ direction: Packet.Direction, _ type: String, client: String) -> Int {
        packets.filter { $0.direction == direction && $0.type == type && $0.client == client }.count
    }

    /// The topics `client` published to so far (PUBLISH received from it), in order.
    public func topics(publishedBy client: String) -> [String] {
        packets.compactMap { $0.direction == .received && $0.type == "PUBLISH" && $0.client == client ? $0.topic : nil }
    }

    /// How many PUBACKs the broker received from `client` so far.
    public func acknowledgements(from client: String) -> Int { count(.received, "PUBACK", client: client) }

    deinit { stop() }

    /// A loopback port nobody listens on now.
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }
}

/// A broker that is not one: accepts connections on a loopback port and answers each with
/// the bytes a test scripts, to feed a client hostile input.
public final class FakeBroker: @unchecked Sendable {
    // Written once in init.
    public let port: Int
    private let listener: Int32
    private let connections = Counter()

    /// Connections accepted so far.
    private final class Counter: @unchecked Sendable {
        // Guarded by `lock`: the accepting thread adds, the test reads.
        private let lock = NSLock()
        private var count = 0
        func next() -> Int {
            lock.withLock {
                count += 1
                return count
            }
        }
        var value: Int { lock.withLock { count } }
    }

    /// Listens; each connection gets `script(number, read, write)` on its own thread.
    public init(_ script: @escaping @Sendable (_ number: Int, _ connection: Int32) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard listen(fd, 8) == 0 else { throw TestFailure("listen failed") }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let counter = connections
        Thread.detachNewThread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                let number = counter.next()
                Thread.detachNewThread {
                    script(number, connection)
                    close(connection)
                }
            }
        }
    }

    /// How many connections were accepted so far.
    public var connectionCount: Int { connections.value }

    /// Reads what the client sent (at least one byte), waiting at most 10 s.
    public static func read(_ connection: Int32) -> [UInt8] {
        var poller = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 10_000) > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = Glibc.read(connection, &buffer, buffer.count)
        return count > 0 ? Array(buffer[..<count]) : []
    }

    /// Writes `bytes` to the client.
    public static func write(_ connection: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
