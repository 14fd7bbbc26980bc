import Locking
import ServiceKit

/// One line the service logged through `host.log`.
public struct LogLine: Sendable, Equatable, CustomStringConvertible {
    /// The line's level.
    public var level: LogLevel
    /// The message, as the service wrote it.
    public var message: String

    /// Creates a line; for comparing with ``TestHost/logs``.
    public init(_ level: LogLevel, _ message: String) {
        self.level = level
        self.message = message
    }

    /// "info: message".
    public var description: String { "\(level): \(message)" }
}

/// One notification the service posted through `host.post`.
public struct Post: Sendable, Equatable {
    /// The notification's name.
    public var name: String
    /// Its payload, parsed; nil when it had none.
    public var payload: JSONValue?

    /// Creates a post; for comparing with ``TestHost/posts``.
    public init(_ name: String, payload: JSONValue? = nil) {
        self.name = name
        self.payload = payload
    }
}

/// Something the service asked of the host besides logging, posting and storing.
public enum Request: Sendable, Equatable {
    /// `host.subscribe(name)`.
    case subscribe(String)
    /// `host.unsubscribe(name)`.
    case unsubscribe(String)
    /// `host.registerForRemoteNotifications()`.
    case registerForRemoteNotifications
    /// `host.requestAuthorization(options)`.
    case authorization(AuthorizationOptions)
    /// `host.setRestorationActivity(_:forScene:)`, with the activity as JSON.
    case restoration(scene: UInt64, activity: JSONValue?)
    /// `host.request(name, payload)`: answered from ``TestHost/requestAnswers``.
    case request(String, payload: JSONValue?)
    /// `host.setNotificationCategories(_:)`, the categories as the JSON the host got.
    case notificationCategories(JSONValue?)
    /// `host.moveApp(_:)` (extension sources/1).
    case moveApp(AppMove)
    /// `host.watch(fd)` (extension sources/1): the descriptor, watched until its watch ends.
    case watch(Int32)
    /// The watch of this descriptor ended (`SourceWatch.end()`).
    case unwatch(Int32)
    /// `host.setCurrentState(name, state)` (extension sources/1), the state as the JSON the host
    /// got; recorded whether or not the host took it.
    case currentState(String, JSONValue?)
}

/// The answer a service gives through a completion (`FetchCompletion`,
/// `PresentationCompletion`, `ResponseCompletion`): pending until it calls it, or until the
/// test host's clock passes the deadline, as the real host's `--fetch-timeout`.
public final class Answer<Value: Sendable>: Sendable {
    /// Where the answer stands.
    public enum State: Sendable {
        /// Not called yet, and the deadline has not passed.
        case pending
        /// Called with this value (the first call counts, as in the host).
        case answered(Value)
        /// The deadline passed first; the host counts this as failed.
        case timedOut
    }

    private let storage = Locked<(state: State, calls: Int)>((.pending, 0))
    /// When the answer times out, in the test host's clock (seconds).
    public let deadline: Double

    init(deadline: Double) { self.deadline = deadline }

    /// Where the answer stands now.
    public var state: State { storage.withLock { $0.state } }
    /// The value, once answered in time; nil while pending or after a time-out.
    public var value: Value? {
        if case .answered(let value) = state { return value }
        return nil
    }
    /// Whether the deadline passed without an answer.
    public var timedOut: Bool {
        if case .timedOut = state { return true }
        return false
    }
    /// How many times the service called the completion: more than 1 is a bug the host
    /// logs (`completion.twice`), as is a call after the deadline (`completion.late`).
    public var calls: Int { storage.withLock { $0.calls } }

    /// The completion's body: any thread.
    func complete(_ value: Value) {
        storage.withLock {
            $0.calls += 1
            if case .pending = $0.state { $0.state = .answered(value) }
        }
    }

    /// The clock moved to `now`: time out if still pending.
    func expire(at now: Double) {
        storage.withLock {
            if case .pending = $0.state, now >= deadline { $0.state = .timedOut }
        }
    }
}

/// What the host knows of a service's health (``TestHost/health``): `ctl list`'s `health`.
public struct HealthRecord: Sendable, Equatable {
    /// The last check's status; nil before the first one completed.
    public var status: HealthStatus?
    /// Why, as the service said, or the host ("no answer within 5 s").
    public var reason: String?
    /// Unhealthy answers in a row (back to 0 after a restart for them).
    public var unhealthyChecks: Int
    /// Restarts made because the service was unhealthy (``TestHost/restartsWhenUnhealthy``).
    public var restarts: Int

    /// A record, for comparing with ``TestHost/health``.
    public init(status: HealthStatus?, reason: String?, unhealthyChecks: Int, restarts: Int) {
        self.status = status
        self.reason = reason
        self.unhealthyChecks = unhealthyChecks
        self.restarts = restarts
    }
}
