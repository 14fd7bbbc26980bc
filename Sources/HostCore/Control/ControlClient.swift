import Glibc
import ServiceJSON

/// A control-channel client: one request, one reply (what `host ctl` uses).
public enum ControlClient {
    /// Why a request could not be made or answered.
    public struct ClientError: Error, CustomStringConvertible {
        public let description: String
        /// Nothing listens on the socket (ENOENT, ECONNREFUSED): no host runs there.
        public var hostNotRunning = false
    }

    /// Sends `message` to the host listening on `path` and returns its reply as it came
    /// (``ControlReply/init(json:)`` reads it); throws when none has come within `timeout`
    /// seconds.
    public static func send(_ message: ControlMessage, to path: String, timeout: Double) throws(ClientError)
        -> JSONValue
    {
        var reply: JSONValue = .null
        try exchange(message, with: path, timeout: timeout) { value in
            reply = value
            return false
        }
        return reply
    }

    /// Sends `message` and hands `each` every line the host sends back (the reply, then, for
    /// `watch`, every record) until `each` answers false or the host closes the connection.
    /// Throws when no reply has come within `timeout` seconds; once one has, waits as long as
    /// the host keeps the connection (a `watch` stream may be quiet for hours).
    public static func exchange(
        _ message: ControlMessage, with path: String, timeout: Double,
        each: (JSONValue) -> Bool
    ) throws(ClientError) {
        let socket: FileDescriptor
        do { socket = try UnixSocket.connect(try UnixSocketAddress(path)) } catch let error as SystemError {
            let hint =
                error.errno == ENOENT || error.errno == ECONNREFUSED
                ? " (is a host running? start one with host --plugins DIR)" : ""
            throw ClientError(
                description: "cannot reach the host at \(path): \(error.reason)\(hint)", hostNotRunning: !hint.isEmpty)
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
        let deadline = Clock.monotonic() + timeout
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
            if !replied {
                try awaitReadable(socket, until: deadline, timeout: timeout, path: path)
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

    /// Returns when `socket` has bytes (or an end) to read; throws once `deadline` has passed.
    private static func awaitReadable(
        _ socket: borrowing FileDescriptor, until deadline: Double, timeout: Double, path: String
    ) throws(ClientError) {
        while true {
            var polled = pollfd(fd: socket.rawValue, events: Int16(POLLIN), revents: 0)
            let ready: Int32
            do throws(SystemError) {
                // Again after a signal, with what is left of the time.
                ready = try retryingOnInterrupt("poll", path) {
                    let left = deadline - Clock.monotonic()
                    return left > 0 ? poll(&polled, 1, Int32(min((left * 1000).rounded(.up), Double(Int32.max)))) : 0
                }
            } catch {
                throw ClientError(description: "waiting for the host at \(path): \(error.reason)")
            }
            if ready > 0 { return }
            if Clock.monotonic() >= deadline {
                throw ClientError(
                    description: "the host at \(path) did not reply within \(OptionValue.secondsText(timeout)) s"
                        + " (a service may be holding its main thread; --timeout SECS waits longer)")
            }
        }
    }
}
