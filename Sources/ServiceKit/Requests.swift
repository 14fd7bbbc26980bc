import ServiceABI

/// A request another service (or `host ctl request`) sent to this one, for a name it
/// answers (`answers` in servicehost.json). Copied out of the host's memory: keep it as long
/// as you like.
public struct ServiceRequest: Sendable {
    /// The request's name: `"geo.locate"`.
    public let name: String
    /// The asking service's id; `"host"` for a control client.
    public let from: String
    /// The payload, or nil when the asker sent none.
    public let payload: JSONValue?

    init(_ raw: UnsafePointer<sh_request>) {
        let r = raw.pointee
        name = r.name.map { String(cString: $0) } ?? ""
        from = r.from.map { String(cString: $0) } ?? ""
        payload = r.json.flatMap { try? JSONValue(parsing: UnsafeRawBufferPointer(start: $0, count: r.json_len)) }
    }

    /// A request for tests of a service.
    public init(name: String, from: String = "test", payload: JSONValue? = nil) {
        self.name = name
        self.from = from
        self.payload = payload
    }
}

/// Answers a ``ServiceRequest``: call ``reply(_:)`` or ``fail(_:)`` exactly once, from any
/// thread, within the host's deadline (`--request-timeout`, 5 s by default).
///
/// Exactly once: the host ignores a second call and logs it; past the deadline it has
/// already answered the asker with an error, and logs the late call.
public final class ReplyCompletion: Sendable {
    private let handle: CompletionHandle
    private let body: (@Sendable (Result<JSONValue, RequestError>) -> Void)?

    init(_ handle: CompletionHandle) {
        self.handle = handle
        body = nil
    }

    /// Creates a completion that calls `body`; for tests of a service.
    public init(_ body: @escaping @Sendable (Result<JSONValue, RequestError>) -> Void) {
        handle = CompletionHandle(raw: nil)
        self.body = body
    }

    /// Answers with `value`. Call exactly once, from any thread.
    public func reply(_ value: JSONValue) {
        if let body { return body(.success(value)) }
        handle.complete(Int32(SH_OK), json: Array(value.serialized.utf8))
    }

    /// The same as ``reply(_:)``.
    public func callAsFunction(_ value: JSONValue) { reply(value) }

    /// Answers that the request failed, saying why: the asker gets an error naming this
    /// service and `message`. Call exactly once (instead of ``reply(_:)``), from any thread.
    public func fail(_ message: String) {
        if let body { return body(.failure(RequestError(code: Int32(SH_ERROR), message: message))) }
        handle.complete(Int32(SH_ERROR), json: Array(JSONValue.object(["error": .string(message)]).serialized.utf8))
    }
}

/// Why a request got no answer: nobody answers its name, it was refused (a payload over the
/// host's `--max-payload`), or the answerer failed, missed its deadline or crashed.
public struct RequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host's code: `SH_NOT_FOUND`, `SH_INVALID` or `SH_ERROR`.
    public let code: Int32
    /// The host's reason: "no service answers geo.locate", "… did not answer … within 5 s".
    public let message: String

    /// Creates an error, e.g. for a test's ``ReplyCompletion``.
    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// Whether no service answers the name.
    public var isNotFound: Bool { code == SH_NOT_FOUND }

    /// The host's reason.
    public var description: String { message }
}

extension HostContext {
    /// Asks the service that answers `name` (its `answers` in servicehost.json) and hands
    /// its reply to `reply`, once, on the host's main thread:
    ///
    /// ```swift
    /// try host.request("queue.count") { result in
    ///     if case .success(let reply) = result { host.log(.info, "queued: \(reply["count"] ?? 0)") }
    /// }
    /// ```
    ///
    /// The answerer runs on the host's main thread after the current event (in its own
    /// worker when it is isolated; opened first when it is lazy). A failure (nobody
    /// answers, a payload over `--max-payload`, a missed deadline, a crash) arrives as a
    /// ``RequestError``. Any thread.
    /// - Throws: ``HostError/unsupported`` when the host predates requests,
    ///   ``HostError/invalid`` for an empty name.
    public func request(
        _ name: String, _ payload: JSONValue? = nil,
        reply: @escaping @Sendable (Result<JSONValue, RequestError>) -> Void
    ) throws(HostError) {
        let raw = try attached()
        guard has(\.request), let ask = raw.pointee.request else { throw .unsupported }
        guard !name.isEmpty else { throw .invalid }
        let box = Unmanaged.passRetained(RequestReplyBox(reply)).toOpaque()
        let json = payload.map { Array($0.serialized.utf8) }
        let code = name.withCString { name in
            let answer: sh_request_reply_fn = { context, result, text, length in
                guard let context else { return }
                let box = Unmanaged<RequestReplyBox>.fromOpaque(context).takeRetainedValue()
                let bytes = text.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
                let value = bytes.isEmpty ? JSONValue.null : (try? JSONValue(parsing: bytes)) ?? .null
                if result == SH_OK {
                    box.reply(.success(value))
                } else {
                    box.reply(
                        .failure(RequestError(code: result, message: value["error"]?.stringValue ?? "error \(result)")))
                }
            }
            guard let json else { return ask(raw, name, nil, 0, answer, box) }
            return json.withUnsafeBytes {
                ask(raw, name, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count, answer, box)
            }
        }
        if code != SH_OK {
            Unmanaged<RequestReplyBox>.fromOpaque(box).release()  // the host will not call back
            throw HostError(code: code)
        }
    }
}

/// A request's reply closure, kept alive across the C call until the host answers.
private final class RequestReplyBox: Sendable {
    let reply: @Sendable (Result<JSONValue, RequestError>) -> Void
    init(_ reply: @escaping @Sendable (Result<JSONValue, RequestError>) -> Void) { self.reply = reply }
}
