import Dispatch
import Glibc
import ServiceJSON
import Synchronization

/// The control socket: newline-delimited JSON requests in, one reply line per request out,
/// in order, over any number of connections.
///
/// Sockets are served on background queues (one per connection); requests are carried out
/// on the main thread in arrival order, without waiting for earlier replies to be written;
/// replies are written in request order, so an answer that takes a while (a background
/// fetch) holds back the replies after it on that connection, but not the work, other
/// connections or the host.
public final class ControlServer: Sendable {
    /// The socket's path.
    public let path: String
    private let listener: FileDescriptor
    private let maxPayload: Int
    private let log: Log
    private let acceptQueue = DispatchQueue(label: "servicehost.control.accept")
    // Immutable after init; DispatchSource is thread-safe. Kept alive for the process lifetime.
    nonisolated(unsafe) private let acceptSource: DispatchSourceRead
    // Carries requests out on the main thread; set once at init.
    private let perform: Perform
    // The `watch` clients' hub.
    private let watchers: WatchHub?

    /// Why the control socket could not be opened.
    public struct StartError: Error, CustomStringConvertible {
        /// What went wrong, naming the path.
        public let description: String
    }

    /// Binds `path` (mode 0600, in a directory created 0700 when missing), replacing a stale
    /// socket left by a dead host and refusing to start beside a live one.
    public init(path: String, maxPayload: Int, log: Log, handler: ControlHandler) throws(StartError) {
        self.path = path
        self.maxPayload = maxPayload
        self.log = log
        watchers = handler.watchers
        let snapshot = handler.snapshot
        perform = { batch in
            // A main thread stuck in a service cannot answer: state and list come from a snapshot,
            // also for those already waiting when it got stuck (whichever answers first wins).
            var waiting: [(ControlRequest, ReplyTo, (key: UInt64, waiting: ControlSnapshot.Waiting)?)] = []
            for (request, reply) in batch {
                if let answer = snapshot.reply(to: request) {
                    reply(answer, .keepRunning)
                    continue
                }
                waiting.append((request, reply, snapshot.hold(request) { answer in reply(answer, .keepRunning) }))
            }
            guard !waiting.isEmpty else { return }
            // One hop to the main thread for every request read at once.
            DispatchQueue.main.async {
                MainActor.assumeIsolated {
                    for (request, reply, held) in waiting {
                        handler.handle(request) { value, after in
                            if let held {
                                snapshot.release(held.key)
                                guard held.waiting.claim() else { return }
                            }
                            reply(value, after)
                        }
                    }
                }
            }
        }
        listener = try Self.bind(path)
        // Only once the socket is ours: a host refused beside a live one must not remove it.
        let socketPath = path
        atExitRemoval.withLock { $0 = socketPath }
        atexit { atExitRemoval.withLock { path in path.map { _ = unlink($0) } } }
        acceptSource = DispatchSource.makeReadSource(fileDescriptor: listener.rawValue, queue: acceptQueue)
        acceptSource.setEventHandler { [self] in acceptOne() }
        acceptSource.resume()
    }

    private static func bind(_ path: String) throws(StartError) -> FileDescriptor {
        let address: UnixSocketAddress
        do { address = try UnixSocketAddress(path) } catch {
            throw StartError(description: "control \(error) (pass a shorter --control PATH)")
        }
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !directory.isEmpty {
            do { try DirectoryHandle.makeDirectories(directory) } catch {
                throw StartError(description: "control socket directory: \(error)")
            }
        }
        do {
            return try UnixSocket.listen(address)
        } catch  where error.errno == EADDRINUSE {
            // A socket file is there: a live host answers a connect, a dead one's does not.
            if (try? UnixSocket.connect(address)) != nil {
                throw StartError(
                    description: "another host is already running with control socket \(path)"
                        + " (stop it, or pass a different --control PATH)")
            }
            unlink(path)
            do { return try UnixSocket.listen(address) } catch {
                throw StartError(description: "control socket \(error)")
            }
        } catch {
            throw StartError(description: "control socket \(error)")
        }
    }

