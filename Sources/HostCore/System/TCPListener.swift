import CSystem
import Glibc

/// An IPv4 address and port to listen on: `--metrics-listen [ADDRESS:]PORT`.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// Dotted-quad IPv4.
    public let host: String
    public let port: UInt16

    /// `PORT` alone listens on loopback (127.0.0.1). Any other address must be written out:
    /// `:PORT` (Go's "every interface") is refused, so nothing is exposed by accident.
    public init(parsing text: String) throws(UsageError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let hostText = parts.count == 2 ? parts[0] : "127.0.0.1"
        let portText = parts.count == 2 ? parts[1] : parts[0]
        guard let port = UInt16(portText) else { throw UsageError("'\(portText)' is not a port from 0 to 65535") }
        if parts.count == 2 && hostText.isEmpty {
            throw UsageError(
                "'\(text)' has no address: give PORT for loopback only, or the address to listen on"
                    + " (0.0.0.0:\(port) for every interface, on purpose)")
        }
        var probe = in_addr()
        guard inet_pton(AF_INET, hostText, &probe) == 1 else {
            throw UsageError("'\(hostText)' is not an IPv4 address")
        }
        host = hostText
        self.port = port
    }

    /// Whether only this machine can connect (127.0.0.0/8).
    public var isLoopback: Bool { host.hasPrefix("127.") }

    public var description: String { "\(host):\(port)" }
}

/// A listening TCP socket (IPv4), close-on-exec.
enum TCPListener {
    /// Binds and listens on `address`.
    static func listen(_ address: ListenAddress) throws(SystemError) -> FileDescriptor {
        let what = "\(address)"
        let socket = FileDescriptor(
            taking: try retryingOnInterrupt("socket", what) {
                Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            })
        var yes: Int32 = 1
        setsockopt(socket.rawValue, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var inet = sockaddr_in()
        inet.sin_family = sa_family_t(AF_INET)
        inet.sin_port = address.port.bigEndian
        inet_pton(AF_INET, address.host, &inet.sin_addr)
        let bound = withUnsafePointer(to: &inet) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket.rawValue, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw .current("bind", what) }
        guard Glibc.listen(socket.rawValue, 16) == 0 else { throw .current("listen", what) }
        return socket
    }

    /// The port `socket` is bound to (the one chosen for port 0).
    static func port(of socket: borrowing FileDescriptor) -> UInt16 {
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket.rawValue, $0, &length) }
        }
        return UInt16(bigEndian: actual.sin_port)
    }
}
