/// When the client connects again after a session ended: 0.5 s doubling to 30 s, each wait a
/// random 50–100% of that, for as long as sessions fail before doing useful work.
///
/// A session did useful work when the broker accepted it (CONNACK 0) and then either it
/// acknowledged at least one message (a PUBACK went out: the broker's queue for this host moved
/// on, so the next session starts further along), or it stayed connected for
/// ``stableAfter`` seconds. Only such a session resets the backoff: a broker that accepts and
/// then drops the connection at once, for whatever reason (a message it redelivers first that
/// ends every session, an ACL disconnect), is retried at the backoff's pace, never in a loop.
///
/// The times are the caller's (its monotonic clock), so tests drive it with their own.
struct ReconnectBackoff: Equatable {
    /// Seconds a session must stay connected to count as useful without acknowledging anything.
    static let stableAfter: Double = 30
    /// The longest wait, in seconds.
    static let ceiling: Double = 30

    /// Sessions (and attempts to connect) in a row that did no useful work.
    private(set) var failures = 0

    /// Whether a session did useful work: accepted at `acceptedAt` (nil: the broker never
    /// accepted it), ended at `endedAt`, having sent `acknowledged` PUBACKs.
    static func isUseful(acceptedAt: Double?, endedAt: Double, acknowledged: Int) -> Bool {
        guard let acceptedAt else { return false }
        return acknowledged > 0 || endedAt - acceptedAt >= stableAfter
    }

    /// Records how a session (or an attempt to connect) ended.
    mutating func ended(useful: Bool) { failures = useful ? 0 : failures + 1 }

    /// The wait before the next attempt, for `unit`, a random number in 0.5...1: 0.5 s after a
    /// useful session, doubling with each failure in a row up to ``ceiling``.
    func delay(unit: Double) -> Double {
        min(0.5 * Double(1 << min(failures, 6)), Self.ceiling) * min(max(unit, 0.5), 1)
    }
}
