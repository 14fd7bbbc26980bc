import ServiceABI
import Synchronization

/// A completion as a service in a worker holds it: every call goes to the host as a
/// `complete` frame, where the host's own CompletionRecord keeps "exactly once" and the
/// deadline, and logs a second or late call, as it does in-process.
///
/// Never freed, like the host's: a service may call late or twice, from any thread.
final class WorkerCompletion: Sendable {
    let id: UInt32
    private let channel: FrameChannel
    private let called = Atomic<Bool>(false)
    // Told once, at the first call (the worker then frees the event's data).
    private let firstCall: @Sendable () -> Void
    // Written once in init; C reads it, Swift only hands it out.
    nonisolated(unsafe) let table: UnsafeMutablePointer<sh_completion>

    init(id: UInt32, channel: FrameChannel, firstCall: @escaping @Sendable () -> Void) {
        self.id = id
        self.channel = channel
        self.firstCall = firstCall
        table = .allocate(capacity: 1)
        table.initialize(to: sh_completion(
            size: UInt32(MemoryLayout<sh_completion>.size), version: SH_COMPLETION_VERSION, host_data: nil,
            complete: { completion, result, json, length in
                guard let data = completion?.pointee.host_data else { return }
                Unmanaged<WorkerCompletion>.fromOpaque(data).takeUnretainedValue().complete(result, json, length)
            }))
        table.pointee.host_data = Unmanaged.passRetained(self).toOpaque()
    }

    private func complete(_ result: Int32, _ json: UnsafePointer<CChar>?, _ length: Int) {
        var w = WireWriter()
        w.u32(id)
        w.i32(result)
        w.bool(json != nil)
        if json != nil { w.blob(json, count: length) }
        try? channel.send(&w, .complete)
        if !called.exchange(true, ordering: .acquiringAndReleasing) { firstCall() }
    }
}
