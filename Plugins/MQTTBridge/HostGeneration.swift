import ServiceJSON

/// What the host runs, from its `deploy` `status` reply: the current generation (nil: its
/// plugin directories), the folder it was deployed from, and whether a deploy is in probation.
/// The fleet's record says what the fleet applied; a deploy or a rollback by hand since then
/// (`host ctl deploy`, `host ctl rollback`) makes them differ, and the report says so (drift).
struct HostGeneration: Sendable, Equatable {
    var current: Int?
    var from: String?
    var inProbation: Bool

    /// Nil when `deploy` is not a status (a host that refused the request).
    init?(_ deploy: JSONValue?) {
        guard let deploy, let current = deploy["current"] else { return nil }
        self.current = current.intValue
        inProbation = deploy["probation"].map { $0 != .null } ?? false
        from =
            (deploy["generations"]?.arrayValue ?? []).first {
                $0["generation"]?.intValue == current.intValue && $0["outcome"]?.stringValue == "applied"
            }?["from"]?.stringValue
    }

    init(current: Int?, from: String? = nil, inProbation: Bool = false) {
        self.current = current
        self.from = from
        self.inProbation = inProbation
    }

    /// Whether the host runs another generation than the one the fleet last applied (`record`):
    /// not while a deploy is in probation (the fleet's own runs then, or it waits for one by
    /// hand), nor for a record that applied a bundle without knowing its generation.
    func drifted(from record: FleetRecord) -> Bool {
        guard !inProbation, record.running == nil || record.runningGeneration != nil else { return false }
        return current != record.runningGeneration
    }
}
