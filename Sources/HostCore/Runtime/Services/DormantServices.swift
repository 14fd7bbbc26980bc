/// Lazy services not opened yet (`SH_META_SERVICE_LAZY`, `"activation": "lazy"`).
///
/// A dormant service keeps its place in the start order and its static metadata; no code of
/// it has run (unless its file also holds an eager service: the file is then open, and the
/// dormant service's descriptor waits unattached). Whatever is about to deliver or route an
/// event that can open a lazy service calls ``wake(_:_:matching:)`` first with the rule that
/// picks who would be asked; the services it wakes are opened, attached and caught up before
/// the event, which then reaches them in their place in the order, exactly as if they had been
/// eager. Lifecycle events never wake anyone: a woken service gets them through the catch-up.
@MainActor
final class DormantServices {
    /// One service waiting for its first event. A class: an entry is handed from the plan to
    /// the start order to this list, and copying a struct of the metadata and the inspected
    /// file retained every field each time (~1 µs per lazy service at every start).
    final class Entry {
        let metadata: ServiceMetadata
        /// The file that holds it, as inspected.
        let plugin: PluginInspector.Inspected
        /// Its descriptor, when the file is already open for an eager service of it.
        let opened: LoadedServiceInfo?

        init(metadata: ServiceMetadata, plugin: PluginInspector.Inspected, opened: LoadedServiceInfo?) {
            self.metadata = metadata
            self.plugin = plugin
            self.opened = opened
        }
    }

    /// The services waiting, in start order.
    private(set) var entries: [Entry] = []
    /// Opens, attaches and catches up `entries`, woken by `trigger` (ServiceSet installs it).
    var activate: (_ entries: [Entry], _ trigger: String) -> Void = { _, _ in }
    /// Set when termination begins: nothing is opened after. A service opened then would get
    /// events with no launch before them and no willTerminate after (the app is past both).
    var isClosed = false

    /// Replaces the services waiting (a load or a reload planned them).
    func replace(with entries: [Entry]) { self.entries = entries }

    /// Opens the waiting service `id` (`host ctl service start`); false when none waits under `id`.
    func wake(_ id: String, trigger: String) -> Bool {
        guard !isClosed, let entry = take(id) else { return false }
        activate([entry], trigger)
        return true
    }

    /// The waiting service that answers the request `name`, if one does.
    func answerer(of name: String) -> Entry? { entries.first { $0.metadata.answers.contains(name) } }

    /// Removes the waiting service `id` and returns it (it is being opened).
    func take(_ id: String) -> Entry? {
        guard let index = entries.firstIndex(where: { $0.metadata.id == id }) else { return nil }
        return entries.remove(at: index)
    }

    /// `infos` came from opening `plugin`: its services still waiting keep their descriptors.
    func hold(_ infos: [LoadedServiceInfo], from plugin: PluginInspector.Inspected) {
        for (index, entry) in entries.enumerated() where entry.opened == nil && entry.plugin.path == plugin.path {
            if let info = infos.first(where: { $0.metadata.id == entry.metadata.id }) {
                entries[index] = Entry(metadata: entry.metadata, plugin: entry.plugin, opened: info)
            }
        }
    }

    /// Before `kind` is delivered or routed: opens every waiting service that handles it and
    /// that `matching` says would be asked. Costs one check when nothing waits.
    func wake(
        _ kind: EventKind, _ trigger: @autoclosure () -> String, matching: (ServiceMetadata) -> Bool = { _ in true }
    ) {
        guard !entries.isEmpty, kind.canActivate, !isClosed else { return }
        let woken = entries.filter { $0.metadata.events.contains(kind) && matching($0.metadata) }
        guard !woken.isEmpty else { return }
        entries.removeAll { entry in woken.contains { $0.metadata.id == entry.metadata.id } }
        activate(woken, trigger())
    }
}

extension ServiceMetadata {
    /// The kinds that can open a lazy service (every kind but the lifecycle's), as one mask.
    private static let activating = EventMask(kinds: EventKind.allCases.filter(\.canActivate))

    /// Whether some event can open this service when it is lazy; false for a service that
    /// handles only lifecycle events, which therefore cannot be lazy. A mask test: it is asked
    /// once per lazy service at every start (building the list of kinds cost ~0.6 µs each).
    var canBeWoken: Bool { events.intersects(Self.activating) }
}
