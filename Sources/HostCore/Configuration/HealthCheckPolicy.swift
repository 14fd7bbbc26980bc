/// `healthCheck` of a service in the configuration file: how often the host asks the service
/// whether it is healthy (event `healthCheck`), how long it waits, and what `unhealthyAfter`
/// unhealthy answers in a row do (issue 42 item 1).
public struct HealthCheckPolicy: Sendable, Equatable {
    /// What the host does once a service was unhealthy `unhealthyAfter` checks in a row.
    public enum Action: String, Sendable, CaseIterable {
        /// Restarts it (in process: taken down and caught up; in a worker: a new worker).
        case restart
        /// Logs and shows it (`health.unhealthy`, `ctl list`, `/metrics`); nothing else.
        case report
    }

    /// `interval`: seconds between one check's answer and the next check, more than 0, at most a day.
    public var interval: Double
    /// `timeout`: seconds the service has to complete a check; a missed one counts as unhealthy.
    /// Default the shorter of 5 and `interval`.
    public var timeout: Double
    /// `unhealthyAfter`: unhealthy answers in a row before `onUnhealthy` acts, 1 to 1000. Default 3.
    public var unhealthyAfter: Int
    /// `onUnhealthy`: default ``Action/report``.
    public var onUnhealthy: Action

    /// A policy of `interval` seconds; the others as the file's defaults.
    public init(interval: Double, timeout: Double? = nil, unhealthyAfter: Int = 3, onUnhealthy: Action = .report) {
        self.interval = interval
        self.timeout = timeout ?? min(5, interval)
        self.unhealthyAfter = unhealthyAfter
        self.onUnhealthy = onUnhealthy
    }

    /// The keys of the `healthCheck` object.
    static let keys = ["interval", "timeout", "unhealthyAfter", "onUnhealthy"]
    /// The most checks in a row `unhealthyAfter` takes.
    static let longestRun = 1000
}
