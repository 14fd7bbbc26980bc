/// The host's figures in the Prometheus text exposition format (version 0.0.4), for
/// `GET /metrics`: the same numbers `host ctl stats` and `host ctl blame` print.
extension Host {
    /// Every metric family, with its HELP and TYPE lines.
    public func metricsText() -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [String]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { out += sample + "\n" }
        }
        family(
            "servicehost_services", "gauge", "Services loaded, by state.",
            [
                "servicehost_services{state=\"running\"} \(services.count)",
                "servicehost_services{state=\"stopped\"} \(parkedServices.count)",
                "servicehost_services{state=\"skipped\"} \(skipped.count)",
            ])
        family(
            "servicehost_startup_seconds", "gauge", "What starting each service cost, by step.",
            blame().flatMap { entry in
                let cost = entry.cost
                return [
                    ("inspect", cost.inspect), ("dlopen", cost.dlopen), ("entry", cost.entry),
                    ("attach", cost.attach), ("launch", cost.launch),
                ].map { step, nanoseconds in
                    "servicehost_startup_seconds{service=\(Self.label(entry.service)),step=\"\(step)\"} \(Self.seconds(nanoseconds))"
                }
            })
        let checked = services.compactMap { slot in health[slot.id].map { (slot.id, $0) } }
        if !checked.isEmpty {
            family(
                "servicehost_service_health", "gauge",
                "Each checked service's last health check: 1 for its status, 0 for the others.",
                checked.flatMap { id, record in
                    HealthStatus.allCases.map { status in
                        "servicehost_service_health{service=\(Self.label(id)),status=\"\(status.name)\"}"
                            + (record.status == status ? " 1" : " 0")
                    }
                })
            family(
                "servicehost_health_checks_total", "counter", "Health checks completed (answered or timed out).",
                checked.map { "servicehost_health_checks_total{service=\(Self.label($0.0))} \($0.1.checks)" })
            family(
                "servicehost_health_restarts_total", "counter", "Restarts made because a service was unhealthy.",
                checked.map { "servicehost_health_restarts_total{service=\(Self.label($0.0))} \($0.1.restarts)" })
        }
        guard statisticsEnabled else { return out }
        let stats = dispatcher.stats
        var deliveries: [String] = []
        var failures: [String] = []
        var longest: [String] = []
        var histogram: [String] = []
        for id in stats.ids {
            for figures in stats.figures(for: id) {
                let labels = "service=\(Self.label(id)),event=\(Self.label(figures.kind.name))"
                deliveries.append("servicehost_deliveries_total{\(labels)} \(figures.count)")
                failures.append("servicehost_delivery_failures_total{\(labels)} \(figures.failures)")
                longest.append("servicehost_delivery_max_seconds{\(labels)} \(Self.seconds(figures.maxNanoseconds))")
                var cumulative: UInt64 = 0
                for (index, count) in figures.buckets.enumerated() {
                    cumulative &+= count
                    let bound = index < ServiceStats.bounds.count ? Self.seconds(ServiceStats.bounds[index]) : "+Inf"
                    histogram.append(
                        "servicehost_delivery_duration_seconds_bucket{\(labels),le=\"\(bound)\"} \(cumulative)")
                }
                histogram.append(
                    "servicehost_delivery_duration_seconds_sum{\(labels)} \(Self.seconds(figures.totalNanoseconds))")
                histogram.append("servicehost_delivery_duration_seconds_count{\(labels)} \(figures.count)")
            }
        }
        family("servicehost_deliveries_total", "counter", "Events delivered to a service.", deliveries)
        family(
            "servicehost_delivery_failures_total", "counter", "Deliveries a service answered with an error.", failures)
        family("servicehost_delivery_max_seconds", "gauge", "The longest delivery so far.", longest)
        family(
            "servicehost_delivery_duration_seconds", "histogram", "How long a service took to handle an event.",
            histogram)
        return out
    }

    /// A label value, quoted and escaped (backslash, quote, newline).
    static func label(_ text: String) -> String {
        var out = "\""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out + "\""
    }

    /// Nanoseconds as seconds, in the format's float syntax.
    static func seconds(_ nanoseconds: UInt64) -> String { "\(Double(nanoseconds) / 1e9)" }
}
