import Glibc
import MQTTCodec

/// `scripts/bench --fleet` (issue 17): N hosts on this machine, each with MQTTBridge and one
/// C service (Sources/bench-c/fleet_service.c), on one Mosquitto; one publisher sends QoS 1
/// pushes to `servicehost/all/push`. Per push: from the publish's write to the line the last
/// host's service wrote, against N `mosquitto_sub` clients subscribed to the same topic (the
/// broker's own floor), both read the same way (their stdout on a pipe, polled together).
struct FleetRow {
    let host: String
    let bridge: String
    let service: String
    let pushes: Int
    var raw: [(String, Double)] = []

    mutating func run(counts: [Int]) throws(BenchError) -> [Row] {
        guard access("/usr/sbin/mosquitto", X_OK) == 0, access("/usr/bin/mosquitto_sub", X_OK) == 0 else {
            throw BenchError("--fleet needs mosquitto and mosquitto_sub (apt-get install mosquitto mosquitto-clients)")
        }
        var template = Array("/tmp/servicehost-fleet-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp failed") }
        let root = String(cString: made)
        defer { _ = system("rm -rf '\(root)'") }
        chmod(root, 0o755)
        let plugins = root + "/plugins"
        mkdir(plugins, 0o755)
        try copy(bridge, to: plugins + "/libMQTTBridge.so")
        try copy(service, to: plugins + "/fleet_service.so")
        let port = 20000 + Int(getpid() % 20000)
        try write(
            root + "/mosquitto.conf",
            "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\nmax_connections -1\n"
                + (getuid() == 0 ? "user root\n" : ""))
        var broker = try Child("/usr/sbin/mosquitto", ["-c", root + "/mosquitto.conf"], capture: 2)
        defer { broker.finish(signal: SIGTERM) }
        usleep(300_000)
        var rows: [Row] = []
        for count in counts {
            progress("fleet: \(count) hosts and \(count) mosquitto_sub clients")
            var hosts: [Child] = []
            var subscribers: [Child] = []
            defer {
                for index in hosts.indices { hosts[index].finish() }
                for index in subscribers.indices { subscribers[index].finish() }
            }
            for index in 0..<count {
                let name = "n\(count)-h\(index)"
                let state = root + "/" + name
                mkdir(state, 0o700)
                try write(
                    state + "/services.json",
                    """
                    {"services": {"dev.servicehost.mqtt-bridge": {"requests": "events", "settings":
                      {"broker": "tcp://127.0.0.1:\(port)", "hostId": "\(name)"}}}}
                    """)
                hosts.append(
                    try Child(
                        host,
                        [
                            "--plugins", plugins, "--config", state + "/services.json", "--state-dir", state,
                            "--control", state + "/host.sock", "--log-level", "error",
                        ], capture: 1))
                subscribers.append(
                    try Child(
                        "/usr/bin/mosquitto_sub", ["-p", String(port), "-q", "1", "-t", "servicehost/all/push"],
                        capture: 1))
            }
            let publisher = try Publisher(port: port)
            // Until every host and client has heard one push, they are still connecting.
            var readers = (hosts + subscribers).map { LineReader(fd: $0.output) }
            var warm = 0
            while !readers.allSatisfy({ $0.heard }) {
                warm += 1
                guard warm < 600 else { throw BenchError("fleet: not every host connected within 60 s") }
                publisher.push(0)
                _ = collect(&readers, number: -1, deadline: nowNanoseconds() + 100e6)
            }
            var hostLatency: [Double] = []
            var floorLatency: [Double] = []
            for number in 1...pushes {
                let start = nowNanoseconds()
                publisher.push(number)
                guard let arrivals = collect(&readers, number: number, deadline: start + 10e9) else {
                    throw BenchError("fleet: push \(number) did not reach every host within 10 s")
                }
                hostLatency.append(arrivals[..<count].max()! - start)
                floorLatency.append(arrivals[count...].max()! - start)
                usleep(20_000)
            }
            let memory = hosts.compactMap { $0.residentBytes() }.reduce(0, +) / Double(count)
            let subscriberMemory = subscribers.compactMap { $0.residentBytes() }.reduce(0, +) / Double(count)
            for (label, quantile) in [("p50", 0.5), ("p99", 0.99)] {
                let ours = percentile(hostLatency, quantile)
                let floor = percentile(floorLatency, quantile)
                raw += [("fleet.\(count).\(label).hosts", ours), ("fleet.\(count).\(label).mosquitto_sub", floor)]
                rows.append(
                    Row(
                        row: "8",
                        measured:
                            "fleet, \(count) hosts: push fan-out \(label), publish → the last host's service, vs \(count) `mosquitto_sub` clients (the broker's floor)",
                        unit: .nanoseconds, ours: ours, baseline: floor,
                        target: count == 100 && label == "p99" ? "≤ 2×" : "—",
                        maxRatio: count == 100 && label == "p99" ? 2 : nil))
            }
            rows.append(
                Row(
                    row: "8",
                    measured:
                        "fleet, \(count) hosts: memory per host (VmRSS, bridge + 1 C service) vs one `mosquitto_sub`",
                    unit: .bytes, ours: memory, baseline: subscriberMemory, target: "—"))
        }
        return rows
    }

    /// Reads every pipe until each has a line for push `number` (-1: any line); the arrival
    /// time of each, or nil at `deadline`.
    private func collect(_ readers: inout [LineReader], number: Int, deadline: Double) -> [Double]? {
        var polls = readers.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        while true {
            if number >= 0, readers.allSatisfy({ $0.arrivals[number] != nil }) {
                return readers.map { $0.arrivals[number]! }
            }
            if number < 0, readers.allSatisfy({ $0.heard }) { return [] }
            let left = (deadline - nowNanoseconds()) / 1e6
            guard left > 0 else { return nil }
            guard poll(&polls, nfds_t(polls.count), Int32(left) + 1) > 0 else { continue }
            let time = nowNanoseconds()
            for index in polls.indices where polls[index].revents != 0 { readers[index].read(at: time) }
        }
    }

    private func copy(_ source: String, to target: String) throws(BenchError) {
        try write(target, try readFile(source), mode: 0o644)
    }

    private func write(_ path: String, _ text: String) throws(BenchError) {
        try write(path, Array(text.utf8), mode: 0o600)
    }

    private func write(_ path: String, _ bytes: [UInt8], mode: mode_t) throws(BenchError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw BenchError("cannot write \(path)") }
        defer { close(fd) }
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw BenchError("short write \(path)")
        }
    }
}

