import Dispatch
import Glibc
import ServiceABI
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
            ? .failure(
                ControlRefusal(
                    id: nil, message: "the request is longer than \(maxLine) bytes (--max-payload is \(maxPayload))"))
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
                let spec = request.spec
                guard spec.grant.allows(grant) else {
                    let message =
                        "service \(service) may not make the request \"\(spec.name)\" "
                        + (grant == nil
                            ? "(grant it in services.json: \"requests\": \"events\" or \"all\")"
                            : "(services.json grants it \"requests\": \"events\"; this one needs \"all\")")
                    log.warn(service, message, event: .requestRefused, .string("reason", message))
                    return send(ControlReply(ControlRefusal(id: request.id, message: message)))
                }
                // `watch` turns a socket connection into a stream; a service's request has none.
                if spec.grant == .connectionOnly {
                    let message =
                        "service \(service) may not make the request \"\(spec.name)\": it streams on a control connection"
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

    /// A deploy `service` asked for (extension deploy/1): carried out on the main thread as
    /// `ctl deploy` is, when the configuration grants the service what that request needs
    /// (`"requests": "all"`); `done` gets the outcome once: refused at once, or when the
    /// probation ends (``Host/deploy(from:probation:settled:)``), also when the deploy or its
    /// rollback replaced or removed the service (deploy.h).
    func deploy(
        from service: ServiceContext, directory: String, probation: Double,
        done: @escaping @Sendable (RequestReply) -> Void
    ) {
        let handler = wiring.withLock { $0.handler }
        DispatchQueue.main.async { [log] in
            MainActor.assumeIsolated {
                let refuse = { (message: String) in
                    log.warn(
                        service.id, "deploy refused: \(message)", event: .requestRefused, .string("reason", message))
                    done(Host.settlement(SH_DEPLOY_REFUSED, error: message))
                }
                guard let handler else { return refuse("this host takes no control requests") }
                let host = handler.host
                let grant = host.configuration.services[service.id]?.requests
                guard ControlGrant.all.allows(grant) else {
                    return refuse(
                        "service \(service.id) may not deploy (grant it in services.json: \"requests\": \"all\")")
                }
                // `done` is called even when the deploy or its rollback took the service down: in
                // process its library stays mapped (the host never unloads one) and its sh_host
                // stays valid, so the instance that asked hears how it ended and can free what it
                // kept for it; a worker that ended with its service is not there to hear it.
                host.deploy(from: directory, probation: probation, settled: done)
            }
        }
    }
}
