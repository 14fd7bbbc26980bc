import Dispatch
import ServiceABI
import ServiceJSON

/// The events that need answers (pushes): hands each receiver a completion that enforces
/// "exactly once", keeps the answers pending until every receiver answered or the deadline
/// passed, and merges them (fetch results, presentation options).
///
/// The main thread never blocks while waiting: answers arrive from any thread and are
/// gathered on the main queue; the deadline runs on the injectable ``HostClock``.
@MainActor
final class AnswerBook {
    private let dispatcher: Dispatcher
    private let log: Log
    private let clock: HostClock
    /// How long the host waits for a completion.
    var timeout: Double = 30
    private var nextID: UInt64 = 0
    /// Events waiting for completions, by answer id.
    private var pending: [UInt64: PendingAnswer] = [:]
    /// The lowest answer id that may still be pending. Deadlines follow ids (each is its
    /// start plus the timeout), so the oldest pending answer has the next deadline.
    private var oldest: UInt64 = 1
    /// The one timer, set for the oldest pending answer's deadline. Rationale: a timer per
    /// event would hold its memory until its deadline even after every answer came in, so
    /// a burst of pushes would cost memory for --fetch-timeout seconds.
    private var timer: ScheduledWork?

    init(dispatcher: Dispatcher, log: Log, clock: HostClock) {
        self.dispatcher = dispatcher
        self.log = log
        self.clock = clock
    }

    /// How many events still wait for answers.
    var pendingCount: Int { pending.count }

    /// Delivers `kind` with a completion to every service that handles it, then calls
    /// `completion` on the main thread with who received it, each service's answer
    /// ("timeout" for a missed deadline) and `merge` of the answers. `arena` (the event's
    /// data) lives until the answers are in: services may read the data until they complete.
    func gather(
        _ kind: EventKind, data: UnsafeRawPointer, arena: EventArena,
        merge: @escaping ([(service: String, result: Int32?)]) -> JSONValue?,
        completion: @escaping (EventOutcome) -> Void
    ) {
        let indexes = dispatcher.handlers(kind)
        guard !indexes.isEmpty else {
            return completion(EventOutcome(event: kind, handled: false, note: "no service handles \(kind.name)"))
        }
        let receivers = indexes.map { dispatcher.services[$0].id }
        ask(kind, data: data, to: indexes) { answer in
            withExtendedLifetime(arena) {}
            var outcome = EventOutcome(event: kind, handled: true)
            outcome.receivers = receivers
            for (service, result) in answer.answers {
                outcome.answers[service] = result.map { ResultCode.answerName($0, for: kind) } ?? "timeout"
            }
            outcome.merged = merge(answer.answers)
            completion(outcome)
        }
    }

    /// Delivers `kind` with a completion to the one service at `index` (a request's answerer)
    /// and calls `completion` on the main thread with its result and JSON answer, or nil for
    /// both when it missed the deadline. `arena` lives until then.
    func askOne(
        _ kind: EventKind, data: UnsafeRawPointer, arena: EventArena, to index: Int,
        completion: @escaping (_ result: Int32?, _ json: [UInt8]?) -> Void
    ) {
        ask(kind, data: data, to: [index]) { answer in
            withExtendedLifetime(arena) {}
            let first = answer.answers.first
            completion(first?.result, first.flatMap { answer.json[$0.service] })
        }
    }

    /// Delivers `kind`, which carries no data (a health check), with a completion to the one
    /// service at `index`; `completion` as ``askOne(_:data:arena:to:completion:)``'s.
    func askOne(
        _ kind: EventKind, to index: Int, completion: @escaping (_ result: Int32?, _ json: [UInt8]?) -> Void
    ) {
        ask(kind, data: nil, to: [index]) { answer in
            let first = answer.answers.first
            completion(first?.result, first.flatMap { answer.json[$0.service] })
        }
    }

    /// Delivers `kind` with a completion to each service in `indexes` and calls `finish` once
    /// every one completed or the deadline passed.
    private func ask(
        _ kind: EventKind, data: UnsafeRawPointer?, to indexes: [Int],
        finish: @escaping (PendingAnswer) -> Void
    ) {
        nextID &+= 1
        let trace = dispatcher.trace
        let pending = PendingAnswer(id: nextID, event: kind) { [weak self] answer in
            self?.pending[answer.id] = nil
            finish(answer)
        }
        var failed: [String] = []
        for index in indexes {
            // The call about to be made takes the next sequence number: its trace lines share it.
            let record = CompletionRecord(
                answerID: pending.id, serviceID: dispatcher.services[index].id, event: kind,
                seq: dispatcher.sequence &+ 1, log: log
            ) { [weak self] record, result, json in
                trace?.recordCompletion(seq: record.seq, event: record.event, service: record.serviceID, result: result)
                DispatchQueue.main.async {
                    MainActor.assumeIsolated {
                        self?.pending[record.answerID]?.answer(record.serviceID, result, json: json)
                    }
                }
            }
            pending.add(record)
            // A negative result says the service will not complete: it counts as failed.
            if dispatcher.call(index, kind, data, completion: UnsafePointer(record.table)).result < 0, record.expire() {
                failed.append(record.serviceID)
            }
        }
        self.pending[pending.id] = pending
        for service in failed { pending.answer(service, Int32(SH_ERROR)) }
        pending.start(timeout: timeout, now: clock.now)
        armDeadline()
    }

    // MARK: Deadlines

    /// The oldest answer still pending (skipping the finished ones below it, once each).
    private func oldestPending() -> PendingAnswer? {
        while oldest <= nextID {
            if let answer = pending[oldest] { return answer }
            oldest += 1
        }
        return nil
    }

    private func armDeadline() {
        guard timer == nil, let next = oldestPending() else { return }
        timer = clock.schedule(after: max(0, next.deadline - clock.now)) { [weak self] in self?.deadlinePassed() }
    }

    private func deadlinePassed() {
        timer = nil
        let trace = dispatcher.trace
        while let next = oldestPending(), next.deadline <= clock.now {
            next.expire { [log] record in
                log.error(
                    record.serviceID,
                    "did not complete \(record.event.name) within \(Seconds.text(next.timeout)) s;"
                        + " its answer counts as failed", event: .completionTimeout,
                    .string("event", record.event.name),
                    .string("deadline", Seconds.text(next.timeout)))
                trace?.recordCompletion(seq: record.seq, event: record.event, service: record.serviceID, result: nil)
            }
            // Answers given in time but still on their way to the main queue finish it when
            // they land; it needs no deadline any more.
            if !next.finished { oldest = next.id + 1 }
        }
        armDeadline()
    }

    // MARK: Merging

    /// Background fetch answers: newData > noData > failed; a missing or invalid answer
    /// counts as failed.
    static func mergeFetch(_ answers: [(service: String, result: Int32?)]) -> JSONValue? {
        let merged =
            answers.map { answer in answer.result.flatMap { FetchResult(rawValue: $0) } ?? .failed }.min() ?? .noData
        return .string(merged.name)
    }

    /// Presentation options: the union of every answer, within what the notification
    /// authorization `allowed`.
    static func mergePresentation(
        _ answers: [(service: String, result: Int32?)],
        allowed: PresentationOptions = .all
    ) -> JSONValue? {
        let union = answers.reduce(into: PresentationOptions()) { options, answer in
            if let result = answer.result { options.formUnion(PresentationOptions(result)) }
        }
        return .array(union.intersection(allowed).names.map(JSONValue.string))
    }
}
