import CSystem
import Glibc

/// Row 13 (issue 38): how fast the system sources move the app, each against the bare program
/// that answers the same system event.
///
/// - Sleep: on a private `dbus-daemon`, `bench-sleep-bus logind` (a minimal logind,
///   Sources/bench-c/sleep_bus.c) emits `PrepareForSleep(true)` and times, on its own clock,
///   until the delay inhibitor it handed out hangs up: held by the host with 10 C services (no
///   background task; only the sleep source on, its log to /dev/null), against `bench-sleep-bus
///   client`, a bare sd-bus client that holds the same inhibitor and closes it on the same
///   signal. Each has a bus and a logind of its own, so one's wake-up never competes with the
///   other's; `PrepareForSleep(false)` and the new inhibitor after each repetition, untimed.
/// - Network: in a private network namespace (veth pair, a default route), the runner removes
///   the default route over its own rtnetlink socket and times until the host's service
///   (Sources/bench-c/network_service.c) writes "network offline" on receiving `network.changed`;
///   against `ip monitor route` in a second namespace printing its "Deleted default" line for
///   the same removal there. The route is put back, untimed. Needs root and iproute2.
@MainActor
struct SystemEventsRow {
    let host: String
    /// bench-sleep-bus (nil: not built, libsystemd missing).
    let sleepBus: String?
    /// network_service.so (nil: not built).
    let networkService: String?
    let reps: Int
    let hostEnvironment: [String: String]
    private(set) var raw: [(String, Double)] = []

    nonisolated static let dbusDaemon = "/usr/bin/dbus-daemon"
    nonisolated static let ip = "/usr/sbin/ip"
    static let labels = (
        sleep:
            "`PrepareForSleep(true)` → the host's logind delay inhibitor released, 10 C services (none with a "
            + "background task), vs a bare sd-bus client releasing the same inhibitor on the same signal (floor)",
        network:
            "default route removed → `network.changed` at a C service (its line on the host's stdout), vs "
            + "`ip monitor route`'s line for the same removal (floor)"
    )
    /// Every source but the one measured is off, so nothing else wakes the host.
    static func sourcesOff(but kept: String) -> [String] {
        ["sleep", "lock", "time", "network", "power", "memory", "notifications"].filter { $0 != kept }.flatMap {
            ["--source", "\($0)=off"]
        }
    }

    mutating func run(services: String, root: String) throws(BenchError) -> [Row] {
        // A child gone early must not kill the runner when it writes to the child's stdin.
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        return [try sleepLine(services: services, root: root), try networkLine(root: root)]
    }

    // MARK: Sleep

    private mutating func sleepLine(services: String, root: String) throws(BenchError) -> Row {
        guard let sleepBus, access(Self.dbusDaemon, X_OK) == 0 else {
            return .pending(
                "13", Self.labels.sleep, target: "≤ 2×",
                needs: sleepBus == nil
                    ? "libsystemd.so.0 (scripts/bench links bench-sleep-bus against it)" : "dbus-daemon")
        }
        var host = try Logind(bus: sleepBus, root: root, name: "sleep-host")
        defer { host.stop() }
        var floor = try Logind(bus: sleepBus, root: root, name: "sleep-floor")
        defer { floor.stop() }
        let control = root + "/sleep-host.sock"
        try host.attach(
            self.host,
            ["--plugins", services, "--control", control, "--state-dir", root + "/sleep-state"]
                + Self.sourcesOff(but: "sleep"), environment: hostEnvironment)
        try floor.attach(sleepBus, ["client"], environment: [:])
        let samples = try interleavedSamples(reps: reps, [{ try host.sleepAndWake() }, { try floor.sleepAndWake() }])
        raw += [
            ("system_events.sleep_host_ns", median(samples[0])), ("system_events.sleep_floor_ns", median(samples[1])),
        ]
        return .paired(
            row: "13", measured: Self.labels.sleep, unit: .nanoseconds, ours: samples[0], baseline: samples[1],
            target: "≤ 2×", maxRatio: 2)
    }

