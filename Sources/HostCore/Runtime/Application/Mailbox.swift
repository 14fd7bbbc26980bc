import Synchronization

/// Requests from services' other threads, waiting for the main thread: posted notifications,
/// device-token requests and requests between services.
///
/// `send` is thread-safe and the messages hold copies; they are handled on the main thread
/// after the event being handled now, never re-entrantly, in the order sent.
final class Mailbox: Sendable {
    enum Message: Sendable {
        /// A notification posted through `sh_host.post` (or by the host for `ctl post`).
        case post(name: String, sender: String, json: [UInt8]?)
        /// A service asked for the device token.
        case tokenRequest(service: String)
        /// A service's authorization request changed the status: save it and announce it.
        case authorizationChanged
        /// A request for the service that answers its name (`sh_host.request`, `ctl request`).
        case request(ServiceRequest)
    }

    private let queue = Locked<[Message]>([])
    // Asks the main thread to drain; set once at init.
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    func send(_ message: Message) {
        let wasEmpty = queue.withLock { pending in
            pending.append(message)
            return pending.count == 1
        }
        if wasEmpty { wake() }
    }

    /// Everything sent so far, oldest first; the mailbox is left empty.
    func takeAll() -> [Message] {
        queue.withLock { pending in
            defer { pending = [] }
            return pending
        }
    }
}
