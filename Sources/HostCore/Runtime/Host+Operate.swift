import ServiceJSON

/// Operating a running host: statistics, start-up cost, one service at a time, what was not
/// started. The control channel and the metrics endpoint read these on the main thread.
extension Host {
    /// Starts counting every delivery per service and event kind (`--stats`,
    /// `--metrics-listen`). Until then the dispatch path does not time calls at all.
    public func enableStatistics() { dispatcher.enableStatistics() }

    /// Whether deliveries are counted.
    public var statisticsEnabled: Bool { dispatcher.statisticsEnabled }

    /// Stops service `id` (see ``Application/stopService(_:force:)``).
    public func stopService(_ id: String, force: Bool = false) throws(ServiceControlError) {
        try refuseWhileTerminating()
        try application.stopService(id, force: force)
    }

    /// Starts service `id` again, caught up to the app's state.
    public func startService(_ id: String) throws(ServiceControlError) {
        try refuseWhileTerminating()
        try application.startService(id)
    }

    /// Restarts service `id` (a new worker when it runs in one); returns the services restarted.
    @discardableResult
    public func restartService(_ id: String, force: Bool = false) throws(ServiceControlError) -> [String] {
        try refuseWhileTerminating()
        return try application.restartService(id, force: force, isolation: isolation)
    }

    /// Lifts the crash loop's failure of service `id` and starts it again (see
    /// ``Application/resetFailedService(_:isolation:)``); returns the services started again.
    @discardableResult
    public func resetFailedService(_ id: String) throws(ServiceControlError) -> [String] {
        try refuseWhileTerminating()
        return try application.resetFailedService(id, isolation: isolation)
    }

    /// Gives running service `id` new `settings` and tells it by didChangeSettings, as a reload
    /// of a settings edit does (TestHost drives it so); false when it is not running or does not
    /// handle the event.
    @discardableResult
    package func changeSettings(of id: String, to settings: [String: JSONValue]?) -> Bool {
        guard let slot = serviceSet.slot(id), slot.metadata.events.contains(.didChangeSettings) else { return false }
        var configuration = slot.configuration ?? ServiceConfiguration(id: id)
        configuration.setSettings(settings)
        serviceSet.deliverSettings(to: slot, configuration, state: state)
        bus.drain()
        return true
    }

    /// What `ctl configure` did.
    public enum ConfigureOutcome: Sendable, Equatable {
        /// Told by didChangeSettings; it kept running.
        case reconfigured
        /// It does not handle didChangeSettings: restarted with the new settings (with the
        /// other services of its worker).
        case restarted([String])
    }

    /// `host ctl configure ID JSON`: gives running service `id` new `settings` (nil: none) until
    /// the next reload reads the configuration file again. A service that handles
    /// didChangeSettings is told, old and new, and keeps running; another is restarted with them.
    public func configureService(_ id: String, settings: [String: JSONValue]?) throws(ServiceControlError)
        -> ConfigureOutcome
    {
        try refuseWhileTerminating()
        guard let slot = serviceSet.slot(id) else {
            // The same refusal `service restart` gives (not running, unknown, did you mean).
            _ = try application.restartService(id, force: false, isolation: isolation)
            throw ServiceControlError("service \(id) is not running")
        }
        // Its settings schema first: a value that breaks it changes nothing.
        var settings = settings
        switch SettingsCheck.apply(slot.metadata.settingsSchema, to: settings) {
        case .success(let filled): settings = filled
        case .failure(let violation):
            log.error(
                "host", "service \(id): \(violation); it keeps the settings it had", event: .serviceSettingsRefused,
                .string("service", id), .string("key", violation.key), .string("reason", violation.reason),
                .string("kept", "previous"))
            throw ServiceControlError("service \(id) refused the settings: \(violation); it keeps the settings it had")
        }
        if changeSettings(of: id, to: settings) { return .reconfigured }
        var configuration = slot.configuration ?? ServiceConfiguration(id: id)
        configuration.setSettings(settings)
        slot.configuration = configuration
        return .restarted(try restartService(id, force: true))
    }

    private func refuseWhileTerminating() throws(ServiceControlError) {
        if isTerminating || state == .notRunning { throw ServiceControlError("the host is not running its services") }
    }

    /// Lazy services not opened yet, in start order: their metadata and file.
    public var dormantServices: [(metadata: ServiceMetadata, path: String)] {
        serviceSet.dormant.entries.map { ($0.metadata, $0.plugin.path) }
    }

    /// How many lazy services are not opened yet.
    public var dormantCount: Int { serviceSet.dormant.entries.count }

    /// What opened lazy service `id`, or nil when it is not a lazy service opened so far.
    public func activatedBy(of id: String) -> String? { serviceSet.activatedBy[id] }

    /// Services loaded but not running, and why (`stopped by request`, `failed to launch`).
    public var parkedServices: [(slot: ServiceSlot, reason: String)] { serviceSet.parked }

    /// Every file and service the host looked at and did not start, with why; crash-looped
    /// services too (they are listed as services, `failed`, and here with the reason).
    public var skipped: [SkippedEntry] {
        var entries = serviceSet.skipped
        for slot in services {
            if let failure = isolation?.board.fields(for: slot.id)[.failure].flatMap(FailureRecord.init(json:)) {
                entries.append(
                    SkippedEntry(
                        path: slot.path, services: [slot.id], reason: .crashLooped,
                        message:
                            "marked failed after a crash loop (\(failure.summary)); starts again when the file changes"
                            + " or with host ctl service reset-failed \(slot.id)")
                )
            }
        }
        return entries
    }

    /// The figures of every service (or of `service`), as `host ctl stats --json` shows them.
    func statistics(of service: String?) throws(ServiceControlError) -> JSONValue {
        guard statisticsEnabled else {
            throw ServiceControlError("statistics are off: start the host with --stats (or --metrics-listen)")
        }
        let stats = dispatcher.stats
        var ids = stats.ids
        if let service {
            guard ids.contains(service) || services.contains(where: { $0.id == service }) else {
                throw ServiceControlError(
                    "no statistics for unknown service \(service)"
                        + Suggestion.didYouMean(service, among: ids) + " (known: \(ids.joined(separator: ", ")))")
            }
            ids = [service]
        }
        let bounds = ServiceStats.bounds.map { JSONValue.number(Double($0)) }
        return .object([
            "bounds_ns": .array(bounds),
            "services": .array(
                ids.map { id in
                    .object([
                        "service": .string(id),
                        "events": .array(
                            stats.figures(for: id).map { figures in
                                .object([
                                    "event": .string(figures.kind.name), "count": .number(Double(figures.count)),
                                    "failures": .number(Double(figures.failures)),
                                    "total_ns": .number(Double(figures.totalNanoseconds)),
                                    "max_ns": .number(Double(figures.maxNanoseconds)),
                                    "buckets": .array(figures.buckets.map { .number(Double($0)) }),
                                ])
                            }),
                    ])
                }),
            // Each sandboxed worker's cgroup (issue 43): memory, CPU and tasks as the kernel counts them.
            "workers": .array(isolation?.workerStatistics() ?? []),
        ])
    }

    /// What starting each service cost, slowest first (`host ctl blame`).
    func blame() -> [(service: String, cost: StartupCost)] {
        (services + serviceSet.parked.map(\.slot)).map { ($0.id, $0.startup) }
            .sorted { ($0.cost.total, $1.service) > ($1.cost.total, $0.service) }
    }
}
