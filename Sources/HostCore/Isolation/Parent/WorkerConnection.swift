import Dispatch
import Glibc
import Synchronization

/// The host's side of one worker process: its channel, its output, and its death.
///
/// A reader thread of its own reads the channel and the worker's output for the worker's
/// whole life, so the host notices a death at once (end of file, then `waitpid`) even while
/// its main thread is elsewhere. Host calls are carried out as they arrive; answers to the
/// host's requests go to the main thread, which waits for them with a deadline in
/// ``request(_:_:expecting:timeout:)``.
///
/// No thread of the host ever waits for the worker to read (issue 36): the channel writes
/// what the socket takes and keeps the rest (``ChannelOutbox``), which the reader thread
/// writes when there is room. A worker that leaves more than the bound unread (bytes, or no
/// byte taken for `stallTimeout` seconds) is broken: logged (`worker.stalled`) and killed,
/// which the host then handles as a crash.
final class WorkerConnection: Sendable {
    /// What the main thread is given while it waits.
    enum Outcome: Sendable {
        /// The answer.
        case reply(Frame)
        /// The worker died first.
        case died(WorkerDeath)
        /// The deadline passed.
        case timedOut
    }

    private enum Inbound: Sendable {
        case answer(Frame)
        case mainThreadCall(Frame)
        case died(WorkerDeath)
    }

    private struct State {
        var waiting = false
        var inbox: [Inbound] = []
        var death: WorkerDeath?
        var cause: WorkerDeath.Cause?
        var stage: UInt8 = 0
        var expectingExit = false
    }

    /// The worker's process id.
    let pid: pid_t
    let channel: FrameChannel
    let forwarder: HostCallForwarder
    private let log: Log
    private let source: String
    private let services: [String]
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    // Wakes the reader thread when bytes begin to wait in the channel's outbox: `second` is
    // written by whichever thread queued them, `first` is read by the reader thread.
    private let queued: FileDescriptor.Pair
    // Told on the reader thread once the worker is reaped; set once at init.
    private let onDeath: @Sendable (WorkerConnection, WorkerDeath) -> Void

    /// Starts `executable __worker pluginPath` and its reader thread. `source` names the
    /// worker's services in log lines about its output (`services` are their ids);
    /// `stallTimeout` is how long bytes may wait for the worker to read before it is broken.
    init(
        executable: String, pluginPath: String, stallTimeout: Double, log: Log, source: String, services: [String],
        onDeath: @escaping @Sendable (WorkerConnection, WorkerDeath) -> Void
    ) throws(SystemError) {
        queued = try FileDescriptor.pipe(path: "the worker channel's wake-up pipe")
        _ = fcntl(queued.first.rawValue, F_SETFL, O_NONBLOCK)
        _ = fcntl(queued.second.rawValue, F_SETFL, O_NONBLOCK)
        let started = try WorkerSpawn.spawn(executable: executable, pluginPath: pluginPath)
        pid = started.pid
        channel = FrameChannel(
            socket: started.channel,
            bound: ChannelOutbox.Bound(bytes: ChannelOutbox.Bound.standardBytes, seconds: stallTimeout))
        forwarder = HostCallForwarder(channel: channel)
        self.log = log
        self.source = source
        self.services = services
        self.onDeath = onDeath
        let wakeUp = queued.second.rawValue
        channel.setHooks(
            FrameChannel.Hooks(
                queued: {
                    var one: UInt8 = 1
                    _ = Glibc.write(wakeUp, &one, 1)  // a full pipe already wakes the reader
                },
                stalled: { [weak self] stall in self?.stalled(stall) }))
        // The worker's output is the reader thread's alone: it closes when that thread ends.
        let output = started.output
        do {
            try DetachedThread.start("reader thread of the worker of \(source)") { [self] in readUntilDeath(output) }
        } catch {
            // Nothing would read or reap the worker: it goes, reaped here (its descriptors close
            // with this connection).
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = try? retryingOnInterrupt("waitpid", source) { waitpid(pid, &status, 0) }
            throw error
        }
    }

    /// The last step of loading the worker reported (PluginLoader.LoadStage), 0 before any.
    var stage: UInt8 { state.withLock { $0.stage } }

    /// Whether the worker died.
    var death: WorkerDeath? { state.withLock { $0.death } }

    // MARK: Requests (main thread)

