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
        /// A service reported its health (the health extension): SH_HEALTH_*, and why.
        case health(service: String, status: Int32, reason: String?)
    }

    private struct State {
        var pending: [Message] = []
        /// Asks the main thread to drain; set once by the owner (``wake(_:)``).
        var wake: (@Sendable () -> Void)?
    }

    private let state = Locked(State())

    /// Has `wake` called when a message arrives in an empty mailbox. The owner calls it once, in
    /// its own init (the closure names the owner), before any service can send.
    func wake(_ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.wake = wake }
    }

    func send(_ message: Message) {
        let wake = state.withLock { state in
            state.pending.append(message)
            return state.pending.count == 1 ? state.wake : nil
        }
        wake?()
    }

    /// Everything sent so far, oldest first; the mailbox is left empty.
    func takeAll() -> [Message] {
        state.withLock { state in
            defer { state.pending = [] }
            return state.pending
        }
    }
}