    private func acceptOne() {
        guard let socket = try? listener.accept(path: path) else { return }
        // Only the host's own user (or root) may drive it.
        guard let uid = UnixSocket.peerUID(socket), uid == geteuid() || uid == 0 else {
            let refusal = ControlReply(ControlRefusal(id: nil, message: "permission denied: the control socket serves only its owner"))
            try? socket.sendAll(Array((refusal.json.serialized + "\n").utf8), path: path)
            log.warn("control", "refused a connection from another user")
            return
        }
        UnixSocket.setSendTimeout(socket, seconds: 5)
        ControlConnection(
            socket: socket, path: path, maxLine: maxPayload * 2 + 4096, maxPayload: maxPayload, log: log,
            watchers: watchers, perform: perform
        ).start()
    }
}

// The socket to unlink when the process exits normally (an atexit handler cannot capture).
private let atExitRemoval = Locked<String?>(nil)

/// Carries a batch of requests out on the main thread, in order; each reply closure is
/// called once, on any thread.
typealias Perform = @Sendable ([(ControlRequest, ReplyTo)]) -> Void
/// Where one request's reply goes.
typealias ReplyTo = @Sendable (ControlReply, ControlHandler.After) -> Void

/// One client connection: reads lines, carries their requests out in order, writes replies.
final class ControlConnection: Sendable {
    // Closed in deinit, which comes only once the source is cancelled: the source's event
    // handler holds the connection, and a cancelled source lets its handlers go.
    private let socket: FileDescriptor
    private let path: String
    private let maxLine: Int
    private let maxPayload: Int
    private let log: Log
    private let queue = DispatchQueue(label: "servicehost.control.connection")
    private let perform: Perform
    private let watchers: WatchHub?
    private struct State {
        var buffer: [UInt8] = []
        /// The number the next request gets, and the first whose reply is not written yet.
        var nextRequest: UInt64 = 0
        var nextReply: UInt64 = 0
        /// Replies that arrived before an earlier one, by request number.
        var ready: [UInt64: (ControlReply, ControlHandler.After)] = [:]
        var reading = true
        var cancelled = false
        /// Set once the connection turned into a `watch` stream.
        var watch: (stream: WatchStream, sink: WatchHub.Sink)?
    }
    private let state = Locked(State())
    // Immutable after init; DispatchSource's methods are thread-safe.
    nonisolated(unsafe) private let source: DispatchSourceRead

    init(
        socket: consuming FileDescriptor, path: String, maxLine: Int, maxPayload: Int, log: Log, watchers: WatchHub?,
        perform: @escaping Perform
    ) {
        self.watchers = watchers
        source = DispatchSource.makeReadSource(fileDescriptor: socket.rawValue, queue: queue)
        self.socket = socket
        self.path = path
        self.maxLine = maxLine
        self.maxPayload = maxPayload
        self.log = log
        self.perform = perform
    }

    func start() {
        // The source keeps the connection alive (its handler holds self) until it is cancelled.
        source.setEventHandler { [self] in readAvailable() }
        source.resume()
    }

    private func readAvailable() {
        guard let bytes = try? socket.read(upTo: 65536, path: path), !bytes.isEmpty else {
            // End of file or an error: a final line without a newline still gets an answer.
            let leftover = state.withLock { state in
                defer { state.buffer = [] }
                return state.buffer
            }
            if !leftover.isEmpty {
                enqueue([.failure(ControlRefusal(id: nil, message: "the request has no newline at its end"))])
            }
            finishReading()
            return
        }
        // A watch stream only listens for its client going away.
        if state.withLock({ $0.watch != nil }) { return }
        var lines: [[UInt8]] = []
        var overflow = false
        state.withLock { state in
            state.buffer += bytes
            while let newline = state.buffer.firstIndex(of: 0x0A) {
                lines.append(Array(state.buffer[..<newline]))
                state.buffer.removeSubrange(...newline)
            }
            overflow = state.buffer.count > maxLine
        }
        var requests = lines.filter { !$0.allSatisfy { $0 == 0x20 || $0 == 0x0D || $0 == 0x09 } }.map { line in
            let trimmed = line.last == 0x0D ? Array(line.dropLast()) : line
            return trimmed.count > maxLine ? .failure(tooLong()) : ControlRequest.parse(trimmed, maxPayload: maxPayload)
        }
        // A line this long cannot be resynchronised: answer, then hang up.
        if overflow { requests.append(.failure(tooLong())) }
        enqueue(requests)
        if overflow { finishReading() }
    }

