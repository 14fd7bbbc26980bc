import ServiceABI

extension EventRouter {
    /// performActionForShortcutItem `id` to the services that claim it (`SH_CLAIM_SHORTCUT`), in
    /// service order, until one handles it; as a URL, an id nobody claims goes to the handlers
    /// that claim no quick action. The item's title is the first claimant's.
    func performAction(_ id: String, fromLaunch: Bool) -> EventOutcome {
        let what = "quick action \(id)"
        let candidates = claimants(.performActionForShortcutItem, for: what) { service in
            service.shortcuts.isEmpty ? nil : service.shortcuts.contains { $0.id == id } ? 1 : 0
        }
        let shortcut =
            candidates.first.flatMap { dispatcher.services[$0].metadata.shortcuts.first { $0.id == id } }
            ?? Shortcut(id: id, title: id)
        let arena = EventArena()
        return withExtendedLifetime(arena) {
            let data = arena.shortcutItem(shortcut, fromLaunch: fromLaunch)
            return firstClaim(.performActionForShortcutItem, candidates, data: UnsafeRawPointer(data), what: what)
        }
    }
}