    /// Sends a request and waits, at most `timeout` seconds, for its answer of a type in
    /// `expecting`. Store calls the worker makes meanwhile run here, on the main thread.
    @MainActor
    func request(_ writer: inout WireWriter, _ type: FrameType, expecting: [FrameType], timeout: Double) -> Outcome {
        let sequence = channel.nextSequence()
        if let death = state.withLock({ state -> WorkerDeath? in
            state.waiting = state.death == nil
            return state.death
        }) {
            return .died(death)
        }
        do {
            try channel.send(&writer, type, sequence: sequence)
        } catch {
            // The worker is gone: its death comes (the reader sees end of file).
            return awaitDeath(timeout: 2).map(Outcome.died) ?? .timedOut
        }
        return wait(until: .now() + timeout) { frame in frame.sequence == sequence && expecting.contains(frame.type) }
    }

    /// Kills the worker (SIGKILL) and waits, at most `timeout` seconds, until it is reaped.
    @MainActor
    func killAndWait(timeout: Double = 2) -> WorkerDeath? {
        kill(because: .killedByHost)
        return awaitDeath(timeout: timeout)
    }

    /// Says the worker will exit on purpose (its channel is closed): not a crash.
    func expectExit() { state.withLock { $0.expectingExit = true } }

    /// Whether its end was asked for (expectExit) rather than a crash.
    var exitWasExpected: Bool { state.withLock { $0.expectingExit } }

    /// Closes the host's end: the worker reads end of file and exits.
    func close() {
        expectExit()
        channel.shutdown()
    }

    @MainActor
    private func awaitDeath(timeout: Double) -> WorkerDeath? {
        if let death = state.withLock({ state -> WorkerDeath? in
            state.waiting = state.death == nil
            return state.death
        }) {
            return death
        }
        if case .died(let death) = wait(until: .now() + timeout, for: { _ in false }) { return death }
        return nil
    }

    @MainActor
    private func wait(until deadline: DispatchTime, for isAnswer: (Frame) -> Bool) -> Outcome {
        while true {
            let timedOut = wake.wait(timeout: deadline) == .timedOut
            var items = state.withLock { state in
                defer { state.inbox = [] }
                return state.inbox
            }
            var index = 0
            while index < items.count {
                switch items[index] {
                case .answer(let frame) where isAnswer(frame):
                    // Calls that arrived with or after the answer still run, here and now.
                    items += state.withLock { state in
                        defer {
                            state.inbox = []
                            state.waiting = false
                        }
                        return state.inbox
                    }
                    for case .mainThreadCall(let call) in items[(index + 1)...] { performOnMain(call) }
                    return .reply(frame)
                case .answer:
                    break  // the late answer to a request that timed out
                case .mainThreadCall(let call):
                    performOnMain(call)
                case .died(let death):
                    state.withLock { $0.waiting = false }
                    return .died(death)
                }
                index += 1
            }
            if timedOut {
                let leftovers = state.withLock { state in
                    defer {
                        state.inbox = []
                        state.waiting = false
                    }
                    return state.inbox
                }
                for case .mainThreadCall(let call) in leftovers { performOnMain(call) }
                if case .died(let death)? = leftovers.last { return .died(death) }
                return .timedOut
            }
        }
    }

    @MainActor
    private func performOnMain(_ frame: Frame) {
        do { try forwarder.answer(frame) } catch { brokeProtocol(error) }
    }

    // MARK: The reader thread

