import CSystem
import Dispatch
import Glibc

/// The host's side of one worker process: its channel, its output, and its death.
///
/// Everything here runs on the main thread (issue 37): the channel, the worker's output and its
/// process (a pidfd, readable when it exits) are watched by the main thread's loop
/// (``MainLoop``), and while the main thread waits for an answer in
/// ``request(_:_:expecting:timeout:)`` it polls the same three itself. An event to a worker and
/// its result cross one socket each way and wake no other thread. The worker's frames are
/// carried out in the order they came, its host calls included.
///
/// The host never waits for the worker to read (issue 36): the channel writes what the socket
/// takes and keeps the rest (``ChannelOutbox``), written when the socket has room. A worker that
/// leaves more than the bound unread (bytes, or no byte taken for `stallTimeout` seconds) is
/// broken: logged (`worker.stalled`) and killed, which the host then handles as a crash.
@MainActor
final class WorkerConnection {
    /// What the main thread is given while it waits.
    enum Outcome {
        /// The answer.
        case reply(Frame)
        /// The worker died first.
        case died(WorkerDeath)
        /// The deadline passed.
        case timedOut
    }

    /// The worker's process id.
    let pid: pid_t
    let channel: FrameChannel
    let forwarder: HostCallForwarder
    private let log: Log
    private let source: String
    private let services: [String]
    private let output: FileDescriptor
    /// pidfd_open(2) of the worker: readable once it exits.
    private let process: FileDescriptor
    private var watches: [MainLoop.Watch] = []
    private var channelOpen = true
    private var outputOpen = true
    private var decoder = FrameDecoder()
    private var lines: OutputLines
    // Frames read and not yet carried out, in order: a frame carried out may lead to another
    // read (a request to this worker), which must not overtake them.
    private var inbound: [Frame] = []
    /// The request waited for (its sequence and the frame types that answer it), and its
    /// answer once it came. Plain values, not a closure: a request is on every event's path to
    /// a worker, and a capturing closure was an allocation per event.
    private var awaited: (sequence: UInt32, types: [FrameType])?
    private var answer: Frame?
    private var cause: WorkerDeath.Cause?
    private var stallCheck: DispatchWorkItem?
    // Told once the worker is reaped; set once at init.
    private let onDeath: @MainActor (WorkerConnection, WorkerDeath) -> Void

    /// The last step of loading the worker reported (PluginLoader.LoadStage), 0 before any.
    private(set) var stage: UInt8 = 0
    /// Whether the worker died.
    private(set) var death: WorkerDeath?
    /// Its cgroup, when its sandbox limits resources (removed once it is reaped).
    let cgroup: WorkerCgroup?
    /// Whether its end was asked for (expectExit) rather than a crash.
    private(set) var exitWasExpected = false

    /// Starts `executable __worker pluginPath` and watches it on the main loop. `source` names
    /// the worker's services in log lines about its output (`services` are their ids);
    /// `stallTimeout` is how long bytes may wait for the worker to read before it is broken.
    init(
        executable: String, pluginPath: String, stallTimeout: Double, log: Log, source: String, services: [String],
        sandbox: WorkerSandbox? = nil, plugin: Int32? = nil, cgroup: WorkerCgroup? = nil,
        onRefused: ((String) -> Void)? = nil,
        onDeath: @escaping @MainActor (WorkerConnection, WorkerDeath) -> Void
    ) throws(SystemError) {
        let started = try WorkerSpawn.spawn(
            executable: executable, pluginPath: pluginPath, sandbox: sandbox, plugin: plugin)
        // Into its cgroup before anything else: the worker loads no plugin before the host asks.
        if let cgroup {
            do { try cgroup.adopt(started.pid) } catch {
                Glibc.kill(started.pid, SIGKILL)
                var status: Int32 = 0
                _ = try? retryingOnInterrupt("waitpid", source) { waitpid(started.pid, &status, 0) }
                cgroup.remove()
                throw error
            }
        }
        self.cgroup = cgroup
        let opened = csystem_pidfd_open(started.pid)
        if opened < 0 {
            let error = SystemError.current("pidfd_open", pluginPath)
            Glibc.kill(started.pid, SIGKILL)
            var status: Int32 = 0
            _ = try? retryingOnInterrupt("waitpid", source) { waitpid(started.pid, &status, 0) }
            cgroup?.remove()
            throw error
        }
        pid = started.pid
        process = FileDescriptor(taking: opened)
        _ = fcntl(started.output.rawValue, F_SETFL, O_NONBLOCK)
        output = started.output
        channel = FrameChannel(
            socket: started.channel,
            bound: ChannelOutbox.Bound(bytes: ChannelOutbox.Bound.standardBytes, seconds: stallTimeout))
        forwarder = HostCallForwarder(channel: channel)
        lines = OutputLines(log: log, source: source, refused: sandbox?.audit == true ? onRefused : nil)
        self.log = log
        self.source = source
        self.services = services
        self.onDeath = onDeath
        channel.setHooks(
            FrameChannel.Hooks(
                queued: { [weak self] in MainActor.assumeIsolated { self?.bytesWait() } },
                stalled: { [weak self] stall in MainActor.assumeIsolated { self?.stalled(stall) } }))
        let loop = MainLoop.shared
        let named = "the worker of \(source)"
        watches = [
            loop.watch(channel.socket.rawValue, name: "the channel to \(named)"),
            loop.watch(output.rawValue, name: "the output of \(named)"),
            loop.watch(process.rawValue, name: named),
        ]
        // The handlers keep the connection until the worker is reaped (which cancels them), as a
        // closed connection's worker must still be reaped when it exits.
        watches[0].setHandler { MainActor.assumeIsolated { self.channelReady() } }
        watches[1].setHandler { MainActor.assumeIsolated { _ = self.readOutput() } }
        watches[2].setHandler { MainActor.assumeIsolated { _ = self.reapIfExited() } }
        do {
            for watch in watches { try watch.resume() }
        } catch {
            for watch in watches { watch.cancel() }
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = try? retryingOnInterrupt("waitpid", source) { waitpid(pid, &status, 0) }
            throw error
        }
    }

