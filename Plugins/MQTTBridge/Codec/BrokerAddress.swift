import Glibc

/// Where the broker listens: `tcp://HOST:PORT` (or `HOST:PORT`; port 1883 when left out) or
/// `unix:/PATH` (a Unix-domain socket, as a local Mosquitto's `listener 0 /PATH`). Shared by the
/// bridge's `broker` setting and `host fleet --broker` (issue 41), which does not link the plugin.
public enum BrokerAddress: Equatable, Sendable, CustomStringConvertible {
    case tcp(host: String, port: UInt16)
    case unix(path: String)

    public var description: String {
        switch self {
        case .tcp(let host, let port): "tcp://\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }

    public static func parse(_ text: String) throws(MQTTSettingsProblem) -> BrokerAddress {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard path.hasPrefix("/"), path.utf8.count < 108 else {
                throw .init("settings.broker \"\(text)\": a Unix socket needs an absolute path under 108 bytes")
            }
            return .unix(path: path)
        }
        var rest = Substring(text)
        if rest.hasPrefix("tcp://") {
            rest = rest.dropFirst(6)
        } else if rest.contains("://") {
            throw .init(
                "settings.broker \"\(text)\": only tcp:// and unix: are spoken (TLS is the local broker's bridge's job)"
            )
        }
        var host = rest
        var port: UInt16 = 1883
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let number = UInt16(rest[rest.index(after: colon)...]), number > 0 else {
                throw .init("settings.broker \"\(text)\": the port must be 1 to 65535")
            }
            port = number
            host = rest[..<colon]
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { throw .init("settings.broker \"\(text)\": no host") }
        return .tcp(host: String(host), port: port)
    }

    /// A connected stream socket, or the reason there is none (names the address).
    public func connect() -> Result<Int32, ConnectionError> {
        switch self {
        case .unix(let path):
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return .failure(.system("socket", self)) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
            }
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard result == 0 else {
                let error = ConnectionError.system("connect", self)
                close(fd)
                return .failure(error)
            }
            return .success(fd)
        case .tcp(let host, let port):
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(host, String(port), &hints, &list)
            guard status == 0, let list else {
                return .failure(ConnectionError("cannot resolve \(host): \(String(cString: gai_strerror(status)))"))
            }
            defer { freeaddrinfo(list) }
            var last = ConnectionError("no address for \(host)")
            var entry: UnsafeMutablePointer<addrinfo>? = list
            while let current = entry {
                entry = current.pointee.ai_next
                let fd = socket(
                    current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
                    current.pointee.ai_protocol)
                guard fd >= 0 else {
                    last = .system("socket", self)
                    continue
                }
                if Glibc.connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                    var on: Int32 = 1  // small packets (acks, pings) go out at once
                    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                    return .success(fd)
                }
                last = .system("connect", self)
                close(fd)
            }
            return .failure(last)
        }
    }
}

extension BrokerAddress {
    /// Acknowledges what `fd` (a connection to the broker) received at once, rather than after
    /// the kernel's delayed-ACK timer: call it after each read. Mosquitto leaves Nagle's
    /// algorithm on by default (`set_tcp_nodelay false`), so a small packet it writes behind
    /// one we have not acknowledged yet (a PUBACK behind a message, one subscriber's report behind
    /// another's) waited up to 40 ms for that timer. Linux clears the mode after a while, hence
    /// after each read; nothing on a Unix socket (the call fails, harmlessly).
    public static func acknowledgeNow(_ fd: Int32) {
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), Int32(TCP_QUICKACK), &on, socklen_t(MemoryLayout<Int32>.size))
    }
}

/// Why the broker could not be reached or the connection ended; names the address.
public struct ConnectionError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }

    static func system(_ call: String, _ address: BrokerAddress) -> ConnectionError {
        ConnectionError("\(call) \(address): \(String(cString: strerror(errno)))")
    }
}

/// Why a setting (the bridge's in services.json, or a `host fleet` option) was refused: names
/// the key and the reason.
public struct MQTTSettingsProblem: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
