import Glibc

/// `scripts/bench --fleet`, row 8's rollout (issue 41): a bundle of exactly 1 MiB (the release
/// MQTTBridge stripped of its symbols and debug information, as a fleet ships it, the C service
/// and padding) published by `host fleet publish` and rolled out by `host fleet rollout` to N
/// hosts in one wave, from the publish's start to the rollout's end (the last host reporting
/// `applied`; its 1 s probation included, and reported apart), against N `mosquitto_sub`
/// clients receiving every byte of a bundle of the same size published the same way (the
/// broker's floor for moving those bytes); and each host's resident memory before and after
/// the first rollout and after each of four more. It prints the first rollout's CPU time (the
/// hosts', Mosquitto's, `host fleet`'s) against its wall time.
///
/// The hosts run the same stripped bridge, so the deploy keeps it running (unchanged bytes):
/// the bridge learns the probation's end from the deploy's `done`.
/// `SERVICEHOST_BENCH_FLEET_LOGS=DIR` keeps each host's JSON log (info, ISO times) in DIR and
/// the publish's start in `DIR/start`, to see where the time goes.
struct FleetRolloutRow {
    let host: String
    let bridge: String
    let service: String
    var raw: [(String, Double)] = []
    static let probation = 1.0
    /// Rollouts in all, each a new bundle, for memory per host: the first, and each after.
    static let rollouts = 5

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
        // The release bridge is 3.3 MB, most of it debug information; stripped, under 1 MB.
        _ = try runToExit("/usr/bin/strip", ["-o", plugins + "/libMQTTBridge.so", bridge])
        let bridgeBytes = try readFile(plugins + "/libMQTTBridge.so")
        let serviceBytes = try readFile(service)
        try write(plugins + "/fleet_service.so", serviceBytes, mode: 0o644)
        // Two bundles of the same size, the rolled-out one and the floor's: padded so the
        // archive (a 512-byte header per file, each file in 512-byte blocks, two blocks at the
        // end) is 1 MiB exactly, or as small as the files allow.
        let blocks = { (bytes: Int) in (bytes + 511) / 512 * 512 }
        // At least a byte: the two bundles differ by it.
        let padding = max(1, (1 << 20) - 1024 - 3 * 512 - blocks(bridgeBytes.count) - blocks(serviceBytes.count))
        let later = (3...Self.rollouts).map { "bundle\($0)" }
        for (index, name) in (["set", "floor"] + later).enumerated() {
            let byte = UInt8(index + 1)
            mkdir(root + "/" + name, 0o755)
            try write(root + "/\(name)/libMQTTBridge.so", bridgeBytes, mode: 0o644)
            try write(root + "/\(name)/fleet_service.so", serviceBytes, mode: 0o644)
            try write(root + "/\(name)/padding.bin", [UInt8](repeating: byte, count: padding), mode: 0o644)
        }
        let size = 1024 + 3 * 512 + blocks(bridgeBytes.count) + blocks(serviceBytes.count) + blocks(padding)
        // The stripped release bridge alone may pass 1 MiB: then the bundle is as small as it allows.
        let sizeText =
            size == 1 << 20
            ? "1 MiB"
            : "\(size >> 10) KiB (not 1 MiB: the stripped release bridge alone is \(bridgeBytes.count >> 10) KiB)"
        progress("fleet rollout: \(count) hosts, a bundle of \(sizeText) (the bridge stripped: \(bridgeBytes.count) B)")
        let logs = getenv("SERVICEHOST_BENCH_FLEET_LOGS").map { String(cString: $0) }
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
            let arguments = [
                "--plugins", plugins, "--config", state + "/services.json", "--state-dir", state,
                "--control", state + "/host.sock",
            ]
            if let logs {
                // sh execs the host (the same pid), its log going to a file of its own.
                hosts.append(
                    try Child(
                        "/bin/sh",
                        ["-c", "exec \"$0\" \"$@\" 2>'\(logs)/r\(index).log'", host] + arguments + [
                            "--log-level", "info", "--log-format", "json", "--log-time", "iso",
                        ], capture: 1))
            } else {
                hosts.append(try Child(host, arguments + ["--log-level", "error"], capture: 1))
            }
        }
        var online = 0
        for _ in 0..<120 where online < count {
            let status = try output(host, ["fleet", "status", "--json", "--broker", broker])
            online = status.ranges(of: "\"online\":true").count
            if online < count { usleep(500_000) }
        }
        guard online == count else { throw BenchError("fleet rollout: \(online) of \(count) hosts online in 60 s") }
        // Resident memory per host: twice a second apart while idle (the noise), and after.
        let idle = try hosts.map(Self.resident)
        usleep(1_000_000)
        let before = try hosts.map(Self.resident)

        if let logs {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            try write(
                logs + "/start", Array("\(now.tv_sec).\(String(now.tv_nsec / 1_000_000 + 1000).dropFirst())\n".utf8))
        }
        // CPU time around the first rollout: the hosts', the broker's, and the `host fleet`
        // processes' (reaped children), against the wall time (two cores here: the bound).
        let hostsCPU = hosts.compactMap { $0.cpuSeconds() }.reduce(0, +)
        let brokerCPU = mosquitto.cpuSeconds() ?? 0
        let fleetCPU = Self.childrenCPU()
        let start = nowNanoseconds()
        let digest =
            try output(host, ["fleet", "publish", root + "/set", "--sign", root + "/k.key", "--broker", broker])
            .split(separator: "\n").first.map(String.init) ?? ""
        let rolloutArguments = { (digest: String) in
            [
                "fleet", "rollout", digest, "--hosts", "r*", "--waves", "100%", "--wait", "5m", "--probation",
                "\(Int(Self.probation))s", "--broker", broker,
            ]
        }
        _ = try output(host, rolloutArguments(digest))
        let ours = nowNanoseconds() - start
        let hostsUsed = hosts.map { $0.cpuSeconds() ?? 0 }
        let cpu = (
            hosts: hostsUsed.reduce(0, +) - hostsCPU, broker: (mosquitto.cpuSeconds() ?? 0) - brokerCPU,
            fleet: Self.childrenCPU() - fleetCPU
        )
        progress(
            "fleet rollout: wall \(Int(ours / 1e6)) ms (probation included); CPU \(Int(cpu.hosts * 1e3)) ms in the "
                + "\(count) hosts, \(Int(cpu.broker * 1e3)) ms in mosquitto, \(Int(cpu.fleet * 1e3)) ms in `host fleet`"
        )
        raw += [
            ("fleet.rollout.cpu.hosts", cpu.hosts * 1e9), ("fleet.rollout.cpu.mosquitto", cpu.broker * 1e9),
            ("fleet.rollout.cpu.fleet", cpu.fleet * 1e9),
        ]
        let after = try hosts.map(Self.resident)

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
        let floorDigest =
            try output(host, ["fleet", "publish", root + "/floor", "--sign", root + "/k.key", "--broker", broker])
            .split(separator: "\n").first.map(String.init) ?? ""
        drain(subscribers, into: &received, until: floorStart + 60e9, bytes: size)
        let floor = nowNanoseconds() - floorStart
        guard received.allSatisfy({ $0 >= size }) else {
            throw BenchError("fleet rollout: not every mosquitto_sub received the \(size) bytes within 60 s")
        }
        // A second rollout (the floor's bundle, published already), once the first has loaded
        // libcrypto (the bundle's check) and the allocator has grown to a bundle's buffers;
        // then more, each a new bundle, to see whether a host's memory settles (steady state).
        _ = try output(host, rolloutArguments(floorDigest))
        var resident = [after, try hosts.map(Self.resident)]
        for name in later {
            let digest =
                try output(
                    host, ["fleet", "publish", root + "/" + name, "--sign", root + "/k.key", "--broker", broker]
                )
                .split(separator: "\n").first.map(String.init) ?? ""
            _ = try output(host, rolloutArguments(digest))
            resident.append(try hosts.map(Self.resident))
        }
        raw += [
            ("fleet.rollout.\(count).hosts", ours), ("fleet.rollout.\(count).mosquitto_sub", floor),
            ("fleet.rollout.probation", Self.probation * 1e9), ("fleet.rollout.bundle.bytes", Double(size)),
        ]
        let bundle = "a bundle of \(sizeText): the release MQTTBridge stripped, the C service, padding"
        let probation = "\(Int(Self.probation)) s probation"
        return [
            Row(
                row: "8",
                measured:
                    "fleet rollout, \(count) hosts in one wave: \(bundle), `host fleet publish` → the last host's `applied` (its \(probation) included), vs \(count) `mosquitto_sub` receiving a bundle as large",
                unit: .nanoseconds, ours: ours, baseline: floor, target: "—"),
            // The target's ratio: the probation is the operator's choice, not the transfer's cost.
            Row(
                row: "8",
                measured:
                    "fleet rollout, \(count) hosts in one wave: the same less its \(probation), vs \(count) `mosquitto_sub` receiving a bundle as large",
                unit: .nanoseconds, ours: ours - Self.probation * 1e9, baseline: floor, target: "≤ 2×", maxRatio: 2),
            .paired(
                row: "8",
                measured:
                    "fleet rollout, \(count) hosts: memory per host idle (VmRSS 1 s later vs VmRSS; spread over the hosts: the noise)",
                unit: .bytes, ours: before, baseline: idle, target: "—"),
            .paired(
                row: "8",
                measured:
                    "fleet rollout, \(count) hosts: memory per host, the first rollout (VmRSS after it vs before it: libcrypto loaded for the bundle's check, and what the allocator keeps; spread over the hosts)",
                unit: .bytes, ours: after, baseline: before, target: "—"),
        ]
            + (1..<Self.rollouts).map { index in
                .paired(
                    row: "8",
                    measured:
                        "fleet rollout, \(count) hosts: memory per host, rollout \(index + 1) of \(Self.rollouts) (VmRSS after it vs after rollout \(index); spread over the hosts)",
                    unit: .bytes, ours: resident[index], baseline: resident[index - 1],
                    target: index == Self.rollouts - 1 ? "unchanged beyond the noise" : "—")
            }
    }

    /// The CPU time, user and system, of the runner's children reaped so far, in seconds.
    private static func childrenCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        let seconds = { (time: timeval) in Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// A host's resident set size in bytes.
    private static func resident(_ host: Child) throws(BenchError) -> Double {
        guard let bytes = host.residentBytes() else { throw BenchError("fleet rollout: no VmRSS for host \(host.pid)") }
        return bytes
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
