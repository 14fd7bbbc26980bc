import Glibc

/// `scripts/bench --fleet`, row 8's rollout (issue 41): a bundle of about 1 MiB (the bridge, the
/// C service and padding) published by `host fleet publish` and rolled out by `host fleet
/// rollout` to N hosts in one wave, from the publish's start to the rollout's end (the last host
/// reporting `applied`; its 1 s probation included, and reported apart), against N
/// `mosquitto_sub` clients receiving every byte of a bundle of the same size published the same
/// way (the broker's floor for moving those bytes).
struct FleetRolloutRow {
    let host: String
    let bridge: String
    let service: String
    var raw: [(String, Double)] = []
    static let probation = 1.0

    mutating func run(count: Int) throws(BenchError) -> [Row] {
        guard access("/usr/bin/minisign", X_OK) == 0 else {
            throw BenchError("--fleet's rollout needs minisign (apt-get install minisign)")
        }
        var template = Array("/tmp/servicehost-rollout-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp failed") }
        let root = String(cString: made)
        defer { _ = system("rm -rf '\(root)'") }
        chmod(root, 0o755)
        let port = 20000 + Int((getpid() + 7919) % 20000)
        let broker = "tcp://127.0.0.1:\(port)"
        try write(
            root + "/mosquitto.conf",
            Array(
                ("listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\nmax_connections -1\n"
                    + (getuid() == 0 ? "user root\n" : "")).utf8))
        var mosquitto = try Child("/usr/sbin/mosquitto", ["-c", root + "/mosquitto.conf"], capture: 2)
        defer { mosquitto.finish(signal: SIGTERM) }
        _ = try runToExit("/usr/bin/minisign", ["-G", "-W", "-f", "-p", root + "/k.pub", "-s", root + "/k.key"])
        let publicKey = String(decoding: try readFile(root + "/k.pub"), as: UTF8.self).split(separator: "\n")[1]
        let plugins = root + "/plugins"
        mkdir(plugins, 0o755)
        let bridgeBytes = try readFile(bridge)
        let serviceBytes = try readFile(service)
        try write(plugins + "/libMQTTBridge.so", bridgeBytes, mode: 0o644)
        try write(plugins + "/fleet_service.so", serviceBytes, mode: 0o644)
        // Two bundles of the same size: the rolled-out one and the floor's, padded to 1 MiB.
        let padding = max(4096, (1 << 20) - bridgeBytes.count - serviceBytes.count)
        for (name, byte) in [("set", UInt8(1)), ("floor", UInt8(2))] {
            mkdir(root + "/" + name, 0o755)
            try write(root + "/\(name)/libMQTTBridge.so", bridgeBytes, mode: 0o644)
            try write(root + "/\(name)/fleet_service.so", serviceBytes, mode: 0o644)
            try write(root + "/\(name)/padding.bin", [UInt8](repeating: byte, count: padding), mode: 0o644)
        }
        let size = bridgeBytes.count + serviceBytes.count + padding
        progress("fleet rollout: \(count) hosts, a \(size >> 10) KiB bundle")
        var hosts: [Child] = []
        var subscribers: [Child] = []
        defer {
            for index in hosts.indices { hosts[index].finish() }
            for index in subscribers.indices { subscribers[index].finish() }
        }
        for index in 0..<count {
            let state = root + "/r\(index)"
            mkdir(state, 0o700)
            try write(
                state + "/services.json",
                Array(
                    """
                    {"trustedKeys": ["\(publicKey)"], "services": {"dev.servicehost.mqtt-bridge": {"requests": "all",
                      "settings": {"broker": "\(broker)", "hostId": "r\(index)"}}}}
                    """.utf8))
            hosts.append(
                try Child(
                    host,
                    [
                        "--plugins", plugins, "--config", state + "/services.json", "--state-dir", state,
                        "--control", state + "/host.sock", "--log-level", "error",
                    ], capture: 1))
        }
        var online = 0
        for _ in 0..<120 where online < count {
            let status = try output(host, ["fleet", "status", "--json", "--broker", broker])
            online = status.ranges(of: "\"online\":true").count
            if online < count { usleep(500_000) }
        }
        guard online == count else { throw BenchError("fleet rollout: \(online) of \(count) hosts online in 60 s") }

