import Dispatch
import Glibc
import ServiceJSON

/// Control requests from services (`sh_host.control`, issue 17): a service such as the MQTT
/// bridge hands the host the same request objects a control client writes on the socket.
///
/// Not a back door: each request is parsed by the socket's parser with the socket's limits,
/// carried out by the same ``ControlHandler`` on the main thread, and only the requests the
/// configuration grants the service (`"requests": "events"` or `"all"`) are taken.
final class ServiceRequests: Sendable {
    private struct Wiring: Sendable {
        var handler: ControlHandler?
        var maxPayload = 65536
    }

    private let wiring = Locked(Wiring())
    private let log: Log

    init(log: Log) { self.log = log }

    /// The largest payload a request may carry (`--max-payload`, once a handler is wired).
    var maxPayload: Int { wiring.withLock { $0.maxPayload } }

    /// Carries requests out with `handler`, checking payloads against `maxPayload` as the
    /// socket does. Until this is called every request is refused.
    func accept(from handler: ControlHandler, maxPayload: Int) {
        wiring.withLock { $0 = Wiring(handler: handler, maxPayload: maxPayload) }
    }

    /// Parses `bytes` on the calling thread, then on the main thread checks the grant of
    /// `service` and carries the request out; `reply` gets the reply object's JSON once, on
    /// the main thread, after the host carried it out (or refused it).
    func submit(from service: String, _ bytes: [UInt8], reply: @escaping @Sendable ([UInt8]) -> Void) {
        let (handler, maxPayload) = wiring.withLock { ($0.handler, $0.maxPayload) }
        let maxLine = maxPayload * 2 + 4096
        let parsed =
            bytes.count > maxLine
            ? .failure(ControlRefusal(id: nil, message: "the request is longer than \(maxLine) bytes (--max-payload is \(maxPayload))"))
            : ControlRequest.parse(bytes, maxPayload: maxPayload)
        // FIFO: a service's requests are carried out in the order it made them.
        DispatchQueue.main.async { [log] in
            MainActor.assumeIsolated {
                let send = { (body: ControlReply) in reply(Array(body.json.serialized.utf8)) }
                guard let handler else {
                    return send(ControlReply(ControlRefusal(id: nil, message: "this host takes no control requests")))
                }
                let request: ControlRequest
                switch parsed {
                case .failure(let refusal):
                    log.warn(
                        service, "request refused: \(refusal.message)", event: .requestRefused,
                        .string("reason", refusal.message))
                    return send(ControlReply(refusal))
                case .success(let parsed): request = parsed
                }
                let grant = handler.host.configuration.services[service]?.requests
                guard Self.allows(grant, request.command) else {
                    let message =
                        "service \(service) may not make the request \"\(request.command.name)\" "
                        + (grant == nil
                            ? "(grant it in services.json: \"requests\": \"events\" or \"all\")"
                            : "(services.json grants it \"requests\": \"events\"; this one needs \"all\")")
                    log.warn(service, message, event: .requestRefused, .string("reason", message))
                    return send(ControlReply(ControlRefusal(id: request.id, message: message)))
                }
                // `watch` turns a socket connection into a stream; a service's request has none.
                if case .operate(.watch) = request.command {
                    let message = "service \(service) may not make the request \"watch\": it streams on a control connection"
                    log.warn(service, message, event: .requestRefused, .string("reason", message))
                    return send(ControlReply(ControlRefusal(id: request.id, message: message)))
                }
                handler.handle(request) { body, after in
                    send(body)
                    // As on the socket: `terminate` exits once its reply is out.
                    if after == .exit { exit(0) }
                }
            }
        }
    }

    /// Whether `grant` covers `command`: `events` covers what a client causes and the
    /// read-only requests, `all` everything.
    static func allows(_ grant: ServiceConfiguration.RequestGrant?, _ command: ControlRequest.Command) -> Bool {
        switch grant {
        case nil: return false
        case .all: return true
        case .events:
            switch command {
            case .state, .list, .operate(.listAll), .push, .open, .activity, .post, .request, .memoryWarning: return true
            default: return false
            }
        }
    }
}

extension ControlRequest.Command {
    /// The command's name on the wire (`list --all` is `list`).
    var name: String {
        switch self {
        case .state: "state"
        case .list: "list"
        case .reload: "reload"
        case .lifecycle(let move): move.rawValue
        case .memoryWarning: "memory-warning"
        case .push: "push"
        case .open: "open"
        case .activity: "activity"
        case .token: "token"
        case .tokenError: "token-error"
        case .post: "post"
        case .request: "request"
        case .scene: "scene"
        case .authorization: "authorization"
        case .operate(let operate): operate.name
        }
    }
}
