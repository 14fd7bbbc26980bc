import Dispatch
import Synchronization

/// A worker's host calls that wait for the host's reply, from any thread of the plugin.
final class PendingCalls: Sendable {
    // Written by the reader thread before it signals, read by the caller after it waits:
    // the semaphore orders the two, so the payload is never touched by both at once.
    private final class Slot: @unchecked Sendable {
        let arrived = DispatchSemaphore(value: 0)
        var payload: [UInt8] = []
    }

    private let channel: FrameChannel
    private let slots = Locked<[UInt32: Slot]>([:])

    init(channel: FrameChannel) { self.channel = channel }

    /// Sends a `call` frame and waits for its reply; nil when the host is gone (the worker
    /// exits as soon as its reader sees that).
    func call(_ writer: inout WireWriter) -> WireReader? {
        let sequence = channel.nextSequence()
        let slot = Slot()
        slots.withLock { $0[sequence] = slot }
        do {
            try channel.send(&writer, .call, sequence: sequence)
        } catch {
            slots.withLock { _ = $0.removeValue(forKey: sequence) }
            return nil
        }
        slot.arrived.wait()
        return WireReader(slot.payload)
    }

    /// A reply from the host (on the reader thread); false when no call waits for it.
    func deliver(_ frame: Frame) -> Bool {
        guard let slot = slots.withLock({ $0.removeValue(forKey: frame.sequence) }) else { return false }
        slot.payload = frame.payload
        slot.arrived.signal()
        return true
    }
}