        let start = nowNanoseconds()
        let digest =
            try output(host, ["fleet", "publish", root + "/set", "--sign", root + "/k.key", "--broker", broker])
            .split(separator: "\n").first.map(String.init) ?? ""
        _ = try output(
            host,
            [
                "fleet", "rollout", digest, "--hosts", "r*", "--waves", "100%", "--wait", "5m", "--probation",
                "\(Int(Self.probation))s", "--broker", broker,
            ])
        let ours = nowNanoseconds() - start

        for _ in 0..<count {
            subscribers.append(
                try Child(
                    "/usr/bin/mosquitto_sub", ["-p", String(port), "-R", "-t", "servicehost/bundles/#"], capture: 1))
        }
        // Subscribed when each has printed a message published after it started.
        var received = [Int](repeating: 0, count: count)
        for _ in 0..<120 where received.contains(0) {
            _ = try output("/usr/bin/mosquitto_pub", ["-p", String(port), "-t", "servicehost/bundles/warm", "-m", "w"])
            drain(subscribers, into: &received, until: nowNanoseconds() + 200e6, bytes: 1)
        }
        guard !received.contains(0) else { throw BenchError("fleet rollout: not every mosquitto_sub subscribed") }
        received = [Int](repeating: 0, count: count)
        let floorStart = nowNanoseconds()
        _ = try output(host, ["fleet", "publish", root + "/floor", "--sign", root + "/k.key", "--broker", broker])
        drain(subscribers, into: &received, until: floorStart + 60e9, bytes: size)
        let floor = nowNanoseconds() - floorStart
        guard received.allSatisfy({ $0 >= size }) else {
            throw BenchError("fleet rollout: not every mosquitto_sub received the \(size) bytes within 60 s")
        }
        raw += [
            ("fleet.rollout.\(count).hosts", ours), ("fleet.rollout.\(count).mosquitto_sub", floor),
            ("fleet.rollout.probation", Self.probation * 1e9),
        ]
        return [
            Row(
                row: "8",
                measured:
                    "fleet rollout, \(count) hosts in one wave: a \(size >> 10) KiB bundle, `host fleet publish` → the last host's `applied` (its \(Int(Self.probation)) s probation included), vs \(count) `mosquitto_sub` receiving a bundle as large",
                unit: .nanoseconds, ours: ours, baseline: floor, target: "—"),
            // The target's ratio: the probation is the operator's choice, not the transfer's cost.
            Row(
                row: "8",
                measured:
                    "fleet rollout, \(count) hosts in one wave: the same without its \(Int(Self.probation)) s probation, vs \(count) `mosquitto_sub` receiving a bundle as large",
                unit: .nanoseconds, ours: ours - Self.probation * 1e9, baseline: floor, target: "≤ 2×"),
        ]
    }

    /// Reads the subscribers' pipes, adding up each one's bytes, until each has `bytes` or `deadline`.
    private func drain(_ subscribers: [Child], into received: inout [Int], until deadline: Double, bytes: Int) {
        var polls = subscribers.map { pollfd(fd: $0.output, events: Int16(POLLIN), revents: 0) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while received.contains(where: { $0 < bytes }) {
            let left = (deadline - nowNanoseconds()) / 1e6
            guard left > 0 else { return }
            guard poll(&polls, nfds_t(polls.count), Int32(left) + 1) > 0 else { continue }
            for index in polls.indices where polls[index].revents != 0 {
                let count = read(polls[index].fd, &chunk, chunk.count)
                if count > 0 { received[index] += count }
            }
        }
    }

    /// `program`'s standard output once it exited 0.
    private func output(_ program: String, _ arguments: [String]) throws(BenchError) -> String {
        var child = try Child(program, arguments, capture: 1)
        let status = child.finish(signal: nil)
        guard status == 0 else {
            throw BenchError("\(program) \(arguments.joined(separator: " ")) failed (\(status)):\n\(child.text)")
        }
        return child.text
    }

    private func write(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) throws(BenchError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw BenchError("cannot write \(path)") }
        defer { close(fd) }
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw BenchError("short write \(path)")
        }
    }
}
