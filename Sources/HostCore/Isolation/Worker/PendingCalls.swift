/// A worker's host calls that wait for the host's reply, from any thread of the plugin.
final class PendingCalls: Sendable {
    private let channel: FrameChannel
    private let inbound: WorkerInbound

    init(channel: FrameChannel, inbound: WorkerInbound) {
        self.channel = channel
        self.inbound = inbound
    }

    /// Sends a `call` frame and waits for its reply, reading the channel meanwhile when no other
    /// thread does (WorkerInbound); nil when the host is gone (the worker exits as soon as a read
    /// sees that).
    func call(_ writer: inout WireWriter) -> WireReader? {
        let sequence = channel.nextSequence()
        let slot = inbound.expect(sequence)
        do {
            try channel.send(&writer, .call, sequence: sequence)
        } catch {
            inbound.forget(sequence)
            return nil
        }
        return WireReader(inbound.wait(for: slot))
    }
}