    /// A private bus, the mock logind on it, and the one client it serves.
    struct Logind {
        let name: String
        let address: String
        var daemon: Child
        var logind: Child
        var client: Child?

        init(bus: String, root: String, name: String) throws(BenchError) {
            self.name = name
            address = "unix:path=\(root)/\(name).bus"
            // The session configuration: anyone may own any name, as on a private bus.
            daemon = try Child(
                SystemEventsRow.dbusDaemon,
                ["--session", "--address=\(address)", "--nofork", "--nopidfile", "--print-address=1"], capture: 1)
            guard daemon.nextLine() != nil else {
                daemon.finish()
                throw BenchError("row 13: dbus-daemon did not start on \(address)")
            }
            do {
                logind = try Child(
                    bus, ["logind"], capture: 1, environment: ["DBUS_SYSTEM_BUS_ADDRESS": address], input: true)
            } catch {
                daemon.finish()
                throw error
            }
            let ready = logind.nextLine()
            guard ready == "ready" else {
                logind.finish()
                daemon.finish()
                throw BenchError("row 13: the mock logind did not start: \(ready ?? "(no answer)")")
            }
        }

        /// Starts the client on this bus and waits until it holds its inhibitor.
        mutating func attach(_ program: String, _ arguments: [String], environment: [String: String])
            throws(BenchError)
        {
            var environment = environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
            client = try Child(program, arguments, capture: 2, environment: environment)
            try expect("inhibited", after: "starting \(program)", within: 30)
        }

        /// PrepareForSleep(true) → the inhibitor's hang-up, in nanoseconds; then wake and the
        /// new inhibitor.
        mutating func sleepAndWake() throws(BenchError) -> Double {
            try logind.send("sleep\n")
            let line = logind.nextLine()
            guard let line, line.hasPrefix("released "), let nanoseconds = Double(line.dropFirst("released ".count))
            else { throw failure("no release after PrepareForSleep(true): \(line ?? "(nothing within 10 s)")") }
            try logind.send("wake\n")
            try expect("inhibited", after: "PrepareForSleep(false)", within: 10)
            return nanoseconds
        }

        private mutating func expect(_ expected: String, after what: String, within seconds: Double)
            throws(BenchError)
        {
            let line = logind.nextLine(within: seconds)
            guard line == expected else {
                throw failure("no inhibitor taken after \(what): \(line ?? "(nothing within \(Int(seconds)) s)")")
            }
        }

        private mutating func failure(_ message: String) -> BenchError {
            var said = ""
            if var client {
                client.finish()
                self.client = nil
                said = "\n" + client.text
            }
            return BenchError("row 13 (\(name)): \(message)\(said)")
        }

        mutating func stop() {
            client?.finish(signal: SIGTERM)
            client = nil
            logind.finish(signal: SIGTERM)
            daemon.finish(signal: SIGTERM)
        }
    }

    // MARK: Network

    private mutating func networkLine(root: String) throws(BenchError) -> Row {
        guard getuid() == 0, access(Self.ip, X_OK) == 0, let networkService else {
            return .pending(
                "13", Self.labels.network, target: "≤ 2×",
                needs: getuid() != 0
                    ? "root (network namespaces)" : networkService == nil ? "network_service.so" : "iproute2")
        }
        let directory = root + "/network-service"
        mkdir(directory, 0o755)
        try writePluginFile(try readFile(networkService), to: directory + "/network_service.so")
        let tag = "\(getpid())"
        let ours = try Namespace("shbench-host-\(tag)", subnet: 201)
        defer { ours.remove() }
        let floor = try Namespace("shbench-ip-\(tag)", subnet: 202)
        defer { floor.remove() }
        try ours.route(add: true)
        try floor.route(add: true)

        let control = root + "/network-host.sock"
        var host = try Child(
            Self.ip,
            [
                "netns", "exec", ours.name, self.host, "--plugins", directory, "--control", control, "--state-dir",
                root + "/network-state",
            ] + Self.sourcesOff(but: "network"),
            capture: 1, environment: hostEnvironment)
        defer { host.finish(signal: SIGTERM) }
        // A request made during the launch waits for the sources: its answer says the source runs.
        try Self.untilAnswered(self.host, control)
        var monitor = try Child(Self.ip, ["-n", floor.name, "monitor", "route"], capture: 1)
        defer { monitor.finish() }
        try Self.untilListening(&monitor, floor)

        let samples = try interleavedSamples(
            reps: reps,
            [
                {
                    try Self.removal(
                        in: ours, seenBy: &host, "the host's service", removed: "network offline",
                        added: "network online")
                },
                {
                    try Self.removal(
                        in: floor, seenBy: &monitor, "ip monitor", removed: "Deleted default", added: "default via")
                },
            ])
        raw += [
            ("system_events.network_host_ns", median(samples[0])),
            ("system_events.network_ip_monitor_ns", median(samples[1])),
        ]
        return .paired(
            row: "13", measured: Self.labels.network, unit: .nanoseconds, ours: samples[0], baseline: samples[1],
            target: "≤ 2×", maxRatio: 2)
    }

