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
        let socket: FileDescriptor
        do { socket = try UnixSocket.connect(try UnixSocketAddress(path)) } catch let error as SystemError {
            let hint = error.errno == ENOENT || error.errno == ECONNREFUSED ? " (is a host running? start one with host --plugins DIR)" : ""
            throw ClientError(description: "cannot reach the host at \(path): \(error.reason)\(hint)")
        } catch {
            throw ClientError(description: "cannot reach the host: \(error)")
        }
        do {
            try socket.sendAll(Array((message.json.serialized + "\n").utf8), path: path)
        } catch {
            throw ClientError(description: "the host at \(path) closed the connection")
        }
        var line: [UInt8] = []
        while !line.contains(0x0A) {
            let bytes: [UInt8]
            do { bytes = try socket.read(upTo: 65536, path: path) } catch {
                throw ClientError(description: "reading from \(path): \(error.reason)")
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
