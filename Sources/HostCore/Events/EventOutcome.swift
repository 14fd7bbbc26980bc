import ServiceJSON

/// What delivering one request's event did: who received it, who claimed it, the merged
/// answer. The control channel turns it into its reply.
public struct EventOutcome: Sendable {
    /// The event delivered, if any.
    public var event: EventKind?
    /// Services that received it, in delivery order.
    public var receivers: [String] = []
    /// The service that claimed it (openURL, continueUserActivity).
    public var handledBy: String?
    /// Each service's answer, for events with completions: "newData", "timeout", …
    public var answers: [String: String] = [:]
    /// The merged answer: the fetch result, the presentation options.
    public var merged: JSONValue?
    /// Whether a service handled it; false gives `host ctl` exit status 3.
    public var handled: Bool
    /// A note for the user when nothing handled it, or why nothing was delivered.
    public var note: String?

    /// An outcome for `event`.
    public init(event: EventKind?, handled: Bool, note: String? = nil) {
        self.event = event
        self.handled = handled
        self.note = note
    }
}
