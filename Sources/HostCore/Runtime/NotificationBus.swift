import Synchronization

/// Service-to-service notifications waiting for the main thread.
///
/// `post` is thread-safe and copies everything; delivery happens on the main thread after
/// the event being handled now, never re-entrantly.
final class NotificationBus: Sendable {
    struct Pending: Sendable {
        let name: String
        let sender: String
        let senderIndex: Int
        let json: [UInt8]?
    }

    private let queue = Mutex<[Pending]>([])
    // Asks the main thread to drain; set once at init.
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    func post(_ notification: Pending) {
        let wasEmpty = queue.withLock { pending in
            pending.append(notification)
            return pending.count == 1
        }
        if wasEmpty { wake() }
    }

    /// Everything posted so far, oldest first; the queue is left empty.
    func takeAll() -> [Pending] { queue.withLock { pending in defer { pending = [] }; return pending } }
}
