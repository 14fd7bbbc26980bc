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
        var reply: JSONValue = .null
        try exchange(message, with: path) { value in
            reply = value
            return false
        }
        return reply
    }

    /// Sends `message` and hands `each` every line the host sends back (the reply, then, for
    /// `watch`, every record) until `each` answers false or the host closes the connection.
    public static func exchange(
        _ message: ControlMessage, with path: String,
        each: (JSONValue) -> Bool
    ) throws(ClientError) {
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
        var buffer: [UInt8] = []
        var replied = false
        while true {
            while let newline = buffer.firstIndex(of: 0x0A) {
                let value: JSONValue
                do { value = try JSONValue(parsing: Array(buffer[..<newline])) } catch {
                    throw ClientError(description: "the host sent an unreadable reply: \(error)")
                }
                buffer.removeSubrange(...newline)
                replied = true
                if !each(value) { return }
            }
            let bytes: [UInt8]
            do { bytes = try socket.read(upTo: 65536, path: path) } catch {
                throw ClientError(description: "reading from \(path): \(error.reason)")
            }
            if bytes.isEmpty {
                if replied { return }
                throw ClientError(description: "the host at \(path) closed the connection without a reply")
            }
            buffer += bytes
        }
    }
}
