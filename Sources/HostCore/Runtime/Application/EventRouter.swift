import ServiceABI

/// Events one service claims: openURL and continueUserActivity (and their scene versions),
/// offered in service order until one service claims them.
///
/// Services that declared URL claims are the only ones asked for matching URLs (a
/// scheme-and-host claim beats a scheme claim) and are asked for nothing else; URLs nobody
/// claims go to the services without URL claims. Activities are routed the same way by type.
@MainActor
final class EventRouter {
    let dispatcher: Dispatcher
    let bus: NotificationBus
    let log: Log

    init(dispatcher: Dispatcher, bus: NotificationBus, log: Log) {
        self.dispatcher = dispatcher
        self.bus = bus
        self.log = log
    }

    /// openURL with its data already built.
    func open(_ url: OpenURLInput, data: UnsafePointer<sh_open_url>) -> EventOutcome {
        let candidates = claimants(.openURL) { service in service.metadata.urls.map(url.match).max() }
        return firstClaim(.openURL, candidates, data: UnsafeRawPointer(data), what: "URL \(url.url)")
    }

    /// continueUserActivity with its data already built.
    func continueActivity(_ activity: UserActivityInput, data: UnsafePointer<sh_user_activity>) -> EventOutcome {
        let candidates = claimants(.continueUserActivity) { service in activity.match(service.metadata.activities) }
        return firstClaim(
            .continueUserActivity, candidates, data: UnsafeRawPointer(data),
            what: "activity \(activity.type)")
    }

    /// The handlers of `kind` to ask, in order: those whose claims match best, or when no
    /// claim matches, those without claims. `score` is nil for a service without claims;
    /// services `include` rejects are never asked.
    func claimants(_ kind: EventKind, include: (Int) -> Bool = { _ in true }, score: (ServiceSlot) -> Int?) -> [Int] {
        let services = dispatcher.services
        let scored = dispatcher.handlers(kind).filter(include).map { ($0, score(services[$0])) }
        let best = scored.compactMap(\.1).max() ?? 0
        if best > 0 { return scored.filter { $0.1 == best }.map(\.0) }
        return scored.filter { $0.1 == nil }.map(\.0)
    }

    /// Asks `candidates` in order until one claims; logs when none does unless `quiet`.
    func firstClaim(
        _ kind: EventKind, _ candidates: [Int], data: UnsafeRawPointer, what: String,
        scene: String? = nil, quiet: Bool = false
    ) -> EventOutcome {
        var outcome = EventOutcome(event: kind, handled: false)
        for index in candidates {
            outcome.receivers.append(dispatcher.services[index].id)
            // The first that claims it wins; no later service is asked.
            if dispatcher.call(index, kind, data, scene: scene).result == SH_OK {
                outcome.handled = true
                outcome.handledBy = dispatcher.services[index].id
                break
            }
        }
        bus.drain()
        if !outcome.handled {
            outcome.note =
                candidates.isEmpty
                ? "no service handles \(kind.name) for \(what)"
                : "no service claimed the \(what)"
            if !quiet { log.info("host", outcome.note!, event: "route.unclaimed", .string("event", kind.name), .string("what", what)) }
        }
        return outcome
    }
}
