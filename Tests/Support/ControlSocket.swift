import Foundation

/// A raw control-channel connection, for tests that send what `host ctl` never would.
public final class ControlSocket {
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to the socket at `path`.
    public init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw TestFailure("connect \(path): errno \(errno)")
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Connects as soon as a host listens at `path`, trying for at most `seconds`: its file
    /// appears at `bind`, a moment before `listen`, when a connection is still refused.
    public static func connecting(to path: String, within seconds: Double = 60) throws -> ControlSocket {
        var socket: ControlSocket?
        _ = eventually(within: seconds) {
            socket = try? ControlSocket(path: path)
            return socket != nil
        }
        return try socket ?? ControlSocket(path: path)  // the last try's error says why
    }

    deinit { close(fd) }

    /// Sends raw bytes.
    public func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Sends text as UTF-8.
    public func send(_ text: String) { send(Array(text.utf8)) }

    /// Closes the sending half (the host sees end of file).
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// The next reply line as a JSON object; nil at end of file or after 30 s.
    public func readReply() -> [String: Any]? {
        while !buffer.contains(0x0A) {
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { return nil }
            buffer += chunk[..<n]
        }
        let newline = buffer.firstIndex(of: 0x0A)!
        let line = Data(buffer[..<newline])
        buffer.removeSubrange(...newline)
        return try? JSONSerialization.jsonObject(with: line) as? [String: Any]
    }
}