    // MARK: Requests

    /// Sends a request and waits, at most `timeout` seconds, for its answer of a type in
    /// `expecting`. Whatever else the worker sends meanwhile is carried out here, in order.
    func request(_ writer: inout WireWriter, _ type: FrameType, expecting: [FrameType], timeout: Double) -> Outcome {
        if let death { return .died(death) }
        let sequence = channel.nextSequence()
        do {
            try channel.send(&writer, type, sequence: sequence)
        } catch {
            // The worker is gone: its death comes.
            return awaitDeath(timeout: 2).map(Outcome.died) ?? .timedOut
        }
        let outer = (awaited, answer)
        awaited = (sequence, expecting)
        answer = nil
        defer { (awaited, answer) = outer }
        let deadline = Clock.monotonic() + timeout
        while true {
            if let answer { return .reply(answer) }
            if let death { return .died(death) }
            guard Clock.monotonic() < deadline else { return .timedOut }
            serve(until: deadline)
        }
    }

    /// Kills the worker (SIGKILL) and waits, at most `timeout` seconds, until it is reaped.
    func killAndWait(timeout: Double = 2) -> WorkerDeath? {
        kill(because: .killedByHost)
        return awaitDeath(timeout: timeout)
    }

    /// Says the worker will exit on purpose (its channel is closed): not a crash.
    func expectExit() { exitWasExpected = true }

    /// Closes the host's end: the worker reads end of file and exits.
    func close() {
        expectExit()
        channel.shutdown()
    }

    /// Closes the channel and waits up to `seconds` for the worker to exit, then kills it: the
    /// host's last act for a sandboxed worker, whose cgroup is removed once it is reaped.
    func end(within seconds: Double) {
        close()
        if awaitDeath(timeout: seconds) == nil { _ = killAndWait() }
    }

    private func awaitDeath(timeout: Double) -> WorkerDeath? {
        let deadline = Clock.monotonic() + timeout
        while death == nil && Clock.monotonic() < deadline { serve(until: deadline) }
        return death
    }

    /// Waits at most until `deadline` (monotonic seconds) for the channel, the output or the
    /// process, and handles what is ready: the main thread's wait within a request.
    private func serve(until deadline: Double) {
        let left = channel.flush()
        let seconds = min(max(0, deadline - Clock.monotonic()), left ?? .infinity)
        // Rounded up, so a wait never ends just before its deadline; at most a minute at a time.
        let milliseconds = Int32(min(60_000, (seconds * 1000).rounded(.up)))
        // On the stack: this wait runs for every event to a worker.
        let ready = withUnsafeTemporaryAllocation(of: pollfd.self, capacity: 3) { fds in
            fds[0] = pollfd(
                fd: channelOpen ? channel.socket.rawValue : -1,
                events: Int16(POLLIN) | (left != nil ? Int16(POLLOUT) : 0), revents: 0)
            fds[1] = pollfd(fd: outputOpen ? output.rawValue : -1, events: Int16(POLLIN), revents: 0)
            fds[2] = pollfd(fd: process.rawValue, events: Int16(POLLIN), revents: 0)
            let count =
                (try? retryingOnInterrupt("poll", "worker channel") { poll(fds.baseAddress, 3, milliseconds) }) ?? 0
            return count > 0 ? (fds[0].revents, fds[1].revents, fds[2].revents) : nil
        }
        guard let ready else { return }
        if ready.0 & ~Int16(POLLOUT) != 0 { readChannel() }
        if ready.1 != 0 { readOutput() }
        if ready.2 != 0 { _ = reapIfExited() }
    }

    // MARK: The channel

    /// The main loop's handler: room for waiting bytes, or bytes to read.
    private func channelReady() {
        if channel.flush() == nil { watches[0].setWritable(false) }
        readChannel()
    }

    /// Reads what is there, without waiting, and carries out the frames. Returns whether it
    /// read bytes.
    @discardableResult
    private func readChannel() -> Bool {
        guard channelOpen else { return false }
        let buffer = Self.buffer
        let n = recv(channel.socket.rawValue, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return false }
        guard n > 0 else {
            channelClosed()
            return false
        }
        decoder.append(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
        do {
            while let frame = try decoder.next() { inbound.append(frame) }
        } catch {
            brokeProtocol(error)
        }
        handleInbound()
        return true
    }

    // Every connection's reads, on the main thread; emptied into the decoder before any frame is
    // carried out (which may read again).
    private static let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)

