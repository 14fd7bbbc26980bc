/// The services a load opens or leaves dormant: those of the plan not kept running.
///
/// Usually every service found (a start with nothing disabled or left out), and then no set is
/// made: asking it hashed each id twice per plugin at every start.
struct WantedServices: Sendable {
    /// The ids, or nil for every service found.
    private let ids: Set<String>?
    /// How many there are.
    let count: Int

    /// The ids of `order` not in `keeping`. `found`: the inspected files, whose services `order`
    /// was planned from (each id once): when `order` holds as many ids as they declare and
    /// nothing is kept, it holds them all.
    init(_ order: [String], keeping: [String: ServiceSlot], found: [PluginInspector.Inspected]) {
        count = order.count - (keeping.isEmpty ? 0 : order.count { keeping[$0] != nil })
        var declared = 0
        for plugin in found { declared += plugin.metadata.services.count }
        ids = keeping.isEmpty && order.count == declared ? nil : Set(order).subtracting(keeping.keys)
    }

    /// Whether `id` is wanted.
    func contains(_ id: String) -> Bool { ids?.contains(id) ?? true }
}