    /// The time from the default route's removal in `namespace` to `child`'s line starting with
    /// `removed`; then the route is put back and `child`'s `added` line awaited, untimed.
    static func removal(
        in namespace: Namespace, seenBy child: inout Child, _ who: String, removed: String, added: String
    ) throws(BenchError) -> Double {
        let start = nowNanoseconds()
        try namespace.route(add: false)
        try wait(for: removed, in: &child, who)
        let elapsed = nowNanoseconds() - start
        try namespace.route(add: true)
        try wait(for: added, in: &child, who)
        return elapsed
    }

    /// Reads `child`'s lines until one starts with `prefix` (others, of earlier changes, are passed over).
    static func wait(for prefix: String, in child: inout Child, _ who: String) throws(BenchError) {
        while let line = child.nextLine() {
            if line.hasPrefix(prefix) { return }
        }
        throw BenchError("row 13: \(who) wrote no \"\(prefix)\" line within 10 s")
    }

    /// Until the host answers `network.current` (the network source started), 30 s at most.
    static func untilAnswered(_ host: String, _ control: String) throws(BenchError) {
        let deadline = nowNanoseconds() + 30e9
        while (try? runToExit(host, ["ctl", "--control", control, "request", "network.current"])) == nil {
            guard nowNanoseconds() < deadline else {
                throw BenchError("row 13: the host never answered network.current")
            }
            usleep(20_000)
        }
    }

    /// Until `ip monitor` shows a change (it subscribes some time after it starts): the route
    /// removed and put back until its removal is seen.
    static func untilListening(_ monitor: inout Child, _ namespace: Namespace) throws(BenchError) {
        for _ in 0..<50 {
            try namespace.route(add: false)
            while let line = monitor.nextLine(within: 0.2) {
                guard line.hasPrefix("Deleted default") else { continue }
                try namespace.route(add: true)
                try wait(for: "default via", in: &monitor, "ip monitor")
                return
            }
            try namespace.route(add: true)
        }
        throw BenchError("row 13: ip monitor never showed a route change")
    }

    /// A network namespace with a veth pair (veth0 10.0.SUBNET.1/24 up) and an rtnetlink socket
    /// of the runner's inside it, for adding and removing its default route via 10.0.SUBNET.2.
    final class Namespace {
        let name: String
        let gateway: [UInt8]
        private var socket: Int32 = -1
        private var sequence: UInt32 = 0

