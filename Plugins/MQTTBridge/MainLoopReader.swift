import Dispatch
import Glibc
import MQTTCodec
import ServiceKit

/// ``MQTTClient``'s reader on the host's main loop (issue 37, ``MQTTClient/ReaderPath/mainLoop``).
///
/// The broker's socket is watched with `host.watch` (extension `dev.servicehost.sources/1`):
/// each inbound packet is read and handled on the main thread, which also calls the service and
/// carries out its requests, so no other thread is woken for it. What still runs elsewhere:
/// - `connect(2)` and the broker's name lookup block, so each attempt runs on a queue of its
///   own; the result comes back through the wake pipe, which the main loop watches too;
/// - the keep-alive checks run on a timer on the main queue (which the main loop drains),
///   every half keep-alive and at most every second, as the connection thread's poll waits.
///
/// Writes stay a bounded send (``MQTTClient/begin(_:adopting:path:)``: blocking, at most 1 s,
/// then the connection is dropped and made anew) rather than a queue flushed when writable:
/// the extension watches for readability only, what the bridge writes is small (PUBACKs,
/// pings, the state, replies) and only waits when the broker left a full send buffer unread,
/// and a torn packet is never followed by another.
final class MainLoopState: @unchecked Sendable {
    // @unchecked: every stored property is read and written on the main thread only (the
    // service's calls didFinishLaunching, willReload and willTerminate, the watches' handlers
    // and the main queue's timer), except `queue`, which is a constant.
    /// Whether the socket is read here (set once at start, on the main thread).
    var isOn = false
    var host: HostContext?
    /// The session being read, nil between two.
    var link: MQTTClient.Link?
    var socketWatch: SourceWatch?
    var wakeWatch: SourceWatch?
    var timer: DispatchSourceTimer?
    /// The keep-alive the timer was armed for.
    var armedFor: Double = 0
    var backoff = ReconnectBackoff()
    /// What one read fills: allocated once.
    var buffer: [UInt8] = []
    /// Where attempts to connect run.
    let queue = DispatchQueue(label: "servicehost.mqtt-bridge.connect")
}

extension MQTTClient {
    /// Main thread: reads on the main loop from now on when the host lets this service watch a
    /// descriptor there; false in a worker process or from a host without the extension (the
    /// connection thread reads then).
    func startOnMainLoop(_ host: HostContext, adopting adopted: Session?) -> Bool {
        guard wake.read >= 0,
            let watch = try? host.watch(wake.read, readable: { [weak self] _ in self?.attemptOver() })
        else { return false }
        mainLoop.isOn = true
        mainLoop.host = host
        mainLoop.wakeWatch = watch
        mainLoop.buffer = [UInt8](repeating: 0, count: Self.readSize)
        if let adopted { beginOnMainLoop(adopted.fd, adopting: adopted) } else { connect(after: 0) }
        return true
    }

    /// Connects on ``MainLoopState/queue`` after `delay` seconds and wakes the main loop with
    /// the result (``Connection/attempt``). Any thread.
    private func connect(after delay: Double) {
        mainLoop.queue.asyncAfter(deadline: .now() + delay) { [self] in
            guard !isStopped else { return }
            let attempt = settings.broker.connect()
            // Under the lock, so a stop either sees the attempt (and closes its socket) or the
            // attempt sees the stop.
            let kept = connection.withLock { connection in
                guard !connection.stopped else { return false }
                connection.attempt = attempt
                return true
            }
            guard kept else {
                if case .success(let fd) = attempt { close(fd) }
                return
            }
            var byte: UInt8 = 1
            _ = Glibc.write(wake.write, &byte, 1)
        }
    }

    /// Main thread (the wake pipe's watch): an attempt to connect is over.
    private func attemptOver() {
        var drained = [UInt8](repeating: 0, count: 16)
        while Glibc.read(wake.read, &drained, drained.count) > 0 {}
        let attempt = connection.withLock { connection in
            defer { connection.attempt = nil }
            return connection.attempt
        }
        switch attempt {
        case nil: return
        case .failure(let error)?:
            unreachable(error, mainLoop.backoff)
            connect(after: reconnectDelay(&mainLoop.backoff, ended: nil))
        case .success(let fd)?:
            beginOnMainLoop(fd, adopting: nil)
        }
    }