/// The `q`-quantile of `values` (nearest rank).
func percentile(_ values: [Double], _ q: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))]
}

/// One pipe's lines: "fleet N" from a host's service, the payload (`…"n":N}`) from mosquitto_sub.
struct LineReader {
    let fd: Int32
    var buffer: [UInt8] = []
    var arrivals: [Int: Double] = [:]
    var heard = false

    mutating func read(at time: Double) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = Glibc.read(fd, &chunk, chunk.count)
        guard count > 0 else { return }
        buffer += chunk[..<count]
        while let newline = buffer.firstIndex(of: 10) {
            let line = String(decoding: buffer[..<newline], as: UTF8.self)
            buffer.removeSubrange(...newline)
            heard = true
            let digits = line.hasPrefix("fleet ") ? line.dropFirst(6) : line.components(after: "\"n\":")
            if let number = Int(digits.prefix { $0.isNumber }), arrivals[number] == nil { arrivals[number] = time }
        }
    }
}

extension String {
    fileprivate func components(after marker: String) -> Substring {
        guard let range = range(of: marker) else { return "" }
        return self[range.upperBound...]
    }
}

/// The one publisher: a plain MQTT connection from the runner, QoS 1 pushes to the fleet.
final class Publisher {
    private let fd: Int32
    private var nextID: UInt16 = 0

    init(port: Int) throws(BenchError) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw BenchError("fleet: cannot connect to mosquitto on \(port)") }
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        send(.connect(MQTTConnect(clientID: "bench-publisher-\(getpid())", cleanSession: true, keepAlive: 0)))
        var reply = [UInt8](repeating: 0, count: 4)
        guard Glibc.read(fd, &reply, 4) == 4, reply[0] == 0x20, reply[3] == 0 else {
            throw BenchError("fleet: the broker refused the publisher")
        }
        // PUBACKs are drained by a thread of their own, so the socket never fills.
        let socket = fd
        var thread = pthread_t()
        let context = UnsafeMutableRawPointer(bitPattern: Int(socket) + 1)
        pthread_create(
            &thread, nil,
            { context in
                let fd = Int32(Int(bitPattern: context) - 1)
                var sink = [UInt8](repeating: 0, count: 4096)
                while Glibc.read(fd, &sink, sink.count) > 0 {}
                return nil
            }, context)
        pthread_detach(thread)
    }

    func push(_ number: Int) {
        nextID = nextID == UInt16.max ? 1 : nextID + 1
        send(
            .publish(
                MQTTPublish(
                    topic: "servicehost/all/push", payload: Array(#"{"aps":{"alert":"fleet"},"n":\#(number)}"#.utf8),
                    qos: 1, id: nextID)))
    }

    private func send(_ packet: MQTTPacket) {
        let bytes = packet.encoded()
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
