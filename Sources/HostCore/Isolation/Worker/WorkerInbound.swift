import Dispatch
import Glibc
import Synchronization

/// What a worker reads from its channel, with no reader thread (issue 37): the worker's main
/// thread reads it from its loop (``MainLoop``) and carries out the host's requests there, so an
/// event crosses one socket and wakes one thread. A plugin thread waiting for the reply to its
/// host call reads the channel itself while nobody else does (the main thread may be busy in the
/// plugin): one reader at a time, the leader, and whatever it reads goes where it belongs —
/// replies to their callers, requests to the main thread in order.
final class WorkerInbound: Sendable {
    // The decoder and the read buffer: only the leader touches them (`leading` is taken with
    // acquiring ordering and given up with releasing ordering around every use).
    private final class Reading: @unchecked Sendable {
        var decoder = FrameDecoder()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
    }

    /// A call waiting for its reply: the leader that reads the reply stores it and signals; the
    /// caller reads it after its wait succeeded (the semaphore orders the two).
    final class Slot: @unchecked Sendable {
        fileprivate let arrived = DispatchSemaphore(value: 0)
        fileprivate var payload: [UInt8] = []
    }

    private let channel: FrameChannel
    private let leading = Atomic<Bool>(false)
    private let reading = Reading()
    private let slots = Locked<[UInt32: Slot]>([:])
    // Frames for the main thread (open, attach, event, requestReply), in the order they came.
    private let inbox = Locked<[Frame]>([])
    // What carries out a frame on the main thread (WorkerMain's), set once before the loop runs.
    // Not in a Locked: a closure read back from the generic storage at every frame went through
    // reabstraction thunks that, in a release build, spun for ever (servicehost-bench row 5).
    @MainActor private static var handler: ((Frame) -> Void)?

    init(channel: FrameChannel) { self.channel = channel }

    /// Sets what carries out the host's frames on the main thread (a worker runs one session).
    @MainActor
    func setHandler(_ handler: @escaping (Frame) -> Void) { Self.handler = handler }

    /// The main loop's handler: reads what is there (without waiting) and carries out what
    /// came for the main thread. Main thread.
    @MainActor
    func serve() {
        if lead() {
            read(waitingMilliseconds: 0)
            leading.store(false, ordering: .releasing)
        }
        drain()
    }

    /// Carries out, in order, the frames read for the main thread. Not re-entered: a host call
    /// the plugin makes meanwhile may add to the inbox, which this loop then reaches.
    @MainActor
    func drain() {
        guard !Self.draining, let handler = Self.handler else { return }
        Self.draining = true
        defer { Self.draining = false }
        while let frame = inbox.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { handler(frame) }
    }

    @MainActor private static var draining = false

    // MARK: Calls (any thread)

    /// A slot for the reply to call `sequence`, made before the call is sent.
    func expect(_ sequence: UInt32) -> Slot {
        let slot = Slot()
        slots.withLock { $0[sequence] = slot }
        return slot
    }

    /// Gives up waiting for call `sequence` (it could not be sent).
    func forget(_ sequence: UInt32) { slots.withLock { _ = $0.removeValue(forKey: sequence) } }

    /// Waits for `slot`'s reply, reading the channel meanwhile whenever no other thread does.
    /// Requests read on the way go to the main thread.
    func wait(for slot: Slot) -> [UInt8] {
        while slot.arrived.wait(timeout: .now()) != .success {
            guard lead() else {
                // Another thread reads, and hands the reply over; look again shortly in case it
                // stops reading before the reply comes.
                if slot.arrived.wait(timeout: .now() + .milliseconds(1)) == .success { break }
                continue
            }
            let queued = read(waitingMilliseconds: 100)
            leading.store(false, ordering: .releasing)
            if queued {
                // The main thread may be idle in its loop, which no longer sees these bytes.
                DispatchQueue.main.async { MainActor.assumeIsolated { self.drain() } }
            }
        }
        return slot.payload
    }

    private func lead() -> Bool {
        leading.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    /// One read (leader only), after waiting at most `waitingMilliseconds` for bytes: replies go
    /// to their callers, the rest to the inbox. Returns whether the inbox got frames. End of
    /// file means the host is gone or done: the worker exits at once.
    @discardableResult
    private func read(waitingMilliseconds: Int32) -> Bool {
        var ready = pollfd(fd: channel.socket.rawValue, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, waitingMilliseconds) > 0 else { return false }
        // Not blocking: the previous leader may have read the bytes poll saw.
        let n = recv(channel.socket.rawValue, reading.buffer.baseAddress, reading.buffer.count, Int32(MSG_DONTWAIT))
        if n == 0 { _exit(0) }
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return false }
            WorkerMain.fail(
                "reading the channel: \(SystemError.current("recv", "worker channel"))",
                status: WorkerMain.lostChannelStatus)
        }
        reading.decoder.append(UnsafeRawBufferPointer(rebasing: reading.buffer[..<n]))
        var queued = false
        do {
            while let frame = try reading.decoder.next() {
                if frame.type == .reply {
                    guard let slot = slots.withLock({ $0.removeValue(forKey: frame.sequence) }) else {
                        WorkerMain.fail("a reply to no call (\(frame.sequence))")
                    }
                    slot.payload = frame.payload
                    slot.arrived.signal()
                } else {
                    inbox.withLock { $0.append(frame) }
                    queued = true
                }
            }
        } catch {
            WorkerMain.fail("the host's frames: \(error)")
        }
        return queued
    }
}