    /// Main thread: starts a session on `fd` and watches it.
    private func beginOnMainLoop(_ fd: Int32, adopting adopted: Session?) {
        guard let link = begin(fd, adopting: adopted, path: .mainLoop) else {
            finish(fd, handedOver: false)
            return ended(acceptedAt: nil, "cannot send CONNECT")
        }
        guard let host = mainLoop.host,
            let watch = try? host.watch(fd, readable: { [weak self] _ in self?.socketReadable() })
        else {
            finish(fd, handedOver: false)
            return ended(acceptedAt: link.acceptedAt, "the host's main loop did not take the socket")
        }
        mainLoop.link = link
        mainLoop.socketWatch = watch
        armTimer(link.keepAlive)
    }

    /// Main thread (the socket's watch): reads what arrived.
    private func socketReadable() {
        guard var link = mainLoop.link else { return }
        // Taken out while read, so its buffer has one owner (appending copies nothing).
        mainLoop.link = nil
        if let end = readAvailable(&link, into: &mainLoop.buffer) { return endSession(link, end) }
        mainLoop.link = link
        if link.keepAlive != mainLoop.armedFor { armTimer(link.keepAlive) }
    }

    /// Main thread (the timer): the keep-alive's checks.
    private func timerFired() {
        guard var link = mainLoop.link else { return }
        mainLoop.link = nil
        if let end = tick(&link, at: now()) { return endSession(link, end) }
        mainLoop.link = link
    }

    /// Main thread: the timer of the keep-alive's checks, every ``tickInterval(_:)``.
    private func armTimer(_ keepAlive: Double) {
        mainLoop.timer?.cancel()
        let interval = Self.tickInterval(keepAlive)
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(
            deadline: .now() + interval, repeating: .milliseconds(Int(interval * 1000)), leeway: .milliseconds(20))
        timer.setEventHandler { [weak self] in self?.timerFired() }
        timer.resume()
        mainLoop.timer = timer
        mainLoop.armedFor = keepAlive
    }

    /// Main thread: stops watching the session's socket and timing its keep-alive.
    private func unwatchSession() {
        mainLoop.socketWatch?.end()
        mainLoop.socketWatch = nil
        mainLoop.timer?.cancel()
        mainLoop.timer = nil
    }

    /// Main thread: the session on `link` ended (`reason`); connects again after the backoff.
    private func endSession(_ link: Link, _ reason: String) {
        unwatchSession()
        finish(link.fd, handedOver: false)
        ended(acceptedAt: link.acceptedAt, reason)
    }

    /// Main thread: after a session, the next attempt, unless stopped.
    private func ended(acceptedAt: Double?, _ reason: String) {
        guard !isStopped else { return }
        connect(after: reconnectDelay(&mainLoop.backoff, ended: (acceptedAt, reason)))
    }

    /// Main thread (willReload): parks the session for the replacement, as the connection
    /// thread does between two reads; this call is between two already. Nil when there is
    /// none to hand over (see ``park(within:forwardingTo:)``).
    func parkOnMainLoop(forwardingTo channel: Int32) -> Session? {
        guard let link = mainLoop.link else { return nil }
        let session = connection.withLock { connection -> Session? in
            guard connection.fd >= 0, !connection.stopped else { return nil }
            connection.parking = true
            connection.forward = channel
            guard park(link, from: &connection) else {
                connection.parking = false
                connection.forward = -1
                return nil
            }
            defer { connection.parked = nil }
            return connection.parked
        }
        guard let session else { return nil }
        // The watch ends after the last whole packet read: the socket's next bytes, and a part
        // of a packet in `held`, are the replacement's.
        mainLoop.link = nil
        endMainLoop()
        return session
    }

    /// Main thread (willTerminate, after the DISCONNECT): closes the session's socket and an
    /// attempt's that came too late.
    func stopOnMainLoop() {
        if let link = mainLoop.link {
            mainLoop.link = nil
            unwatchSession()
            finish(link.fd, handedOver: false)
        }
        let late = connection.withLock { connection in
            defer { connection.attempt = nil }
            return connection.attempt
        }
        if case .success(let fd)? = late { close(fd) }
        endMainLoop()
    }

    /// Main thread: nothing more is watched (stopped, or handed over).
    private func endMainLoop() {
        unwatchSession()
        mainLoop.wakeWatch?.end()
        mainLoop.wakeWatch = nil
    }
}
