import Glibc
import ServiceJSON

/// A control-channel client: one request, one reply (what `host ctl` uses).
public enum ControlClient {
    /// Why a request could not be made or answered.
    public struct ClientError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends `message` to the host listening on `path` and returns its reply as it came
    /// (``ControlReply/init(json:)`` reads it).
    public static func send(_ message: ControlMessage, to path: String) throws(ClientError) -> JSONValue {
        let fd: Int32
        do { fd = try UnixSocket.connect(path) } catch {
            let hint = error.errno == ENOENT || error.errno == ECONNREFUSED ? " (is a host running? start one with host --plugins DIR)" : ""
            throw ClientError(description: "cannot reach the host at \(path): \(error.reason)\(hint)")
        }
        defer { close(fd) }
        guard UnixSocket.writeAll(fd, Array((message.json.serialized + "\n").utf8)) else {
            throw ClientError(description: "the host at \(path) closed the connection")
        }
        var line: [UInt8] = []
        while !line.contains(0x0A) {
            guard let bytes = UnixSocket.read(fd, capacity: 65536) else {
                throw ClientError(description: "reading from \(path): \(SystemError.current("read", path).reason)")
            }
            if bytes.isEmpty { throw ClientError(description: "the host at \(path) closed the connection without a reply") }
            line += bytes
        }
        do {
            return try JSONValue(parsing: Array(line[..<line.firstIndex(of: 0x0A)!]))
        } catch {
            throw ClientError(description: "the host sent an unreadable reply: \(error)")
        }
    }
}