    private func readUntilDeath(_ output: borrowing FileDescriptor) {
        var decoder = FrameDecoder()
        var lines = OutputLines(log: log, source: source)
        var outputOpen = true
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
        defer { buffer.deallocate() }
        var reaped: WorkerExit?
        reading: while true {
            // Bytes waiting for the worker: room in the socket wakes this thread too, and the time
            // bound is checked no later than when it runs out.
            let left = channel.flush()
            let writable = left != nil ? Int16(POLLOUT) : 0
            var fds = [
                pollfd(fd: channel.socket.rawValue, events: Int16(POLLIN) | writable, revents: 0),
                pollfd(fd: outputOpen ? output.rawValue : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: queued.first.rawValue, events: Int16(POLLIN), revents: 0),
            ]
            let wait = left.map { Int32(min(500, ($0 * 1000).rounded(.up) + 1)) } ?? 500
            let ready = (try? retryingOnInterrupt("poll", "worker channel") { poll(&fds, 3, wait) }) ?? -1
            if fds[2].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while Glibc.read(queued.first.rawValue, &drained, drained.count) > 0 {}
            }
            if ready == 0 {
                // A worker can die while something it started holds its channel open.
                if let exit = reap(blocking: false) {
                    reaped = exit
                    break reading
                }
                continue
            }
            if fds[1].revents != 0 {
                let n = (try? output.read(into: buffer, path: source)) ?? 0
                if n > 0 { lines.feed(UnsafeRawBufferPointer(rebasing: buffer[..<n])) } else { outputOpen = false }
            }
            // Readable, hung up or failed; POLLOUT alone is the flush at the top of the loop.
            guard fds[0].revents & ~Int16(POLLOUT) != 0 else { continue }
            let n: Int
            do { n = try channel.read(into: buffer) } catch { break reading }
            if n == 0 { break reading }
            decoder.append(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
            do {
                while let frame = try decoder.next() { try dispatch(frame) }
            } catch {
                brokeProtocol(error)
                break reading
            }
        }
        // What the worker printed last, without waiting for a descendant that holds the pipe.
        if outputOpen {
            _ = fcntl(output.rawValue, F_SETFL, O_NONBLOCK)
            while let n = try? output.read(into: buffer, path: source), n > 0 {
                lines.feed(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
            }
        }
        lines.flush()
        let exit = reaped ?? reapAfterEndOfFile()
        let death = state.withLock { state -> WorkerDeath in
            let death = WorkerDeath(exit: exit, cause: state.cause)
            state.death = death
            if state.waiting { state.inbox.append(.died(death)) }
            return death
        }
        wake.signal()
        onDeath(self, death)
    }

    /// After end of file: the worker is exiting, or closed its channel and lives on (then it
    /// is killed after a second).
    private func reapAfterEndOfFile() -> WorkerExit {
        for _ in 0..<50 {
            if let exit = reap(blocking: false) { return exit }
            usleep(20_000)
        }
        state.withLock { state in
            if state.cause == nil && !state.expectingExit { state.cause = .closedChannel }
        }
        Glibc.kill(pid, SIGKILL)
        return reap(blocking: true)!
    }

    private func reap(blocking: Bool) -> WorkerExit? {
        var raw: Int32 = 0
        let result = try? retryingOnInterrupt("waitpid", source) { waitpid(pid, &raw, blocking ? 0 : WNOHANG) }
        return result == pid ? WorkerExit(waitStatus: raw) : nil
    }

    private func dispatch(_ frame: Frame) throws(WireError) {
        switch frame.type {
        case .hello:
            var r = frame.reader
            let version = try r.u16("version")
            guard version == Wire.version else { throw WireError(.badVersion(version)) }
        case .stage:
            var r = frame.reader
            let stage = try r.u8("stage")
            state.withLock { $0.stage = stage }
        case .opened, .openFailed, .attached, .result:
            let waiting = state.withLock { state in
                if state.waiting { state.inbox.append(.answer(frame)) }
                return state.waiting
            }
            if waiting { wake.signal() }
        case .call:
            guard try HostCallFrame.callKind(frame).needsMainThread else { return try forwarder.perform(frame) }
            let waiting = state.withLock { state in
                if state.waiting { state.inbox.append(.mainThreadCall(frame)) }
                return state.waiting
            }
            if waiting {
                wake.signal()
            } else {
                DispatchQueue.main.async { MainActor.assumeIsolated { self.performOnMain(frame) } }
            }
        case .complete, .log, .post, .subscribe, .registerForRemoteNotifications, .request:
            try forwarder.perform(frame)
        case .open, .attach, .event, .reply, .requestReply:
            throw .malformed("a worker sent a \(frame.type) frame, which only the host sends")
        }
    }

    /// The channel says the worker crossed the bound (any thread): it is logged, and killed;
    /// the host handles its death as a crash.
    private func stalled(_ stall: ChannelOutbox.Stall) {
        log.write(
            .error, "host", "the worker (pid \(pid)) of \(source) \(stall); killing it", event: .workerStalled,
            fields: [
                .strings("services", services), .int("pid", pid), .string("bound", stall.bound),
                .int("bytes", stall.bytes), .string("seconds", Seconds.text(stall.seconds)),
            ])
        kill(because: .stalled(stall.description))
    }

    private func brokeProtocol(_ error: WireError) {
        kill(because: .protocolError(error.description))
    }

    private func kill(because cause: WorkerDeath.Cause) {
        state.withLock { state in
            if state.cause == nil { state.cause = cause }
        }
        Glibc.kill(pid, SIGKILL)
    }
}
