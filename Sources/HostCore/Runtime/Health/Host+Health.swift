import ServiceJSON

/// Health checks (issue 42 item 1): each running service whose configuration has a
/// `healthCheck` and whose metadata lists the event is asked `healthCheck` every `interval`
/// seconds (after the previous answer), with a completion bound by `timeout`. `unhealthyAfter`
/// unhealthy answers in a row restart it or report it (`onUnhealthy`), and fail a deploy in
/// probation. A service that does not ask for the event is never called for it.
extension Host {
    /// The longest reason kept of an answer, in bytes.
    nonisolated static let longestHealthReason = 1024

    /// The `healthCheck` policy of service `id`, when it handles the event.
    func healthPolicy(of slot: ServiceSlot) -> HealthCheckPolicy? {
        guard slot.metadata.events.contains(.healthCheck) else { return nil }
        return configuration.service(slot.id)?.healthCheck
    }

    /// Schedules the first check of each running service that has a policy and none scheduled,
    /// and cancels those of services gone (their records stay: a restart keeps its count).
    /// Called whenever the service list changes.
    func syncHealthChecks() {
        guard application.isRunning else { return }
        var present = Set<String>()
        for slot in services {
            guard let policy = healthPolicy(of: slot) else { continue }
            present.insert(slot.id)
            let record = health[slot.id] ?? HealthBoard.Record()
            if record.timer == nil && !record.pending { scheduleHealthCheck(slot.id, after: policy.interval, record) }
        }
        for (id, record) in health.records where !present.contains(id) && record.timer != nil {
            record.timer?.cancel()
            health[id]?.timer = nil
        }
    }

    private func scheduleHealthCheck(_ id: String, after seconds: Double, _ record: HealthBoard.Record) {
        var record = record
        record.timer = clock.schedule(after: seconds) { [weak self] in self?.checkHealth(of: id) }
        health[id] = record
    }

    /// Asks service `id` for its health now (its timer fired, or TestHost asked with `given`, its
    /// policy); `answered` is told of the status once it completed or timed out. False when it is
    /// not checked now: not running, not handling the event, no policy, a check pending, or its
    /// worker not up.
    @discardableResult
    package func checkHealth(
        of id: String, policy given: HealthCheckPolicy? = nil, answered: ((HealthStatus) -> Void)? = nil
    ) -> Bool {
        health[id]?.timer = nil
        guard application.isRunning, let index = services.firstIndex(where: { $0.id == id }),
            services[index].metadata.events.contains(.healthCheck),
            let policy = given ?? healthPolicy(of: services[index]), health[id]?.pending != true
        else { return false }
        // A worker restarting, failed or stopped is not asked (its proxy would answer an error).
        if let state = isolation?.board.fields(for: id)[.state]?.stringValue, state != "running" {
            scheduleHealthCheck(id, after: policy.interval, health[id] ?? HealthBoard.Record())
            return false
        }
        var record = health[id] ?? HealthBoard.Record()
        record.pending = true
        health[id] = record
        let book = health.book(timeout: policy.timeout) { AnswerBook(dispatcher: dispatcher, log: log, clock: clock) }
        book.askOne(.healthCheck, to: index) { [weak self] result, json in
            guard let self else { return }
            let status = self.healthAnswered(id, policy: policy, result: result, json: json)
            answered?(status)
        }
        bus.drain()
        return true
    }

    /// Records an answer (nil: the deadline passed), logs a change, acts on a run of unhealthy
    /// answers and schedules the next check.
    private func healthAnswered(_ id: String, policy: HealthCheckPolicy, result: Int32?, json: [UInt8]?)
        -> HealthStatus
    {
        health[id]?.pending = false
        let status: HealthStatus
        var reason = json.flatMap(Self.healthReason)
        if let result, let answered = HealthStatus(rawValue: result) {
            status = answered
        } else {
            status = .unhealthy
            reason =
                result.map { "answered \(ResultCode.name($0)), not a health status" }
                ?? "no answer within \(Seconds.text(policy.timeout)) s"
        }
        record(status, reason: reason, of: id, policy: policy)
        if let slot = serviceSet.slot(id), let current = healthPolicy(of: slot), health[id]?.timer == nil,
            health[id]?.pending != true
        {
            scheduleHealthCheck(id, after: current.interval, health[id] ?? HealthBoard.Record())
        }
        return status
    }

