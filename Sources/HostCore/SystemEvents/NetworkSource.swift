import CSystem
import Glibc
import ServiceJSON

/// Network reachability from rtnetlink (a `NETLINK_ROUTE` socket on the main loop, no bus): the
/// host is online while a default route of the main table goes out through an interface that is
/// up with carrier. Each change is posted to the subscribed services as `network.changed` with
/// `{"online": Bool, "interface": name or null}` (and logged as `network.changed`); the state at
/// start is in the source's on line, not posted.
@MainActor
final class NetworkSource: SystemSource {
    let name = "network"
    let stateRequest: String? = NetworkSource.currentRequest

    /// The notification posted.
    static let notification = "network.changed"
    /// The request the host answers with the current state.
    nonisolated static let currentRequest = "network.current"
    /// RTMGRP_LINK | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE.
    static let groups: UInt32 = 0x1 | 0x40 | 0x400
    /// RT_TABLE_MAIN.
    nonisolated static let mainTable: UInt32 = 254

    private var driver: AppDriver?
    private var socket: Int32 = -1
    private var watch: MainLoop.Watch?
    private var state = ReachabilityState()
    private var published = PublishedState<ReachabilityState.Summary>(
        request: NetworkSource.currentRequest, notification: NetworkSource.notification)

    func check() -> SourceState {
        do throws(SystemError) {
            var state = ReachabilityState()
            try Self.dump(into: &state)
            return .on("rtnetlink (\(state.summary.description))")
        } catch {
            return .off("rtnetlink is not available: \(error)")
        }
    }

    func start(_ driver: AppDriver) -> SourceState {
        // Subscribed first, dumped after: a change in between is in both, and applying it twice is harmless.
        socket = csystem_route_netlink_socket(Self.groups, 1)
        guard socket >= 0 else {
            return .off("rtnetlink is not available: \(SystemError.current("socket(NETLINK_ROUTE)", "rtnetlink"))")
        }
        do throws(SystemError) {
            try Self.dump(into: &state)
            watch = try driver.watch(socket, name: "rtnetlink") { [weak self] in self?.readable() }
        } catch {
            close(socket)
            socket = -1
            return .off("rtnetlink is not available: \(error)")
        }
        self.driver = driver
        // The on line says what the state at start is, and `network.current` answers it.
        published.start(state.summary, driver: driver)
        return .on("rtnetlink (\(state.summary.description))")
    }

    /// Reads the links, then the routes, into `state` (a socket of its own, blocking: the kernel
    /// answers a dump at once).
    static func dump(into state: inout ReachabilityState) throws(SystemError) {
        let fd = csystem_route_netlink_socket(0, 0)
        guard fd >= 0 else { throw .current("socket(NETLINK_ROUTE)", "rtnetlink") }
        defer { close(fd) }
        for (sequence, type) in [(UInt32(1), RouteNetlink.getLink), (2, RouteNetlink.getRoute)] {
            let request = RouteNetlink.dumpRequest(type, sequence: sequence)
            guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else {
                throw .current("send(rtnetlink dump)", "rtnetlink")
            }
            var finished = false
            var buffer = [UInt8](repeating: 0, count: 32_768)
            while !finished {
                let count = try retryingOnInterrupt("recv(rtnetlink dump)", "rtnetlink") {
                    buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                }
                guard count > 0 else {
                    throw SystemError(operation: "recv(rtnetlink dump)", path: "rtnetlink", errno: EPIPE)
                }
                let messages: [RouteNetlink.Message]
                do { messages = try RouteNetlink.parse(buffer[..<count]) } catch {
                    throw SystemError(operation: "\(error)", path: "rtnetlink", errno: EBADMSG)
                }
                for message in messages {
                    if message == .done { finished = true }
                    if case .error(let code) = message, code != 0 {
                        throw SystemError(operation: "rtnetlink dump", path: "rtnetlink", errno: code)
                    }
                    state.apply(message)
                }
            }
        }
    }

    private func readable() {
        var buffer = [UInt8](repeating: 0, count: 32_768)
        while true {
            let count: Int
            do {
                count = try retryingOnInterrupt("recv", "rtnetlink") {
                    buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                }
            } catch {
                guard error.errno == ENOBUFS else { break }
                // The kernel dropped changes it could not queue: read the whole state again.
                var fresh = ReachabilityState()
                if (try? Self.dump(into: &fresh)) != nil { state = fresh }
                continue
            }
            guard count > 0 else { break }
            do {
                for message in try RouteNetlink.parse(buffer[..<count]) { state.apply(message) }
            } catch {
                driver?.log.warn(
                    "host", "rtnetlink: \(error)", event: .networkFailed, .string("reason", error.reason))
            }
        }
        post()
    }

    /// Posts `network.changed` when the summary differs from the one posted last.
    private func post() {
        guard let driver else { return }
        published.publish(state.summary, driver: driver)
    }
}

/// The links and default routes rtnetlink told of, and whether they make the host online.
struct ReachabilityState {
    /// Each interface by index: its name and whether it is up with carrier.
    var links: [Int32: (name: String, up: Bool)] = [:]
    /// The main table's default routes: family and output interface (nil: a multipath route).
    var defaults: Set<Route> = []

    struct Route: Hashable {
        var family: UInt8
        var interface: Int32?
    }

    /// Online, and through which interface.
    struct Summary: PublishedValue {
        var online: Bool
        var interface: String?
        var description: String { online ? "online via \(interface ?? "a multipath route")" : "offline" }

        /// `{"online": Bool, "interface": name or null}`.
        var json: JSONValue { .object(["online": .bool(online), "interface": interface.map { .string($0) } ?? .null]) }

        func logChange(to log: Log) {
            log.info(
                "host", "network \(description)", event: .networkChanged, .string("online", online ? "true" : "false"),
                .string("interface", interface ?? ""))
        }
    }

    mutating func apply(_ message: RouteNetlink.Message) {
        switch message {
        case .link(let index, let name, let up, let deleted):
            if deleted {
                links[index] = nil
            } else {
                links[index] = (name ?? links[index]?.name ?? "#\(index)", up)
            }
        case .route(let family, let table, let prefixLength, let interface, let deleted):
            guard prefixLength == 0, table == NetworkSource.mainTable else { return }
            let route = Route(family: family, interface: interface)
            if deleted { defaults.remove(route) } else { defaults.insert(route) }
        case .done, .error, .other:
            break
        }
    }

    /// Online when a default route goes out through an interface that is up (or one not known yet).
    var summary: Summary {
        let usable = defaults.sorted { ($0.family, $0.interface ?? -1) < ($1.family, $1.interface ?? -1) }.first {
            route in route.interface.map { links[$0]?.up ?? true } ?? true
        }
        guard let usable else { return Summary(online: false, interface: nil) }
        return Summary(online: true, interface: usable.interface.map { links[$0]?.name ?? "#\($0)" })
    }
}
