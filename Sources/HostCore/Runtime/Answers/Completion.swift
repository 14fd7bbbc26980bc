import ServiceABI

/// One service's `sh_completion` for one event, enforcing "exactly once".
///
/// Its `sh_completion` lives in the ``CompletionPool``: the record itself is freed once the
/// answer is in or the deadline passed, and a late or second call is still detected there.
final class CompletionRecord: CompletionTarget {
    let answerID: UInt64
    let serviceID: String
    let event: EventKind
    /// The sequence number of the call that handed the completion out, for the trace.
    let seq: UInt64
    /// Told of the one answer that counts, on the thread that gave it.
    private let onAnswer: @Sendable (CompletionRecord, Int32, [UInt8]?) -> Void
    /// The pool slot holding this record's `sh_completion`.
    private let slot: CompletionPool.Handle
    // The slot's C struct, valid for the process lifetime (the pool never frees it); C calls
    // it, Swift only hands it out.
    nonisolated(unsafe) let table: UnsafePointer<sh_completion>

    init(
        answerID: UInt64, serviceID: String, event: EventKind, seq: UInt64, log: Log,
        pool: CompletionPool = .shared,
        answered: @escaping @Sendable (CompletionRecord, Int32, [UInt8]?) -> Void
    ) {
        self.answerID = answerID
        self.serviceID = serviceID
        self.event = event
        self.seq = seq
        onAnswer = answered
        (slot, table) = pool.acquire(serviceID: serviceID, event: event, log: log)
        pool.attach(self, to: slot)
    }

    func answered(_ result: Int32, _ json: [UInt8]?) { onAnswer(self, result, json) }

    /// Marks the record timed out unless it was answered; true when it timed out now.
    func expire() -> Bool { slot.pool.expire(slot) }
}

/// The answers to one event delivered to several services, gathered on the main thread
/// until every service completed or the deadline passed (``AnswerBook`` keeps the one timer).
@MainActor
final class PendingAnswer {
    let id: UInt64
    let event: EventKind
    private(set) var records: [CompletionRecord] = []
    /// service id → result, in the order answers arrived; nil for a service that timed out.
    private(set) var answers: [(service: String, result: Int32?)] = []
    /// service id → the JSON its answer carried (a request's reply); most answers carry none.
    private(set) var json: [String: [UInt8]] = [:]
    private let finish: (PendingAnswer) -> Void
    private(set) var finished = false
    /// When the answers still missing count as failed, on the book's clock.
    private(set) var deadline = Double.infinity
    /// The timeout the deadline came from, for the log.
    private(set) var timeout = 0.0

    init(id: UInt64, event: EventKind, finish: @escaping (PendingAnswer) -> Void) {
        self.id = id
        self.event = event
        self.finish = finish
    }

    func add(_ record: CompletionRecord) { records.append(record) }

    /// Sets the deadline; finishes at once when every service already answered.
    func start(timeout: Double, now: Double) {
        self.timeout = timeout
        deadline = now + timeout
        finishIfComplete()
    }

    /// The deadline passed: every service that has not answered times out (`expired` is told
    /// of each), and the answer finishes.
    func expire(_ expired: (CompletionRecord) -> Void) {
        guard !finished else { return }
        for record in records where record.expire() {
            expired(record)
            answers.append((record.serviceID, nil))
        }
        finishIfComplete()
    }

    func answer(_ service: String, _ result: Int32, json: [UInt8]? = nil) {
        guard !finished else { return }
        answers.append((service, result))
        if let json { self.json[service] = json }
        finishIfComplete()
    }

    private func finishIfComplete() {
        guard !finished, answers.count == records.count else { return }
        finished = true
        finish(self)
    }
}
