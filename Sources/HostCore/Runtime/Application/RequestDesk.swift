import ServiceABI
import ServiceJSON

/// One request between services (`sh_host.request`) or from `host ctl request`, on its way
/// to the service that answers its name. Holds copies: it crosses threads in the mailbox.
struct ServiceRequest: Sendable {
    /// The request's name, one service's `SH_CLAIM_ANSWER` ("geo.locate").
    let name: String
    /// The asking service's id; "host" for a control client.
    let from: String
    /// The payload's JSON text, or nil.
    let json: [UInt8]?
    /// Told of the reply exactly once, on the main thread.
    let reply: @Sendable (RequestReply) -> Void
}

/// What the asker of a request receives: a result code and a JSON object.
public struct RequestReply: Sendable, Equatable {
    /// SH_OK (the answerer's reply), SH_NOT_FOUND (nobody answers the name), SH_INVALID (the
    /// request was refused) or SH_ERROR (the answerer failed, missed its deadline or crashed).
    public let result: Int32
    /// The answerer's JSON (empty when it sent none), or `{"error": "..."}` saying why not.
    public let json: [UInt8]

    /// A reply that did not come from an answerer: `{"error": message}`.
    static func refused(_ result: Int32, _ message: String) -> RequestReply {
        RequestReply(result: result, json: Array(JSONValue.object(["error": .string(message)]).serialized.utf8))
    }

    /// The error's text, when this is not an answer.
    public var error: String? {
        guard result != SH_OK else { return nil }
        return (try? JSONValue(parsing: json))?["error"]?.stringValue ?? "error \(result)"
    }
}

/// Carries requests (`sh_host.request`, `host ctl request`) to the services that answer them:
/// the one rule of who answers, with what payload, within which deadline.
@MainActor
final class RequestDesk {
    private let dispatcher: Dispatcher
    /// Lazy services a request may open first.
    private let dormant: DormantServices
    /// The completions of requests: a book of their own, as their deadline (--request-timeout)
    /// differs from the pushes' and a book's deadlines follow its ids.
    let answers: AnswerBook
    /// Where the payload limit (--max-payload) is read at each request.
    private let requests: ServiceRequests
    private let log: Log
    /// What the host answers itself, by request name, before any service: a system source's
    /// current state (`network.current`), or why there is none (the source is off).
    private var hostAnswers: [String: HostAnswer] = [:]
    /// Names the host will answer once its sources started: asked earlier (while the app
    /// launches), a request waits for its answer.
    var awaitedHostAnswers: Set<String> = []
    private var waitingForHost: [ServiceRequest] = []

    /// A request the host answers itself.
    enum HostAnswer {
        /// The answer, SH_OK.
        case state(JSONValue)
        /// SH_NOT_FOUND, `{"error": reason}`.
        case unavailable(String)
    }

    init(dispatcher: Dispatcher, dormant: DormantServices, answers: AnswerBook, requests: ServiceRequests, log: Log) {
        self.dispatcher = dispatcher
        self.dormant = dormant
        self.answers = answers
        self.requests = requests
        self.log = log
    }

    /// Answers request `name` with `answer` from now on, and the requests that waited for it.
    func setHostAnswer(_ name: String, _ answer: HostAnswer) {
        hostAnswers[name] = answer
        let ready = waitingForHost.filter { $0.name == name }
        guard !ready.isEmpty else { return }
        waitingForHost.removeAll { $0.name == name }
        for request in ready { Self.reply(request, answer) }
    }

    private static func reply(_ request: ServiceRequest, _ answer: HostAnswer) {
        switch answer {
        case .state(let value): request.reply(RequestReply(result: Int32(SH_OK), json: Array(value.serialized.utf8)))
        case .unavailable(let reason): request.reply(.refused(Int32(SH_NOT_FOUND), reason))
        }
    }

    /// Carries `request` to the one service that answers its name, opening it first when it is
    /// lazy, with a completion the answerer must call within `answers.timeout`. Every outcome
    /// reaches `request.reply` once: the answer, or an error naming why there is none (a
    /// payload over --max-payload, JSON that does not parse, nobody answering, a failure, a
    /// missed deadline). Main thread, after the event during which it was asked. Returns
    /// whether the answerer was asked: the caller then handles what it sent meanwhile.
    @discardableResult
    func answer(_ request: ServiceRequest) -> Bool {
        let maxPayload = requests.maxPayload
        func refuse(_ result: Int32, _ reason: String, answerer: String? = nil) -> Bool {
            let message = "request \(request.name): \(reason)"
            if let answerer {
                log.warn(
                    request.from, message, event: .requestRefused, .string("name", request.name),
                    .string("reason", reason), .string("answerer", answerer))
            } else {
                log.warn(
                    request.from, message, event: .requestRefused, .string("name", request.name),
                    .string("reason", reason))
            }
            request.reply(.refused(result, reason))
            return false
        }
        let size = request.json?.count ?? 0
        guard size <= maxPayload else {
            return refuse(
                Int32(SH_INVALID), "the payload is \(size) bytes, over the limit of \(maxPayload) (--max-payload)")
        }
        if let answer = hostAnswers[request.name] {
            Self.reply(request, answer)
            return false
        }
        if awaitedHostAnswers.contains(request.name) {
            waitingForHost.append(request)
            return false
        }
        var tape: JSONTape?
        if let json = request.json {
            do throws(JSONParseError) { tape = try JSONTape(parsing: json) } catch {
                return refuse(Int32(SH_INVALID), "the payload is not valid JSON: \(error)")
            }
        }
        // Once termination began a lazy answerer stays closed (``DormantServices/isClosed``):
        // the asker learns why, rather than that nobody answers.
        if dormant.isClosed, let waiting = dormant.answerer(of: request.name) {
            let id = waiting.metadata.id
            return refuse(
                Int32(SH_ERROR), "\(id) answers \(request.name) but is lazy and the host is terminating: not opened",
                answerer: id)
        }
        dormant.wake(.request, "request \(request.name)") { $0.answers.contains(request.name) }
        let slots = dispatcher.services
        guard
            let index = dispatcher.handlers(.request).first(where: { slots[$0].metadata.answers.contains(request.name) }
            )
        else {
            return refuse(Int32(SH_NOT_FOUND), "no service answers \(request.name)")
        }
        let answerer = slots[index].id
        let arena = EventArena()
        let data = arena.request(name: request.name, from: request.from, tape: tape)
        let deadline = answers.timeout
        answers.askOne(.request, data: UnsafeRawPointer(data), arena: arena, to: index) { [log] result, json in
            guard let result else {
                log.warn(
                    answerer, "did not answer request \(request.name) within \(Seconds.text(deadline)) s",
                    event: .requestFailed,
                    .string("name", request.name), .string("from", request.from), .string("reason", "timeout"))
                return request.reply(
                    .refused(
                        Int32(SH_ERROR), "\(answerer) did not answer \(request.name) within \(Seconds.text(deadline)) s"
                    ))
            }
            guard result == SH_OK else {
                log.warn(
                    answerer, "failed request \(request.name) (result \(result))", event: .requestFailed,
                    .string("name", request.name), .string("from", request.from), .string("reason", "result \(result)"))
                let detail = json.flatMap { RequestReply(result: Int32(SH_ERROR), json: $0).error }
                return request.reply(
                    .refused(Int32(SH_ERROR), "\(answerer) failed \(request.name)" + (detail.map { ": \($0)" } ?? "")))
            }
            request.reply(RequestReply(result: Int32(SH_OK), json: json ?? []))
        }
        return true
    }
}