    private func tooLong() -> ControlRefusal {
        ControlRefusal(id: nil, message: "the request line is longer than \(maxLine) bytes (--max-payload is \(maxPayload))")
    }

    /// Starts requests at once: they go to the main queue in arrival order (one hop for all
    /// the requests of one read), so they run in order without waiting for the previous
    /// reply's write; replies are written in request order as they become ready (an answer
    /// that takes a while holds back only the replies after it, not the work).
    private func enqueue(_ requests: [Result<ControlRequest, ControlRefusal>]) {
        let first = state.withLock { state in
            defer { state.nextRequest += UInt64(requests.count) }
            return state.nextRequest
        }
        var batch: [(ControlRequest, ReplyTo)] = []
        for (offset, request) in requests.enumerated() {
            let number = first + UInt64(offset)
            switch request {
            case .failure(let refusal):
                finished(number, ControlReply(refusal), .keepRunning)
            case .success(let request):
                batch.append((request, { [self] reply, after in queue.async { self.finished(number, reply, after) } }))
            }
        }
        if !batch.isEmpty { perform(batch) }
    }

    /// Stops reading; the connection closes once the pending replies are written.
    private func finishReading() {
        let wasReading = state.withLock { state in
            defer { state.reading = false }
            return state.reading
        }
        if wasReading { source.suspend() }
        closeIfDone()
    }

    /// Records reply `number` and writes every reply now in order, in one write.
    private func finished(_ number: UInt64, _ reply: ControlReply, _ after: ControlHandler.After) {
        let (text, exits, watch) = state.withLock { state in
            state.ready[number] = (reply, after)
            var text = ""
            var exits = false
            var watch: Bool?
            while let (value, then) = state.ready.removeValue(forKey: state.nextReply) {
                text += value.json.serialized + "\n"
                exits = exits || then == .exit
                state.nextReply += 1
                if case .watch(let logs) = then { watch = logs }
                if exits || watch != nil { break }
            }
            return (text, exits, watch)
        }
        if !text.isEmpty && (try? socket.sendAll(Array(text.utf8), path: path)) == nil {
            log.debug("control", "a client went away before its reply")
        }
        if exits { exit(0) }
        if let logs = watch { return startWatching(logs: logs) }
        closeIfDone()
    }

    /// Turns the connection into a stream of trace records (and log lines): until the client
    /// goes away, or is dropped for reading too slowly. Requests after `watch` are ignored.
    private func startWatching(logs: Bool) {
        guard let watchers else { return closeIfDone() }
        let stream = WatchStream(
            queue: queue,
            write: { [self] bytes in
                send(socket.rawValue, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            },
            dropped: { [self] tooSlow in
                if tooSlow {
                    log.warn(
                        "control",
                        "dropped a watch client: it left more than \(WatchStream.bound) bytes unread;"
                            + " the host goes on serving the others", event: "watch.dropped", .int("bytes", WatchStream.bound))
                }
                queue.async { self.close() }
            })
        let sink = WatchHub.Sink(logs: logs) { bytes in stream.enqueue(bytes) }
        state.withLock { $0.watch = (stream, sink) }
        watchers.add(sink)
    }

    private func closeIfDone() {
        let done = state.withLock { !$0.reading && $0.nextReply == $0.nextRequest }
        if done { close() }
    }

    private func close() {
        let (first, suspended) = state.withLock { state in
            defer { state.cancelled = true }
            return (!state.cancelled, !state.reading)
        }
        guard first else { return }
        if let watch = state.withLock({ $0.watch }) {
            watch.stream.end()
            watchers?.remove(watch.sink)
            // Wakes a client blocked reading the stream.
            shutdown(socket.rawValue, Int32(SHUT_RDWR))
        }
        source.cancel()
        // A suspended source delivers its cancellation only once resumed; a watch stream
        // dropped while its client still sends is not suspended (resuming it would trap).
        if suspended { source.resume() }
    }
}
