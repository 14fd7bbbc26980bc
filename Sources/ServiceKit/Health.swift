import ServiceABI

/// A service's health (``ServiceVocabulary/HealthStatus``): `healthy`, `degraded` or `unhealthy`.
public typealias HealthStatus = ServiceVocabulary.HealthStatus

/// Handles `healthCheck`: says whether the service is healthy, when the host asks (every
/// `healthCheck.interval` seconds of its configuration entry).
///
/// ```swift
/// func checkHealth(completion: HealthCompletion) {
///     connection.isOpen ? completion(.healthy) : completion(.unhealthy, reason: "broker unreachable")
/// }
/// ```
public protocol HealthChecking: ApplicationService {
    /// The host asks how the service fares: call `completion` exactly once, from any thread,
    /// within `healthCheck.timeout`. A missed deadline counts as unhealthy. Main thread.
    func checkHealth(completion: HealthCompletion)
}

extension HealthChecking {
    @available(
        *, unavailable,
        message:
            "HealthChecking needs `func checkHealth(completion: HealthCompletion)` (event \"healthCheck\" in servicehost.json)"
    )
    public func checkHealth(completion: HealthCompletion) {}
}

/// Answers `healthCheck`: call it exactly once, from any thread.
///
/// Exactly once: the host ignores a second call and logs it, and counts a check not answered
/// within its deadline as unhealthy.
public final class HealthCompletion: Sendable {
    private let handle: CompletionHandle
    private let body: (@Sendable (HealthStatus, String?) -> Void)?

    init(_ handle: CompletionHandle) {
        self.handle = handle
        body = nil
    }

    /// Creates a completion that calls `body` with the status and reason; for tests of a service.
    public init(_ body: @escaping @Sendable (HealthStatus, String?) -> Void) {
        handle = CompletionHandle(raw: nil)
        self.body = body
    }

    /// Delivers the status and why (shown in `ctl list` and the log; at most 1024 bytes kept).
    /// Call exactly once, from any thread.
    public func complete(_ status: HealthStatus, reason: String? = nil) {
        if let body { return body(status, reason) }
        if let reason {
            handle.complete(status.rawValue, json: Array(JSONValue.string(reason).serialized.utf8))
        } else {
            handle.complete(status.rawValue)
        }
    }

    /// The same as ``complete(_:reason:)``.
    public func callAsFunction(_ status: HealthStatus, reason: String? = nil) { complete(status, reason: reason) }
}

extension HostContext {
    /// Reports the service's health now (extension `dev.servicehost.health/1`), whenever it
    /// knows: its broker connection dropped, its queue stuck, both fine again. It counts as an
    /// answer to `healthCheck` would: shown in `host ctl list`, and `healthCheck.unhealthyAfter`
    /// unhealthy reports in a row restart or report the service (`onUnhealthy`). Any thread;
    /// `reason` is kept to 1024 bytes.
    /// - Throws: ``HostError/notAttached`` before attach, ``HostError/unsupported`` when the host
    ///   does not offer the extension (an older host).
    public func reportHealth(_ status: HealthStatus, reason: String? = nil) throws(HostError) {
        let raw = try attached()
        guard let pointer = self.extension(id: SH_HEALTH_EXTENSION_ID) else { throw .unsupported }
        let table = pointer.assumingMemoryBound(to: sh_health_reporting.self)
        guard table.pointee.size >= SH_HEALTH_EXTENSION_SIZE_V1, let report = table.pointee.report else {
            throw .unsupported
        }
        let result =
            if let reason { reason.withCString { report(raw, status.rawValue, $0) } } else {
                report(raw, status.rawValue, nil)
            }
        guard result == SH_OK else { throw .invalid }
    }
}
