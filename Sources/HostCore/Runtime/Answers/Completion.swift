import Dispatch
import Glibc
import ServiceABI
import Synchronization

/// One service's `sh_completion` for one event, enforcing "exactly once".
///
/// Never freed: a service may call `complete` late or twice, from any thread, and the
/// pointer it holds must stay valid for that call to be detected and ignored. The cost is
/// about 100 bytes per service per event that needs an answer (pushes, not lifecycle).
final class CompletionRecord: Sendable {
    enum State: UInt8 { case waiting = 0, answered = 1, timedOut = 2 }

    let answerID: UInt64
    let serviceID: String
    let event: EventKind
    /// The sequence number of the call that handed the completion out, for the trace.
    let seq: UInt64
    // Written once in init; C reads it, Swift only hands it out.
    nonisolated(unsafe) let table: UnsafeMutablePointer<sh_completion>
    private let state = Atomic<UInt8>(State.waiting.rawValue)
    private let log: Log
    private let answered: @Sendable (CompletionRecord, Int32, [UInt8]?) -> Void

    init(answerID: UInt64, serviceID: String, event: EventKind, seq: UInt64, log: Log,
         answered: @escaping @Sendable (CompletionRecord, Int32, [UInt8]?) -> Void) {
        self.answerID = answerID
        self.serviceID = serviceID
        self.event = event
        self.seq = seq
        self.log = log
        self.answered = answered
        table = .allocate(capacity: 1)
        table.initialize(to: sh_completion(
            size: UInt32(MemoryLayout<sh_completion>.size), version: SH_COMPLETION_VERSION,
            host_data: nil,
            complete: { completion, result, json, length in
                guard let data = completion?.pointee.host_data else { return }
                let record = Unmanaged<CompletionRecord>.fromOpaque(data).takeUnretainedValue()
                record.complete(result, json.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) })
            }))
        table.pointee.host_data = Unmanaged.passRetained(self).toOpaque()
    }

    /// `sh_completion.complete`, on any thread.
    private func complete(_ result: Int32, _ json: [UInt8]?) {
        let (exchanged, original) = state.compareExchange(
            expected: State.waiting.rawValue, desired: State.answered.rawValue, ordering: .acquiringAndReleasing)
        if exchanged { return answered(self, result, json) }
        if original == State.answered.rawValue {
            log.warn(serviceID, "completed \(event.name) a second time; the second call is ignored",
                     event: "completion.twice", .string("event", event.name))
        } else {
            log.warn(serviceID, "completed \(event.name) after its deadline; the late answer is ignored",
                     event: "completion.late", .string("event", event.name))
        }
    }

    /// Marks the record timed out unless it was answered; true when it timed out now.
    func expire() -> Bool {
        state.compareExchange(expected: State.waiting.rawValue, desired: State.timedOut.rawValue,
                              ordering: .acquiringAndReleasing).exchanged
    }
}

/// The answers to one event delivered to several services, gathered on the main thread
/// until every service completed or the deadline passed.
@MainActor
final class PendingAnswer {
    let id: UInt64
    let event: EventKind
    private(set) var records: [CompletionRecord] = []
    /// service id → result, in the order answers arrived; nil for a service that timed out.
    private(set) var answers: [(service: String, result: Int32?)] = []
    private let finish: (PendingAnswer) -> Void
    private var timer: ScheduledWork?
    private(set) var finished = false

    init(id: UInt64, event: EventKind, finish: @escaping (PendingAnswer) -> Void) {
        self.id = id
        self.event = event
        self.finish = finish
    }

    func add(_ record: CompletionRecord) { records.append(record) }

    /// Starts the deadline on `clock`; finishes at once when every service already answered.
    /// `expired` is told of each service that missed it.
    func start(timeout: Double, clock: HostClock, expired: @escaping (CompletionRecord) -> Void) {
        finishIfComplete()
        guard !finished else { return }
        timer = clock.schedule(after: timeout) { [weak self] in
            guard let self, !self.finished else { return }
            for record in self.records where record.expire() {
                expired(record)
                self.answers.append((record.serviceID, nil))
            }
            self.finishIfComplete()
        }
    }

    func answer(_ service: String, _ result: Int32) {
        guard !finished else { return }
        answers.append((service, result))
        finishIfComplete()
    }

    private func finishIfComplete() {
        guard !finished, answers.count == records.count else { return }
        finished = true
        timer?.cancel()
        finish(self)
    }
}