    /// Service `id` reported its health (the health extension, `dev.servicehost.health/1`): it
    /// counts as a check's answer, under its configured `healthCheck` or, without one, the
    /// defaults (3 unhealthy reports in a row are reported). A service no longer running is
    /// not recorded.
    func healthReported(_ id: String, status: Int32, reason: String?) {
        guard application.isRunning, serviceSet.slot(id) != nil, let status = HealthStatus(rawValue: status) else {
            return
        }
        let policy = configuration.service(id)?.healthCheck ?? HealthCheckPolicy(interval: 10)
        record(status, reason: reason, of: id, policy: policy)
    }

    /// Records one answer or report: logs a change, and acts on a run of unhealthy ones.
    private func record(_ status: HealthStatus, reason: String?, of id: String, policy: HealthCheckPolicy) {
        var record = health[id] ?? HealthBoard.Record()
        let was = record.status
        record.status = status
        record.reason = reason
        record.checks += 1
        record.checkedAt = Clock.isoNow()
        record.unhealthyRun = status == .unhealthy ? record.unhealthyRun + 1 : 0
        if was != status {
            let fields: [LogField] = [
                .string("service", id), .string("status", status.name), .string("was", was?.name ?? "unknown"),
                .string("reason", reason ?? ""),
            ]
            let message = "service \(id) is \(status.name)" + (reason.map { ": \($0)" } ?? "")
            if status == .healthy {
                log.write(.info, "host", message, event: .healthChanged, fields: fields)
            } else {
                log.write(.warn, "host", message, event: .healthChanged, fields: fields)
            }
        }
        let act = record.unhealthyRun >= policy.unhealthyAfter
        if act && policy.onUnhealthy == .restart { record.unhealthyRun = 0 }
        health[id] = record
        // `report` acts once per run; `restart` at each run's end.
        if act && (policy.onUnhealthy == .restart || record.unhealthyRun == policy.unhealthyAfter) {
            unhealthy(id, policy: policy, checks: policy.unhealthyAfter, reason: reason ?? "")
        }
    }

    /// `unhealthyAfter` unhealthy answers in a row: a deploy in probation is rolled back (the
    /// service is its culprit); otherwise the service is restarted or reported.
    private func unhealthy(_ id: String, policy: HealthCheckPolicy, checks: Int, reason: String) {
        let rollingBack = deployment.probation != nil
        log.error(
            "host",
            "service \(id) was unhealthy \(checks) checks in a row (\(reason));"
                + (rollingBack
                    ? " the deploy in probation fails"
                    : policy.onUnhealthy == .restart
                        ? " restarting it" : " reported, not restarted (onUnhealthy: report)"),
            event: .healthUnhealthy, .string("service", id), .int("checks", checks), .string("reason", reason),
            .string("action", rollingBack ? "rollback" : policy.onUnhealthy.rawValue))
        if rollingBack {
            probationFailed(culprit: id, reason: "service \(id) unhealthy: \(reason)")
            return
        }
        guard policy.onUnhealthy == .restart else { return }
        health[id]?.restarts += 1
        do throws(ServiceControlError) {
            try restartService(id)
        } catch {
            log.error(
                "host", "service \(id) could not be restarted: \(error.description)", event: .healthUnhealthy,
                .string("service", id), .int("checks", checks), .string("reason", error.description),
                .string("action", "none"))
        }
    }

    /// The reason in a check's JSON answer: a JSON string, or the text itself, cut to
    /// ``longestHealthReason`` bytes.
    nonisolated static func healthReason(_ json: [UInt8]) -> String? {
        guard !json.isEmpty else { return nil }
        let text = (try? JSONValue(parsing: json))?.stringValue ?? String(decoding: json, as: UTF8.self)
        guard text.utf8.count > longestHealthReason else { return text }
        return String(decoding: text.utf8.prefix(longestHealthReason), as: UTF8.self)
    }

    /// Service `id`'s health record as TestHost shows it: status (nil before the first check),
    /// reason, unhealthy answers in a row, restarts for them.
    package func healthRecord(of id: String) -> (
        status: HealthStatus?, reason: String?, unhealthyChecks: Int, restarts: Int
    ) {
        let record = health[id]
        return (record?.status, record?.reason, record?.unhealthyRun ?? 0, record?.restarts ?? 0)
    }

    /// The `health` member of service `id` in `ctl list`, or nil when it has no record.
    func healthFields(for id: String) -> JSONValue? { health.json(for: id) }
}
