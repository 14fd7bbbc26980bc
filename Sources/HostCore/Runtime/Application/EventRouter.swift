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
    /// Lazy services a URL, an activity or a scene may open first.
    let dormant: DormantServices
    let log: Log

    init(dispatcher: Dispatcher, bus: NotificationBus, dormant: DormantServices, log: Log) {
        self.dispatcher = dispatcher
        self.bus = bus
        self.dormant = dormant
        self.log = log
    }

    /// openURL with its data already built.
    func open(_ url: OpenURLInput, data: UnsafePointer<sh_open_url>) -> EventOutcome {
        let what = "URL \(url.url)"
        let candidates = claimants(.openURL, for: what) { service in service.urls.map(url.match).max() }
        return firstClaim(.openURL, candidates, data: UnsafeRawPointer(data), what: what)
    }

    /// continueUserActivity with its data already built.
    func continueActivity(_ activity: UserActivityInput, data: UnsafePointer<sh_user_activity>) -> EventOutcome {
        let what = "activity \(activity.type)"
        let candidates = claimants(.continueUserActivity, for: what) { service in activity.match(service.activities) }
        return firstClaim(.continueUserActivity, candidates, data: UnsafeRawPointer(data), what: what)
    }

    /// The handlers of `kind` to ask, in order: those whose claims match best, or when no
    /// claim matches, those without claims. `score` is nil for a service without claims;
    /// services `include` rejects are never asked. A lazy service that would be asked is
    /// opened first (`what` names the event that opened it), so the order is as if it had
    /// been eager.
    func claimants(
        _ kind: EventKind, for what: String, include: (ServiceMetadata) -> Bool = { _ in true },
        score: (ServiceMetadata) -> Int?
    ) -> [Int] {
        let services = dispatcher.services
        let scored = dispatcher.handlers(kind).filter { include(services[$0].metadata) }.map {
            ($0, score(services[$0].metadata))
        }
        if !dormant.entries.isEmpty {
            let waiting = dormant.entries.map(\.metadata).filter { $0.events.contains(kind) && include($0) }
            let best = (scored.compactMap(\.1) + waiting.compactMap(score)).max() ?? 0
            if waiting.contains(where: { best > 0 ? score($0) == best : score($0) == nil }) {
                dormant.wake(kind, what) { include($0) && (best > 0 ? score($0) == best : score($0) == nil) }
                return claimants(kind, for: what, include: include, score: score)
            }
        }
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
            if !quiet {
                log.info(
                    "host", outcome.note!, event: .routeUnclaimed, .string("event", kind.name), .string("what", what))
            }
        }
        return outcome
    }
}