        init(_ name: String, subnet: UInt8) throws(BenchError) {
            self.name = name
            gateway = [10, 0, subnet, 2]
            for arguments in [
                ["netns", "add", name], ["-n", name, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1"],
                ["-n", name, "addr", "add", "10.0.\(subnet).1/24", "dev", "veth0"],
                ["-n", name, "link", "set", "veth0", "up"], ["-n", name, "link", "set", "veth1", "up"],
            ] {
                do { _ = try runToExit(SystemEventsRow.ip, arguments) } catch {
                    remove()
                    throw error
                }
            }
            // The socket is opened inside the namespace by this thread alone, which then goes back.
            let ours = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)
            let theirs = open("/run/netns/\(name)", O_RDONLY | O_CLOEXEC)
            defer {
                if ours >= 0 { close(ours) }
                if theirs >= 0 { close(theirs) }
            }
            guard ours >= 0, theirs >= 0, Self.enter(theirs) == 0 else {
                remove()
                throw BenchError("row 13: entering network namespace \(name): \(String(cString: strerror(errno)))")
            }
            socket = csystem_route_netlink_socket(0, 0)
            let failed = errno
            guard Self.enter(ours) == 0 else { fatalError("row 13: cannot leave network namespace \(name)") }
            guard socket >= 0 else {
                remove()
                throw BenchError("row 13: rtnetlink socket in \(name): \(String(cString: strerror(failed)))")
            }
        }

        /// setns(fd, CLONE_NEWNET): this thread into the network namespace `fd` refers to. Glibc's
        /// module does not export setns to Swift, so it is looked up by name.
        private static func enter(_ fd: Int32) -> Int32 {
            typealias SetNamespace = @convention(c) (Int32, Int32) -> Int32
            // dlsym(RTLD_DEFAULT, …): RTLD_DEFAULT is the null handle.
            guard let symbol = dlsym(nil, "setns") else {
                errno = ENOSYS
                return -1
            }
            return unsafeBitCast(symbol, to: SetNamespace.self)(fd, 0x4000_0000)  // CLONE_NEWNET
        }

        /// Adds (RTM_NEWROUTE) or removes (RTM_DELROUTE) the default route and waits for the
        /// kernel's acknowledgement; the kernel tells the namespace's listeners before it.
        func route(add: Bool) throws(BenchError) {
            sequence &+= 1
            // struct nlmsghdr, struct rtmsg (rtnetlink(7)), and for an addition RTA_GATEWAY.
            let length: UInt32 = add ? 36 : 28
            var message: [UInt8] = []
            func append32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { message += $0 } }
            func append16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { message += $0 } }
            append32(length)
            append16(add ? 24 : 25)  // RTM_NEWROUTE, RTM_DELROUTE
            // NLM_F_REQUEST | NLM_F_ACK, and for an addition NLM_F_CREATE | NLM_F_EXCL.
            append16(add ? 0x1 | 0x4 | 0x400 | 0x200 : 0x1 | 0x4)
            append32(sequence)
            append32(0)
            // family AF_INET, dst_len 0 (default), src_len, tos, table RT_TABLE_MAIN; protocol,
            // scope and type: RTPROT_BOOT, RT_SCOPE_UNIVERSE, RTN_UNICAST to add; RT_SCOPE_NOWHERE to remove.
            message += [2, 0, 0, 0, 254] + (add ? [3, 0, 1] : [0, 255, 0])
            append32(0)  // rtm_flags
            if add {
                append16(8)
                append16(5)  // RTA_GATEWAY
                message += gateway
            }
            guard message.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, 0) }) == message.count else {
                throw BenchError("row 13: rtnetlink send in \(name): \(String(cString: strerror(errno)))")
            }
            var answer = [UInt8](repeating: 0, count: 1024)
            let count = answer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            // NLMSG_ERROR with error 0 is the acknowledgement.
            guard count >= 20, answer[4] == 2, answer[5] == 0 else {
                throw BenchError("row 13: rtnetlink in \(name) answered no acknowledgement")
            }
            let error = answer[16..<20].withUnsafeBytes { Int32(littleEndian: $0.loadUnaligned(as: Int32.self)) }
            guard error == 0 else {
                throw BenchError(
                    "row 13: \(add ? "adding" : "removing") the default route in \(name): \(String(cString: strerror(-error)))"
                )
            }
        }

        func remove() {
            if socket >= 0 { close(socket) }
            socket = -1
            _ = try? runToExit(SystemEventsRow.ip, ["netns", "del", name])
        }
    }
}