    /// Carries out the frames read, in order. A frame carried out may lead to a request to this
    /// worker, whose wait reads and carries out the next frames, from the same queue, in turn.
    private func handleInbound() {
        while !inbound.isEmpty, death == nil {
            let frame = inbound.removeFirst()
            do { try dispatch(frame) } catch { brokeProtocol(error) }
        }
    }

    private func dispatch(_ frame: Frame) throws(WireError) {
        switch frame.type {
        case .hello:
            var r = frame.reader
            let version = try r.u16("version")
            guard version == Wire.version else { throw WireError(.badVersion(version)) }
        case .stage:
            var r = frame.reader
            stage = try r.u8("stage")
        case .opened, .openFailed, .attached, .result:
            // Else the late answer to a request that timed out.
            if answer == nil, let awaited, frame.sequence == awaited.sequence, awaited.types.contains(frame.type) {
                answer = frame
            }
        case .call:
            try forwarder.answer(frame)
        case .complete, .log, .post, .subscribe, .registerForRemoteNotifications, .request, .reportHealth, .deploy:
            try forwarder.perform(frame)
        case .open, .attach, .event, .reply, .requestReply, .taskExpired:
            throw .malformed("a worker sent a \(frame.type) frame, which only the host sends")
        }
    }

    /// End of file: the worker is exiting, or closed its channel and lives on (then it is
    /// killed after a second).
    private func channelClosed() {
        guard channelOpen else { return }
        channelOpen = false
        watches[0].cancel()
        DispatchQueue.main.asyncAfter(deadline: .now() + 1) { [weak self] in
            MainActor.assumeIsolated {
                guard let self, self.death == nil else { return }
                if self.cause == nil && !self.exitWasExpected { self.cause = .closedChannel }
                Glibc.kill(self.pid, SIGKILL)
            }
        }
    }

    /// Bytes began to wait for the worker: room in the socket is watched for, and the time
    /// bound is checked when it runs out.
    private func bytesWait() {
        guard death == nil else { return }
        watches[0].setWritable(true)
        scheduleStallCheck(after: channel.bound?.seconds ?? 1)
    }

    private func scheduleStallCheck(after seconds: Double) {
        stallCheck?.cancel()
        let check = DispatchWorkItem { [weak self] in
            MainActor.assumeIsolated {
                guard let self, self.death == nil, let left = self.channel.flush() else { return }
                self.scheduleStallCheck(after: left)
            }
        }
        stallCheck = check
        DispatchQueue.main.asyncAfter(deadline: .now() + seconds + 0.001, execute: check)
    }

    /// The channel says the worker crossed the bound: it is logged, and killed; the host
    /// handles its death as a crash.
    private func stalled(_ stall: ChannelOutbox.Stall) {
        log.write(
            .error, "host", "the worker (pid \(pid)) of \(source) \(stall); killing it", event: .workerStalled,
            fields: [
                .strings("services", services), .int("pid", pid), .string("bound", stall.bound),
                .int("bytes", stall.bytes), .string("seconds", Seconds.text(stall.seconds)),
            ])
        kill(because: .stalled(stall.description))
    }

    // MARK: Output and death

    /// Reads what the worker printed, without waiting; returns whether it read bytes.
    @discardableResult
    private func readOutput() -> Bool {
        guard outputOpen else { return false }
        // The shared buffer: the lines are fed before anything can read again.
        let buffer = Self.buffer
        let n = Glibc.read(output.rawValue, buffer.baseAddress, buffer.count)
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return false }
        guard n > 0 else {
            outputOpen = false
            watches[1].cancel()
            return false
        }
        lines.feed(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
        return true
    }

    /// Reaps the worker if it exited: what it still sent and printed is handled first.
    private func reapIfExited() -> Bool {
        guard death == nil else { return true }
        var raw: Int32 = 0
        let result = try? retryingOnInterrupt("waitpid", source) { waitpid(pid, &raw, WNOHANG) }
        guard result == pid else { return false }
        // Its last frames (a log line, a completion) and its last output, without waiting for
        // a descendant that holds them open.
        while readChannel() {}
        while readOutput() {}
        lines.flush()
        for watch in watches { watch.cancel() }
        channelOpen = false
        outputOpen = false
        stallCheck?.cancel()
        var death = WorkerDeath(exit: WorkerExit(waitStatus: raw), cause: cause)
        if let cgroup {
            if cgroup.oomKills() > 0 { death.memoryMax = cgroup.sandbox.memoryMax }
            cgroup.remove()
        }
        self.death = death
        onDeath(self, death)
        return true
    }

    private func brokeProtocol(_ error: WireError) {
        kill(because: .protocolError(error.description))
    }

    private func kill(because cause: WorkerDeath.Cause) {
        if self.cause == nil { self.cause = cause }
        Glibc.kill(pid, SIGKILL)
    }
}
