extension ControlRequest {
    /// The requests that operate the host rather than drive the app:
    ///
    /// ```text
    /// {"command":"stats","service":"dev.servicehost.logger"}   service optional
    /// {"command":"blame"}
    /// {"command":"list","all":true}
    /// {"command":"service","action":"restart","service":"dev.servicehost.logger","force":false}
    /// {"command":"service","action":"reset-failed","service":"com.example.flaky"}
    /// {"command":"watch","logs":true}
    /// ```
    public enum Operate: Sendable, Equatable {
        /// Figures per service and event kind; one service's with `service`.
        case stats(service: String?)
        /// Start-up cost per service, slowest first.
        case blame
        /// `list` plus every file and service looked at and not started.
        case listAll
        /// Stops, starts, restarts or resets (after a crash loop) one service.
        case service(ServiceAction, id: String, force: Bool)
        /// Streams trace records (and log lines with `logs`) until the client goes away.
        case watch(logs: Bool)

        /// `service`'s actions.
        public enum ServiceAction: String, Sendable, CaseIterable {
            case stop, start, restart
            /// Lifts a crash loop's failure and starts the service again (systemd's `reset-failed`).
            case resetFailed = "reset-failed"
        }
    }
}
