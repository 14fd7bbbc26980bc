import ServiceABI

/// Dependents follow their requirements (issue 42 item 2): the running services that require
/// one (the configuration's `requires`, `bindsTo`, `partOf`, or their plugin's
/// `SH_CLAIM_REQUIRES`) are told when it is about to stop (dependencyWillStop) and when it
/// started again (dependencyDidStart), as OSGi Declarative Services unbind and bind a dynamic
/// reference. Only services that ask for the event are called.
extension ServiceSet {
    /// Whether `slot` requires service `id`.
    func requires(_ slot: ServiceSlot, _ id: String) -> Bool {
        (slot.configuration?.requires.contains(id) ?? false) || slot.metadata.requires.contains { $0.id == id }
    }

    /// dependencyWillStop or dependencyDidStart of `providers`, each in turn, to the running
    /// services that require it and handle the event, in service order, leaving out `except`
    /// (services stopping or starting with them).
    func tellDependents(_ kind: EventKind, of providers: [ServiceSlot], except: Set<String>, state: AppState) {
        let handlers = dispatcher.handlers(kind)
        guard !handlers.isEmpty, state != .notRunning else { return }
        for provider in providers {
            let arena = EventArena()
            let data = UnsafeRawPointer(arena.dependency(id: provider.id, version: provider.metadata.version))
            for index in handlers {
                let dependent = slots[index]
                guard dependent !== provider, !except.contains(dependent.id), requires(dependent, provider.id) else {
                    continue
                }
                withExtendedLifetime(arena) { _ = dispatcher.call(index, kind, data, state: state) }
            }
        }
    }
}
