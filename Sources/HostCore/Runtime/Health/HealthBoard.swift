import ServiceJSON

/// What the host knows of each service's health (issue 42 item 1): the last answer to
/// `healthCheck`, how many unhealthy answers came in a row, how often it was restarted for it,
/// and the timer of the next check. Read by `ctl list` and `/metrics`; kept across a restart
/// of the service (its record follows its id).
@MainActor
final class HealthBoard {
    /// One service's health.
    struct Record {
        /// The last answer; nil until the first check completed.
        var status: HealthStatus?
        /// Why, as the service said (or the host: "no answer within 5 s").
        var reason: String?
        /// Checks completed (answered or timed out).
        var checks = 0
        /// Unhealthy answers in a row.
        var unhealthyRun = 0
        /// Restarts `onUnhealthy: restart` made.
        var restarts = 0
        /// When the last check completed, ISO 8601 UTC.
        var checkedAt: String?
        /// A check was sent and is not answered yet.
        var pending = false
        /// The next check, while one is scheduled.
        var timer: ScheduledWork?
    }

    private(set) var records: [String: Record] = [:]
    /// One answer book per deadline: a book's deadlines must follow its ids (AnswerBook).
    private var books: [Double: AnswerBook] = [:]

    subscript(id: String) -> Record? {
        get { records[id] }
        set { records[id] = newValue }
    }

    /// The book whose deadline is `timeout`, made on first use.
    func book(timeout: Double, make: () -> AnswerBook) -> AnswerBook {
        if let book = books[timeout] { return book }
        let book = make()
        book.timeout = timeout
        books[timeout] = book
        return book
    }

    /// Cancels every scheduled check (termination).
    func stopAll() {
        for id in records.keys {
            records[id]?.timer?.cancel()
            records[id]?.timer = nil
        }
    }

    /// The `health` member of service `id` in `ctl list`, or nil when it was never checked.
    func json(for id: String) -> JSONValue? {
        guard let record = records[id] else { return nil }
        var object: [String: JSONValue] = [
            "status": .string(record.status?.name ?? "unknown"),
            "checks": .number(Double(record.checks)),
            "unhealthyChecks": .number(Double(record.unhealthyRun)),
            "restarts": .number(Double(record.restarts)),
        ]
        if let reason = record.reason { object["reason"] = .string(reason) }
        if let checkedAt = record.checkedAt { object["checkedAt"] = .string(checkedAt) }
        return .object(object)
    }
}
