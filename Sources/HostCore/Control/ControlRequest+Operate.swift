import ServiceJSON

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
    /// {"command":"deploy","directory":"/srv/release-7","seconds":30}   seconds: the probation, optional
    /// {"command":"deploy","action":"status"}
    /// {"command":"deploy","action":"cancel"}
    /// {"command":"deploy","action":"digests"}
    /// {"command":"deploy","action":"verify","path":"/tmp/b.tar","size":N,"sha256":"…","signature":"untrusted comment: …"}
    /// {"command":"rollback"}
    /// {"command":"configure","service":"dev.servicehost.logger","settings":{"level":"debug"}}
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
        /// Stages, verifies and switches to the set of plugin files in an absolute `directory`,
        /// watched for `probation` seconds.
        case deploy(directory: String, probation: Double)
        /// The current generation, the one in probation, the last ones' outcomes.
        case deployStatus
        /// Stops the deploy in probation, rolling it back.
        case deployCancel
        /// Checks a fleet bundle's size, SHA-256 and minisign signature by the host's trusted
        /// keys, before anyone unpacks it (``Host/verifyBundle(file:size:sha256:signature:done:)``).
        /// The SHA-256 of each running service's plugin file (``Host/serviceDigests()``).
        case deployDigests
        case deployVerify(path: String, size: Int, sha256: String, signature: String)
        /// Back to the generation before the current one.
        case rollback
        /// Gives running service `id` new settings (nil: none): live by didChangeSettings when it
        /// handles it, else by a restart.
        case configure(id: String, settings: [String: JSONValue]?)

        /// `service`'s actions.
        public enum ServiceAction: String, Sendable, CaseIterable {
            case stop, start, restart
            /// Lifts a crash loop's failure and starts the service again (systemd's `reset-failed`).
            case resetFailed = "reset-failed"
        }
    }
}
