import CSystem
import Dispatch
import Glibc
import ServiceJSON
import Synchronization

/// The control socket: newline-delimited JSON requests in, one reply line per request out,
/// in order, over any number of connections.
///
/// Connections are served on the main thread, the one that dispatches events (issue 13), from
/// its own epoll loop (``MainLoop``): a readable connection is read once per wake-up, its
/// complete lines carried out at once, and the burst's replies written with one `send` before
/// the next wake-up, so a request costs one wake-up of the main thread and no hand-off. A
/// connection's turn is bounded (``ControlConnection/turnRequests`` requests, a coalesced run
/// of `reload`s counting as one, or ``ControlConnection/turnTime``): what is left waits for its
/// next turn in ``Turns``, which serves one such turn per turn of the loop, round robin, so
/// signals, timers, lifecycle events and the connections that ask little are served between
/// two turns of a client that pipelines (issue 36).
/// Accepting stays on its own queue (a hop per connection, not per request). Replies are
/// written in request order, so an answer that takes a while (a background fetch) holds back
/// the replies after it on that connection, but not the work,
/// other connections or the host. While the main thread is stuck in a service, each
/// connection is also read on its own queue: `state` and `list` are answered there from the
/// snapshot, other requests wait for the main thread in order. Nothing a client does blocks the host: writes never wait (see
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
    /// Whether ``startAccepting()`` resumed the accept source.
    private let acceptStarted = Atomic<Bool>(false)
    private let acceptQueue = DispatchQueue(label: "servicehost.control.accept")
    // Immutable after init; DispatchSource is thread-safe. Kept alive for the process lifetime.
    nonisolated(unsafe) private let acceptSource: DispatchSourceRead
    // What carries requests out; set once at init.
    private let serving: Serving
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
    public init(path: String, maxPayload: Int, shutdownTimeout: Double = 10, log: Log, handler: ControlHandler)
        throws(StartError)
    {
        self.path = path
        self.maxPayload = maxPayload
        self.shutdownTimeout = shutdownTimeout
        self.log = log
        watchers = handler.watchers
        serving = Serving(handler: handler, snapshot: handler.snapshot)
        listener = try Self.bind(path)
        // Accepting never waits: a connection that vanished between the wake-up and accept is EAGAIN.
        _ = fcntl(listener.rawValue, F_SETFL, fcntl(listener.rawValue, F_GETFL) | O_NONBLOCK)
        accepting.withLock { $0.spare = Self.openSpare() }
        // Only once the socket is ours: a host refused beside a live one must not remove it.
        let socketPath = path
        atExitRemoval.withLock { $0 = socketPath }
        atexit { atExitRemoval.withLock { path in path.map { _ = unlink($0) } } }
        // Accepting stays on its own queue: a main thread stuck in a service must still take
        // the connection that asks for `state` (a hop per connection, not per request).
        acceptSource = DispatchSource.makeReadSource(fileDescriptor: listener.rawValue, queue: acceptQueue)
        acceptSource.setEventHandler { [self] in acceptOne() }
        handler.snapshot.whenStuck { [self] in
            // Stuck before `startAccepting()` (in a service's launch): `state` is answered anyway.
            startAccepting()
            for connection in liveConnections.withLock({ Array($0.values) }) { connection.serveWhileStuck() }
        }
    }

    /// Starts taking connections; call it once the host is ready (after the `active with`
    /// line), or it starts by itself when the main thread gets stuck first. Until then the
    /// socket is bound and listening, and the kernel's backlog holds the connections: starting
    /// the accept source costs libdispatch's first worker thread, which nothing before the
    /// line needs (issue 13). Any thread; the first call wins.
    public func startAccepting() {
        guard !acceptStarted.exchange(true, ordering: .acquiringAndReleasing) else { return }
        acceptSource.resume()
    }

    deinit {
        // libdispatch traps on releasing a source never resumed; cancelled first, it takes nothing.
        if !acceptStarted.load(ordering: .acquiring) {
            acceptSource.cancel()
            acceptSource.resume()
        }
    }

    private static func bind(_ path: String) throws(StartError) -> FileDescriptor {
        let address: UnixSocketAddress
        do { address = try UnixSocketAddress(path) } catch {
            throw StartError(description: "control \(error) (pass a shorter --control PATH)")
        }
        // Sliced, not split and joined: the generic join asked the runtime for conformances,
        // a scan of every conformance record on this start-up path.
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
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
            Self.refuse(
                socket,
                "the host serves at most \(Self.maxConnections) control connections at once; try again when one closes")
            return overloaded(
                "the control socket is at its limit of \(Self.maxConnections) connections", reason: "connections",
                limit: Self.maxConnections)
        }
        accepting.withLock { $0.overloaded = false }
        ControlConnection(
            socket: socket, path: path, maxLine: maxPayload * 2 + 4096, maxPayload: maxPayload, log: log,
            watchers: watchers, serving: serving, shutdownTimeout: shutdownTimeout
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
            let accepted = csystem_accept4(
                listener.rawValue, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
            if accepted >= 0 {
                Self.refuse(
                    FileDescriptor(taking: accepted),
                    "the host has no file descriptor left for another control connection (its limit is \(limit) open files); try again later"
                )
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
        log.write(
            .warn, "control", message + "; the host goes on serving the connections it has", event: .controlOverloaded,
            fields: fields)
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
        var bytes: [UInt8] = []
        ControlReply(ControlRefusal(id: nil, message: message)).write(to: &bytes)
        bytes.append(0x0A)
        _ = bytes.withUnsafeBytes {
            send(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
    }

    private static func openSpare() -> Int32 { Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }

    private static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
        return Int(clamping: limit.rlim_cur)
    }

    /// Writes every reply already produced on every connection before the host exits: waits
    /// on the main thread until each is written, its client is dropped, or `seconds` pass, and
    /// not for a client that does not read (issue 36): one that took none of its bytes in
    /// ``stallWait`` is left, so 256 clients that never read cost one such wait, not `seconds`.
    public static func flushReplies(within seconds: Double) {
        let deadline = DispatchTime.now() + seconds
        var waiting = liveConnections.withLock { Array($0.values) }.filter { !$0.flushNow() }
        while !waiting.isEmpty && DispatchTime.now() < deadline {
            let sent = waiting.map(\.sentBytes)
            // One wait for all of them: each waits until the same moment.
            let round = min(deadline, DispatchTime.now() + stallWait)
            for connection in waiting { connection.wait(before: round) }
            waiting = zip(waiting, sent).filter { connection, before in
                !connection.isWritten && connection.sentBytes != before
            }.map(\.0)
        }
    }

    /// How long shutdown waits for a client to read some of its replies before leaving it.
    static let stallWait = DispatchTimeInterval.milliseconds(100)
}

/// The connections whose turn ended with requests left (issue 36), served one turn per turn of
/// the main loop, in the order they came (round robin): each turn is an item of the main
/// queue, posted once the one before ran, so the loop waits for readiness between two turns
/// (the connections that ask little are served then, at once) and whatever the main queue
/// holds (a signal's shutdown or reload, a timer, a lifecycle event) runs between them.
enum Turns {
    private struct Waiting {
        var connections: [ControlConnection] = []
        var next = 0
        /// Whether a turn is on the main queue.
        var posted = false
    }
    private static let waiting = Locked(Waiting())

    /// Whether a connection waits for its turn.
    static var anyWaiting: Bool { waiting.withLock { $0.next < $0.connections.count } }

    /// Queues `connection` for its next turn (any thread).
    fileprivate static func add(_ connection: ControlConnection) {
        let post = waiting.withLock { waiting in
            waiting.connections.append(connection)
            defer { waiting.posted = true }
            return !waiting.posted
        }
        if post { DispatchQueue.main.async { serveOne() } }
    }

    private static func serveOne() {
        let connection: ControlConnection? = waiting.withLock { waiting in
            guard waiting.next < waiting.connections.count else { return nil }
            defer {
                waiting.next += 1
                // Compacted once half of it is served: amortised O(1) per turn.
                if waiting.next * 2 >= waiting.connections.count {
                    waiting.connections.removeFirst(waiting.next)
                    waiting.next = 0
                }
            }
            return waiting.connections[waiting.next]
        }
        connection?.serve(stuck: false, turn: true)
        let again = waiting.withLock { waiting in
            waiting.posted = waiting.next < waiting.connections.count
            return waiting.posted
        }
        if again { DispatchQueue.main.async { serveOne() } }
    }
}

// Every open control connection, so shutdown can write their replies and the server can count
// them; a connection leaves when it closes.
private let liveConnections = Locked<[ObjectIdentifier: ControlConnection]>([:])

// The socket to unlink when the process exits normally (an atexit handler cannot capture).
private let atExitRemoval = Locked<String?>(nil)

/// What carries requests out: the handler on the main thread, and the snapshot that answers
/// `state` and `list` while the main thread is stuck.
struct Serving: Sendable {
    let handler: ControlHandler
    let snapshot: ControlSnapshot
}

/// One client connection: reads lines, carries their requests out in order, writes replies.
final class ControlConnection: Sendable {
    // Closed in deinit, which comes only once every source is cancelled: their handlers hold
    // the connection, and a cancelled source lets its handlers go.
    private let socket: FileDescriptor
    private let path: String
    private let maxLine: Int
    private let maxPayload: Int
    private let shutdownTimeout: Double
    private let log: Log
    /// Drains output the socket had no room for, and reads while the main thread is stuck.
    private let queue = DispatchQueue(label: "servicehost.control.connection")
    private let serving: Serving
    private let watchers: WatchHub?
    private struct State {
        /// The number the next request gets, and the first whose reply is not written yet.
        var nextRequest: UInt64 = 0
        var nextReply: UInt64 = 0
        /// Replies that arrived before an earlier one, by request number.
        var ready: [UInt64: (ControlReply, ControlHandler.After)] = [:]
        /// Requests handed to the main queue (read while it was stuck) and not carried out
        /// yet: the ones read after them follow them there, so all run in order.
        var handedOff = 0
        /// Bursts of requests being carried out: their replies are written once at the end.
        var bursts = 0
        var reading = true
        /// Reading waits for the client to read its replies (see ``pause()``); the source is
        /// suspended (once) while `paused` or not `reading`.
        var paused = false
        /// Counts pauses, so that a pause's timeout does not end a later one.
        var pauses: UInt64 = 0
        /// The last pause timed out without the client reading: the next wake-up carries out
        /// one burst whatever the backlog (so a client that never reads reaches the bound).
        var force = false
        var cancelled = false
        /// Set once the connection turned into a `watch` stream.
        var watch: WatchHub.Sink?
        /// Waiting in ``Turns`` for its next turn: the loop's wake-ups leave it to that turn.
        var waitingTurn = false
    }
    private let state = Locked(State())
    /// What was read and not yet taken as lines: `buffer[start..<end]`. Allocated once (it
    /// grows only for a line longer than it), never zero-filled; freed in deinit.
    private struct Input {
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
        var start = 0
        var end = 0
        /// The client closed its side (or reading failed): no more bytes come.
        var closed = false
    }
    private let input = Locked(Input())
    // Reads on the main thread: the connection in the main loop's epoll set. Set once in
    // start(), before it is resumed; then only read (its methods are thread-safe).
    nonisolated(unsafe) private var source: MainLoop.Watch!
    // Reads on `queue` while the main thread is stuck; created, cancelled and read only on `queue`.
    nonisolated(unsafe) private var stuckSource: DispatchSourceRead?
    // Set once in start(), before the sources run; then only read.
    nonisolated(unsafe) private var output: ConnectionOutput!

    init(
        socket: consuming FileDescriptor, path: String, maxLine: Int, maxPayload: Int, log: Log, watchers: WatchHub?,
        serving: Serving, shutdownTimeout: Double
    ) {
        self.watchers = watchers
        self.socket = socket
        self.path = path
        self.maxLine = maxLine
        self.maxPayload = maxPayload
        self.log = log
        self.serving = serving
        self.shutdownTimeout = shutdownTimeout
    }

    deinit { input.withLock { $0.buffer.deallocate() } }

    func start() {
        output = ConnectionOutput(
            socket: socket.rawValue, queue: queue, owner: self,
            dropped: { [weak self] drop in self?.dropped(drop) },
            drained: { [weak self] in
                self?.resume(after: nil)
                self?.closeIfDone()
            })
        liveConnections.withLock { $0[ObjectIdentifier(self)] = self }
        // The watch keeps the connection alive (its handler holds self) until it is cancelled.
        source = MainLoop.shared.watch(socket.rawValue, name: "control connection on \(path)")
        // Set after `source` is: the handler reads it, and the loop takes the handler under a lock.
        source.setHandler { [self] in serve(stuck: false) }
        do { try source.resume() } catch { return failedToWatch(error) }
        // Accepted while the main thread is stuck: read here until it is back.
        if serving.snapshot.isStuck { serveWhileStuck() }
    }

    /// Writes what it can of the replies produced so far, at once (called on the main thread
    /// at exit); whether all of them are written.
    func flushNow() -> Bool {
        output.flush()
        return isWritten
    }

    /// Whether every reply produced is written (or the output ended).
    var isWritten: Bool { output.isWritten }

    /// The reply bytes the client has taken so far.
    var sentBytes: Int { output.sentBytes }

    /// Waits until the replies produced so far are written, or `deadline` (at exit).
    func wait(before deadline: DispatchTime) { _ = output.waitUntilWritten(before: deadline) }

    /// The main thread is stuck in a service (called on the watchdog's thread): writes the
    /// replies it made before, and reads the connection on `queue` until it is back.
    func serveWhileStuck() {
        output.flush()
        queue.async { [self] in
            guard stuckSource == nil, state.withLock({ $0.reading && !$0.cancelled }) else { return }
            let source = DispatchSource.makeReadSource(fileDescriptor: socket.rawValue, queue: queue)
            source.setEventHandler { [self] in
                guard serving.snapshot.isStuck, state.withLock({ $0.reading && !$0.cancelled }) else {
                    return stopServingWhileStuck()
                }
                serve(stuck: true)
            }
            stuckSource = source
            source.resume()
        }
    }

    /// On `queue`: the main thread reads the connection alone again.
    private func stopServingWhileStuck() {
        stuckSource?.cancel()
        stuckSource = nil
    }

    /// One turn: reads once (at most the buffer, and only once the lines read before are
    /// carried out), carries out the complete lines in order up to the turn's bounds, then
    /// writes their replies at once; a connection with lines left waits in ``Turns`` for its
    /// next turn. On the main thread (`turn`: called by ``Turns``); on `queue` with `stuck`,
    /// where `state` and `list` are answered from the snapshot and the rest goes to the main
    /// queue.
    fileprivate func serve(stuck: Bool, turn: Bool = false) {
        let force: Bool? = state.withLock { state in
            if turn { state.waitingTurn = false } else if state.waitingTurn && !stuck { return nil }
            guard !state.cancelled else { return nil }
            state.bursts += 1
            defer { state.force = false }
            return state.force
        }
        guard let force else { return }
        // Replies the client has not read yet past `backlogLimit`: wait for it to read them
        // before carrying out more (a burst's replies can be ten times its requests).
        let backedUp = { [output] in !force && output!.backlog > Self.backlogLimit }
        if stuck || !backedUp() { readOnce() }
        var waiting = false
        var more = false
        if stuck {
            while let (number, request, _) = nextLine(stuck: true) {
                switch request {
                case .failure(let refusal): finished(number, ControlReply(refusal), .keepRunning)
                case .success(let request): handOff(number, request)
                }
            }
        } else {
            let handler = serving.handler
            let started = DispatchTime.now().uptimeNanoseconds
            var carried = 0
            // Woken by its socket while others wait for their turns: one request now (a client
            // that asks one thing is answered at once), the rest in a turn after theirs.
            let limit = turn || !Turns.anyWaiting ? Self.turnRequests : 1
            // Once per wake-up, not per request: the check costs more than a small request.
            MainActor.assumeIsolated {
                while true {
                    if backedUp() {
                        waiting = true
                        break
                    }
                    if carried == limit
                        || (carried > 0 && DispatchTime.now().uptimeNanoseconds - started > Self.turnTime)
                    {
                        more = true
                        break
                    }
                    guard let (number, request, handOff) = nextLine(stuck: false) else { break }
                    carried += 1
                    switch request {
                    case .failure(let refusal):
                        finished(number, ControlReply(refusal), .keepRunning)
                    case .success(let request) where handOff:
                        self.handOff(number, request)
                    case .success(let request):
                        // The `reload`s read right after this one are answered by its reload.
                        let alike = request.command.coalesces ? followingReloads() : []
                        handler.handle(request) { [self] reply, after in
                            finished(number, reply, after)
                            for (number, id) in alike {
                                var copy = reply
                                copy.id = id
                                finished(number, copy, .keepRunning)
                            }
                        }
                    }
                }
            }
        }
        state.withLock { $0.bursts -= 1 }
        output.flush()
        if input.withLock({ $0.closed && $0.start == $0.end }) { finishReading() }
        if waiting {
            pause()
        } else if more {
            queueTurn()
        }
    }

    /// Waits for a turn in ``Turns`` (once: a connection waiting there is not added again).
    private func queueTurn() {
        let add = state.withLock { state in
            defer { state.waitingTurn = true }
            return !state.waitingTurn
        }
        if add { Turns.add(self) }
    }

    /// The most requests a connection carries out in one turn (README, Limits): a run of
    /// `reload`s read together counts as one. Woken by its socket while others wait for
    /// their turns, a connection carries out one request, then waits for a turn after them.
    static let turnRequests = 64
    /// The longest a connection's turn goes on taking requests, in nanoseconds (README,
    /// Limits): checked after each request, so a turn takes at least one and ends after the
    /// one that passes it.
    static let turnTime: UInt64 = 100_000

    /// The most replies a connection may have unread before it waits for the client to read
    /// them (well under ``ConnectionOutput/bound``, which drops it).
    static let backlogLimit = 256 << 10
    /// How long a connection waits for its client to read before it goes on anyway: a client
    /// that reads gets its replies without being dropped; one that never reads still reaches
    /// the bound and is dropped, instead of blocking its writes forever.
    static let backlogWait = DispatchTimeInterval.milliseconds(50)

    /// Stops reading until the output is written, or ``backlogWait`` passes (on the main thread).
    private func pause() {
        let pause: UInt64? = state.withLock { state in
            guard state.reading && !state.cancelled && !state.paused else { return nil }
            state.paused = true
            state.pauses += 1
            source.suspend()
            return state.pauses
        }
        guard let pause else { return }
        queue.asyncAfter(deadline: .now() + Self.backlogWait) { [weak self] in self?.resume(after: pause) }
        // Written meanwhile (its drained call came before the pause): go on at once.
        if output.backlog <= Self.backlogLimit { resume(after: nil) }
    }

    /// Reads again: the output was written (`timedOut` nil), or pause number `timedOut` timed out.
    private func resume(after timedOut: UInt64?) {
        let resumed: Result<Bool, SystemError> = state.withLock { state in
            guard state.paused && !state.cancelled, timedOut == nil || timedOut == state.pauses else {
                return .success(false)
            }
            state.paused = false
            state.force = timedOut != nil
            if state.reading {
                do throws(SystemError) { try source.resume() } catch { return .failure(error) }
            }
            return .success(true)
        }
        switch resumed {
        case .failure(let error): failedToWatch(error)
        // The lines already read wait in `input`: no wake-up comes for them. A turn like any
        // other: many clients that resume at once are not served all in one go.
        case .success(true): queueTurn()
        case .success(false): break
        }
    }

    /// The main loop could not take the connection back (epoll_ctl failed: out of kernel
    /// memory or past fs.epoll.max_user_watches): it is closed, and the host goes on.
    private func failedToWatch(_ error: SystemError) {
        log.write(
            .warn, "control", "closed a control connection: \(error); the host goes on serving the others",
            event: .controlUnwatched, fields: [.string("operation", error.operation), .int("errno", Int(error.errno))])
        close()
    }

    private func readOnce() {
        input.withLock { input in
            guard !input.closed else { return }
            // Lines left from the last read come first: reading now would only grow the buffer.
            if input.start < input.end,
                memchr(input.buffer.baseAddress! + input.start, 0x0A, input.end - input.start) != nil
            {
                return
            }
            // Room for a whole line: what is left of one moves to the front, and the buffer
            // doubles only when a line is longer than it (up to the limit, which is refused).
            if input.start > 0 {
                let left = input.end - input.start
                if left > 0 { memmove(input.buffer.baseAddress!, input.buffer.baseAddress! + input.start, left) }
                input.start = 0
                input.end = left
            }
            if input.end == input.buffer.count && input.buffer.count <= maxLine {
                let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: input.buffer.count * 2, alignment: 1)
                larger.copyMemory(from: UnsafeRawBufferPointer(input.buffer))
                input.buffer.deallocate()
                input.buffer = larger
            }
            let count = Glibc.read(
                socket.rawValue, input.buffer.baseAddress! + input.end, input.buffer.count - input.end)
            // The socket does not block: a wake-up with nothing to read is not the end.
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
            if count <= 0 { input.closed = true } else { input.end += count }
        }
    }

    /// The next request line, its number, and whether it goes to the main queue rather than
    /// being carried out here; nil when no complete line is left.
    private func nextLine(stuck: Bool) -> (UInt64, Result<ControlRequest, ControlRefusal>, Bool)? {
        input.withLock { input in
            while input.start < input.end {
                let base = input.buffer.baseAddress!
                let request: Result<ControlRequest, ControlRefusal>?
                if let found = memchr(base + input.start, 0x0A, input.end - input.start) {
                    let newline = base.distance(to: found)
                    let line = UnsafeRawBufferPointer(rebasing: input.buffer[input.start..<newline])
                    input.start = newline + 1
                    request = self.request(line)
                } else if input.end - input.start > maxLine {
                    // A line this long cannot be resynchronised: answer, then hang up.
                    input.start = input.end
                    input.closed = true
                    request = .failure(tooLong())
                } else if input.closed {
                    // A final line without a newline still gets an answer.
                    input.start = input.end
                    request = .failure(ControlRefusal(id: nil, message: "the request has no newline at its end"))
                } else {
                    return nil
                }
                guard let request else { continue }
                let next: (UInt64, Bool)? = state.withLock { state in
                    // A watch stream only listens for its client going away.
                    if state.watch != nil { return nil }
                    defer { state.nextRequest += 1 }
                    guard case .success = request, stuck || state.handedOff > 0 else {
                        return (state.nextRequest, false)
                    }
                    state.handedOff += 1
                    return (state.nextRequest, true)
                }
                guard let (number, handOff) = next else {
                    input.start = input.end
                    return nil
                }
                return (number, request, handOff)
            }
            return nil
        }
    }

    /// The `reload` requests on the lines read right after one (blank lines skipped), taken
    /// together with their numbers and ids, up to the first other line: one reload answers
    /// them all, as every one of them arrived before it started (issue 36). Empty when the
    /// requests go to the main queue in order (``handOff(_:_:)``).
    private func followingReloads() -> [(UInt64, JSONValue?)] {
        input.withLock { input in
            var taken: [(UInt64, JSONValue?)] = []
            let base = input.buffer.baseAddress!
            while input.start < input.end, let found = memchr(base + input.start, 0x0A, input.end - input.start) {
                let newline = base.distance(to: found)
                let parsed = request(UnsafeRawBufferPointer(rebasing: input.buffer[input.start..<newline]))
                if let parsed {
                    guard case .success(let next) = parsed, next.command.coalesces else { break }
                    let number: UInt64? = state.withLock { state in
                        guard state.watch == nil, state.handedOff == 0 else { return nil }
                        defer { state.nextRequest += 1 }
                        return state.nextRequest
                    }
                    guard let number else { break }
                    taken.append((number, next.id))
                }
                input.start = newline + 1
            }
            return taken
        }
    }

    /// The request on one line; nil for a blank line.
    private func request(_ line: UnsafeRawBufferPointer) -> Result<ControlRequest, ControlRefusal>? {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { return nil }
        let trimmed = line.last == 0x0D ? UnsafeRawBufferPointer(rebasing: line.dropLast()) : line
        return trimmed.count > maxLine ? .failure(tooLong()) : ControlRequest.parse(trimmed, maxPayload: maxPayload)
    }

    private func tooLong() -> ControlRefusal {
        ControlRefusal(
            id: nil, message: "the request line is longer than \(maxLine) bytes (--max-payload is \(maxPayload))")
    }

    /// A request read while the main thread was stuck (or after one that was): `state` and
    /// `list` are answered from the snapshot if it still is; the rest runs on the main queue
    /// in order (a `state` or `list` there is answered by whichever of the main thread and the
    /// snapshot comes first).
    private func handOff(_ number: UInt64, _ request: ControlRequest) {
        let snapshot = serving.snapshot
        if let answer = snapshot.reply(to: request) {
            state.withLock { $0.handedOff -= 1 }
            return finished(number, answer, .keepRunning)
        }
        let held = snapshot.hold(request) { [self] answer in finished(number, answer, .keepRunning) }
        let handler = serving.handler
        DispatchQueue.main.async { [self] in
            MainActor.assumeIsolated {
                state.withLock { $0.handedOff -= 1 }
                handler.handle(request) { [self] reply, after in
                    if let held {
                        snapshot.release(held.key)
                        guard held.waiting.claim() else { return }
                    }
                    finished(number, reply, after)
                }
            }
        }
    }

    /// Stops reading; the connection closes once the pending replies are written.
    private func finishReading() {
        // Suspended with the flag, so that close() knows whether to resume it.
        state.withLock { state in
            // A closed connection's source is cancelled: suspending it would keep it (and the
            // descriptor) forever.
            guard state.reading && !state.cancelled else { return }
            state.reading = false
            if !state.paused { source.suspend() }
        }
        closeIfDone()
    }

    /// Records reply `number` and appends every reply now in order to the output, written
    /// at once unless a burst is under way (it writes them at its end).
    private func finished(_ number: UInt64, _ reply: ControlReply, _ after: ControlHandler.After) {
        let (exits, watch, flush) = state.withLock { state in
            var exits = false
            var watch: Bool?
            // Appended with the lock held: replies finished on two threads go out in order.
            func write(_ reply: ControlReply, _ then: ControlHandler.After) {
                output.append { out in
                    reply.write(to: &out)
                    out.append(0x0A)
                }
                exits = then == .exit
                state.nextReply += 1
                if case .watch(let logs) = then { watch = logs }
            }
            if number == state.nextReply && state.ready.isEmpty {
                write(reply, after)
            } else {
                state.ready[number] = (reply, after)
                while !exits && watch == nil, let (value, then) = state.ready.removeValue(forKey: state.nextReply) {
                    write(value, then)
                }
            }
            return (exits, watch, state.bursts == 0)
        }
        if flush { output.flush() }
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
                        + " the host goes on serving the others", event: .watchDropped,
                    .int("bytes", ConnectionOutput.bound))
            } else {
                log.warn(
                    "control",
                    "dropped a control client: it left more than \(ConnectionOutput.bound) bytes of replies unread;"
                        + " the host goes on serving the others", event: .controlDropped,
                    .int("bytes", ConnectionOutput.bound))
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
        let (first, watch) = state.withLock { state in
            defer { state.cancelled = true }
            return (!state.cancelled, state.watch)
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
        queue.async { self.stopServingWhileStuck() }
    }
}

extension ControlRequest.Command {
    /// Whether a run of these requests read together is carried out once, each of them
    /// answered with its result (issue 36): only `reload`, which is idempotent and costly; a
    /// query is cheap and an event is delivered each time it is asked for.
    fileprivate var coalesces: Bool {
        if case .reload = self { return true }
        return false
    }
}
