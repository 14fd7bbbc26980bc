import CSystem
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
/// connections or the host. Nothing a client does blocks the host: writes never wait (see
/// ``ConnectionOutput``), connections are capped, and running out of descriptors sheds load.
public final class ControlServer: Sendable {
    /// The socket's path.
    public let path: String
    /// The most control connections served at once (README, Limits); more are refused.
    public static let maxConnections = 256
    private let listener: FileDescriptor
    private let maxPayload: Int
    private let shutdownTimeout: Double
    private let log: Log
    private struct Accepting {
        /// Kept open to be closed when descriptors run out, to accept and refuse with a reply.
        var spare: Int32 = -1
        /// Whether the overload was logged (once, until a connection is accepted again).
        var overloaded = false
        /// Whether the accept source is suspended for a moment.
        var backingOff = false
    }
    private let accepting = Locked(Accepting())
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
    /// At exit (`terminate`), replies are written for at most half of `shutdownTimeout`.
    public init(path: String, maxPayload: Int, shutdownTimeout: Double = 10, log: Log, handler: ControlHandler) throws(StartError) {
        self.path = path
        self.maxPayload = maxPayload
        self.shutdownTimeout = shutdownTimeout
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
        // Accepting never waits: a connection that vanished between the wake-up and accept is EAGAIN.
        _ = fcntl(listener.rawValue, F_SETFL, fcntl(listener.rawValue, F_GETFL) | O_NONBLOCK)
        accepting.withLock { $0.spare = Self.openSpare() }
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
        let accepted = csystem_accept4(listener.rawValue, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
        guard accepted >= 0 else {
            switch errno {
            case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED: return
            case EMFILE, ENFILE: return shed()
            default: return backOff("accept: \(String(cString: strerror(errno)))", reason: "accept", limit: nil)
            }
        }
        let socket = FileDescriptor(taking: accepted)
        // Only the host's own user (or root) may drive it.
        guard let uid = UnixSocket.peerUID(socket), uid == geteuid() || uid == 0 else {
            Self.refuse(socket, "permission denied: the control socket serves only its owner")
            log.warn("control", "refused a connection from another user")
            return
        }
        guard liveConnections.withLock({ $0.count }) < Self.maxConnections else {
            Self.refuse(socket, "the host serves at most \(Self.maxConnections) control connections at once; try again when one closes")
            return overloaded("the control socket is at its limit of \(Self.maxConnections) connections", reason: "connections", limit: Self.maxConnections)
        }
        accepting.withLock { $0.overloaded = false }
        ControlConnection(
            socket: socket, path: path, maxLine: maxPayload * 2 + 4096, maxPayload: maxPayload, log: log,
            watchers: watchers, perform: perform, shutdownTimeout: shutdownTimeout
        ).start()
    }

    /// Out of descriptors: the spare one makes room to accept the waiting connection and
    /// close it with a reply naming the limit, so the listener does not stay readable (which
    /// spins the accept source) and the client learns why.
    private func shed() {
        let limit = Self.descriptorLimit()
        let shed = accepting.withLock { state -> Bool in
            guard state.spare >= 0 else { return false }
            Glibc.close(state.spare)
            state.spare = -1
            let accepted = csystem_accept4(listener.rawValue, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
            if accepted >= 0 {
                Self.refuse(
                    FileDescriptor(taking: accepted),
                    "the host has no file descriptor left for another control connection (its limit is \(limit) open files); try again later")
            }
            state.spare = Self.openSpare()
            return accepted >= 0
        }
        if shed {
            overloaded(
                "out of file descriptors (the limit is \(limit) open files): control connections are refused until some close",
                reason: "descriptors", limit: limit)
        } else {
            backOff(
                "out of file descriptors (the limit is \(limit) open files) and no spare one to refuse connections with",
                reason: "descriptors", limit: limit)
        }
    }

    /// Logs the overload once until a connection is accepted again.
    private func overloaded(_ message: String, reason: String, limit: Int?) {
        let first = accepting.withLock { state in
            defer { state.overloaded = true }
            return !state.overloaded
        }
        guard first else { return }
        var fields: [LogField] = [.string("reason", reason)]
        if let limit { fields.append(.int("limit", limit)) }
        log.write(.warn, "control", message + "; the host goes on serving the connections it has", event: "control.overloaded", fields: fields)
    }

    /// Stops accepting for a moment: accepting cannot succeed now, and the listener stays
    /// readable (which would spin the accept source).
    private func backOff(_ message: String, reason: String, limit: Int?) {
        overloaded(message, reason: reason, limit: limit)
        let first = accepting.withLock { state in
            defer { state.backingOff = true }
            return !state.backingOff
        }
        guard first else { return }
        acceptSource.suspend()
        acceptQueue.asyncAfter(deadline: .now() + .milliseconds(100)) { [self] in
            accepting.withLock {
                if $0.spare < 0 { $0.spare = Self.openSpare() }
                $0.backingOff = false
            }
            acceptSource.resume()
        }
    }

    /// One line to a connection the host will not serve, without waiting for it to be read.
    private static func refuse(_ socket: consuming FileDescriptor, _ message: String) {
        let bytes = Array((ControlReply(ControlRefusal(id: nil, message: message)).json.serialized + "\n").utf8)
        _ = bytes.withUnsafeBytes { send(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
    }

    private static func openSpare() -> Int32 { Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }

    private static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
        return Int(clamping: limit.rlim_cur)
    }

    /// Writes every reply already produced on every connection before the host exits: waits
    /// on the main thread until each is written, its client is dropped, or `seconds` pass.
    public static func flushReplies(within seconds: Double) {
        let connections = liveConnections.withLock { Array($0.values) }
        let deadline = DispatchTime.now() + seconds
        for connection in connections { connection.flush(before: deadline) }
    }
}

// Every open control connection, so shutdown can write their replies and the server can count
// them; a connection leaves when it closes.
private let liveConnections = Locked<[ObjectIdentifier: ControlConnection]>([:])

// The socket to unlink when the process exits normally (an atexit handler cannot capture).
private let atExitRemoval = Locked<String?>(nil)

/// Carries a batch of requests out on the main thread, in order; each reply closure is
/// called once, on any thread.
typealias Perform = @Sendable ([(ControlRequest, ReplyTo)]) -> Void
/// Where one request's reply goes.
typealias ReplyTo = @Sendable (ControlReply, ControlHandler.After) -> Void

/// One client connection: reads lines, carries their requests out in order, writes replies.
final class ControlConnection: Sendable {
    // Closed in deinit, which comes only once both sources are cancelled: their handlers hold
    // the connection, and a cancelled source lets its handlers go.
    private let socket: FileDescriptor
    private let path: String
    private let maxLine: Int
    private let maxPayload: Int
    private let shutdownTimeout: Double
    private let log: Log
    private let queue = DispatchQueue(label: "servicehost.control.connection")
    private let perform: Perform
    private let watchers: WatchHub?
    private struct State {
        /// The number the next request gets, and the first whose reply is not written yet.
        var nextRequest: UInt64 = 0
        var nextReply: UInt64 = 0
        /// Replies that arrived before an earlier one, by request number.
        var ready: [UInt64: (ControlReply, ControlHandler.After)] = [:]
        var reading = true
        var cancelled = false
        /// Set once the connection turned into a `watch` stream.
        var watch: WatchHub.Sink?
    }
    private let state = Locked(State())
    // Immutable after init; DispatchSource's methods are thread-safe.
    nonisolated(unsafe) private let source: DispatchSourceRead
    // Set once in start(), before the sources run; then only read.
    nonisolated(unsafe) private var output: ConnectionOutput!
    // Read into by the source's handler alone (it runs on `queue`, one at a time); freed in
    // deinit. Allocated once, never zero-filled.
    nonisolated(unsafe) private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
    // The start of a request line whose newline has not come yet; touched only by the source's
    // handler (on `queue`).
    nonisolated(unsafe) private var partial: [UInt8] = []

    init(
        socket: consuming FileDescriptor, path: String, maxLine: Int, maxPayload: Int, log: Log, watchers: WatchHub?,
        perform: @escaping Perform, shutdownTimeout: Double
    ) {
        self.watchers = watchers
        source = DispatchSource.makeReadSource(fileDescriptor: socket.rawValue, queue: queue)
        self.socket = socket
        self.path = path
        self.maxLine = maxLine
        self.maxPayload = maxPayload
        self.log = log
        self.perform = perform
        self.shutdownTimeout = shutdownTimeout
    }

    deinit { readBuffer.deallocate() }

    func start() {
        output = ConnectionOutput(
            socket: socket.rawValue, queue: queue, owner: self,
            dropped: { [weak self] drop in self?.dropped(drop) },
            drained: { [weak self] in self?.closeIfDone() })
        liveConnections.withLock { $0[ObjectIdentifier(self)] = self }
        // The source keeps the connection alive (its handler holds self) until it is cancelled.
        source.setEventHandler { [self] in readAvailable() }
        source.resume()
    }

    /// Waits until the replies produced so far are written (called on the main thread at exit).
    func flush(before deadline: DispatchTime) {
        // Replies handed to the queue before now are queued for writing after this.
        queue.sync {}
        _ = output.waitUntilWritten(before: deadline)
    }

    private func readAvailable() {
        let count = Glibc.read(socket.rawValue, readBuffer.baseAddress, readBuffer.count)
        // The socket does not block: a wake-up with nothing to read is not the end.
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
        guard count > 0 else {
            // End of file or an error: a final line without a newline still gets an answer.
            let leftover = partial
            partial = []
            if !leftover.isEmpty {
                enqueue([.failure(ControlRefusal(id: nil, message: "the request has no newline at its end"))])
            }
            finishReading()
            return
        }
        // A watch stream only listens for its client going away.
        if state.withLock({ $0.watch != nil }) { return }
        // One pass over what was read: each newline ends a line; what follows the last one
        // waits in `partial` for the rest.
        let base = readBuffer.baseAddress!
        var lines: [[UInt8]] = []
        var start = 0
        while start < count, let found = memchr(base + start, 0x0A, count - start) {
            let newline = base.distance(to: found)
            let line = UnsafeRawBufferPointer(rebasing: readBuffer[start..<newline])
            start = newline + 1
            if partial.isEmpty {
                lines.append(Array(line))
            } else {
                partial += line
                lines.append(partial)
                partial = []
            }
        }
        partial += UnsafeRawBufferPointer(rebasing: readBuffer[start..<count])
        let overflow = partial.count > maxLine
        var requests = lines.compactMap(request)
        // A line this long cannot be resynchronised: answer, then hang up.
        if overflow { requests.append(.failure(tooLong())) }
        enqueue(requests)
        if overflow { finishReading() }
    }

    /// The request on one line; nil for a blank line.
    private func request(_ line: [UInt8]) -> Result<ControlRequest, ControlRefusal>? {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { return nil }
        let trimmed = line.last == 0x0D ? Array(line.dropLast()) : line
        return trimmed.count > maxLine ? .failure(tooLong()) : ControlRequest.parse(trimmed, maxPayload: maxPayload)
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

    /// Records reply `number` and queues every reply now in order for writing.
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
        if !text.isEmpty { output.enqueue(Array(text.utf8)) }
        if exits {
            // On the main thread, as a signal's shutdown: every connection's replies (this one's
            // included) are written first.
            let seconds = shutdownTimeout / 2
            DispatchQueue.main.async {
                ControlServer.flushReplies(within: seconds)
                exit(0)
            }
            return
        }
        if let logs = watch { return startWatching(logs: logs) }
        closeIfDone()
    }

    /// Turns the connection into a stream of trace records (and log lines): until the client
    /// goes away, or is dropped for reading too slowly. Requests after `watch` are ignored.
    private func startWatching(logs: Bool) {
        guard let watchers else { return closeIfDone() }
        let sink = WatchHub.Sink(logs: logs) { [output] bytes in output?.enqueue(bytes) }
        state.withLock { $0.watch = sink }
        watchers.add(sink)
    }

    /// The output ended early: its client left more than the bound unread, or went away.
    private func dropped(_ drop: ConnectionOutput.Drop) {
        if drop == .tooSlow {
            if state.withLock({ $0.watch != nil }) {
                log.warn(
                    "control",
                    "dropped a watch client: it left more than \(ConnectionOutput.bound) bytes unread;"
                        + " the host goes on serving the others", event: "watch.dropped", .int("bytes", ConnectionOutput.bound))
            } else {
                log.warn(
                    "control",
                    "dropped a control client: it left more than \(ConnectionOutput.bound) bytes of replies unread;"
                        + " the host goes on serving the others", event: "control.dropped", .int("bytes", ConnectionOutput.bound))
            }
        } else {
            log.debug("control", "a client went away before its reply")
        }
        close()
    }

    private func closeIfDone() {
        let done = state.withLock { !$0.reading && $0.nextReply == $0.nextRequest }
        if done && output.isEmpty { close() }
    }

    private func close() {
        let (first, suspended, watch) = state.withLock { state in
            defer { state.cancelled = true }
            return (!state.cancelled, !state.reading, state.watch)
        }
        guard first else { return }
        liveConnections.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
        output.end()
        if let watch {
            watchers?.remove(watch)
            // Wakes a client blocked reading the stream.
            shutdown(socket.rawValue, Int32(SHUT_RDWR))
        }
        source.cancel()
        // A suspended source delivers its cancellation only once resumed; a watch stream
        // dropped while its client still sends is not suspended (resuming it would trap).
        if suspended { source.resume() }
    }
}
