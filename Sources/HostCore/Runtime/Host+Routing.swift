import ServiceABI

extension Host {
    /// openURL to the services that may claim `url`, in service order, until one claims it.
    ///
    /// Services that declared URL claims are the only ones asked for matching URLs (a
    /// scheme-and-host claim beats a scheme claim) and are asked for nothing else; URLs
    /// nobody claims go to the services without URL claims.
    public func open(_ url: OpenURLInput, fromLaunch: Bool = false) -> EventOutcome {
        let arena = EventArena()
        return withExtendedLifetime(arena) { open(url, data: arena.openURL(url, fromLaunch: fromLaunch)) }
    }

    /// openURL with its data already built (a scene's URL falling back keeps its flags).
    func open(_ url: OpenURLInput, data: UnsafePointer<sh_open_url>) -> EventOutcome {
        let candidates = claimants(.openURL) { service in service.metadata.urls.map(url.match).max() }
        return firstClaim(.openURL, candidates, data: UnsafeRawPointer(data), what: "URL \(url.url)")
    }

    /// continueUserActivity, routed like openURL by activity type.
    public func continueActivity(_ activity: UserActivityInput, fromLaunch: Bool = false) -> EventOutcome {
        let arena = EventArena()
        return withExtendedLifetime(arena) {
            continueActivity(activity, data: arena.activity(activity, fromLaunch: fromLaunch))
        }
    }

    /// continueUserActivity with its data already built.
    func continueActivity(_ activity: UserActivityInput, data: UnsafePointer<sh_user_activity>) -> EventOutcome {
        let candidates = claimants(.continueUserActivity) { service in activity.match(service.metadata.activities) }
        return firstClaim(.continueUserActivity, candidates, data: UnsafeRawPointer(data),
                          what: "activity \(activity.type)")
    }

    /// The handlers of `kind` to ask, in order: those whose claims match best, or when no
    /// claim matches, those without claims. `score` is nil for a service without claims;
    /// services `include` rejects are never asked.
    func claimants(_ kind: EventKind, include: (Int) -> Bool = { _ in true }, score: (ServiceSlot) -> Int?) -> [Int] {
        let scored = handlerIndexes(kind).filter(include).map { ($0, score(services[$0])) }
        let best = scored.compactMap(\.1).max() ?? 0
        if best > 0 { return scored.filter { $0.1 == best }.map(\.0) }
        return scored.filter { $0.1 == nil }.map(\.0)
    }

    /// Asks `candidates` in order until one claims; logs when none does unless `quiet`.
    func firstClaim(_ kind: EventKind, _ candidates: [Int], data: UnsafeRawPointer, what: String,
                    scene: String? = nil, quiet: Bool = false) -> EventOutcome {
        var outcome = EventOutcome(event: kind, handled: false)
        for index in candidates {
            outcome.receivers.append(services[index].id)
            // The first that claims it wins; no later service is asked.
            if call(index, kind, data, scene: scene) == SH_OK {
                outcome.handled = true
                outcome.handledBy = services[index].id
                break
            }
        }
        drainMailbox()
        if !outcome.handled {
            outcome.note = candidates.isEmpty ? "no service handles \(kind.name) for \(what)"
                : "no service claimed the \(what)"
            if !quiet { log.info("host", outcome.note!) }
        }
        return outcome
    }
}
