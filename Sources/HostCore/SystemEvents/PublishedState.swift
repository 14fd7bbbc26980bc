import ServiceJSON

/// A source's state as services read it (network, power): its JSON is the change
/// notification's payload and the answer to the current-state request, and it logs its own
/// change line.
protocol PublishedValue: Equatable {
    /// `{"online": true, "interface": "eth0"}`.
    var json: JSONValue { get }
    /// Logs that the state became this one (`network.changed`, `power.changed`).
    func logChange(to log: Log)
}

/// The current-state plumbing of a source with a state: the state at start is answered
/// (``SystemSource/stateRequest``, "network.current") and not posted, since a host that starts
/// in it changes nothing for its services; each change after that is logged, answered and
/// posted ("network.changed") to the subscribed services.
@MainActor
struct PublishedState<Value: PublishedValue> {
    /// The request the host answers with the state.
    let request: String
    /// The notification posted on each change.
    let notification: String
    /// What was answered last (nil before the start).
    private(set) var value: Value?

    /// The state at start: answered, not posted.
    mutating func start(_ value: Value, driver: AppDriver) {
        self.value = value
        driver.setCurrentState(request, value.json)
    }

    /// `fresh`, logged, answered and posted when it differs from the state answered last.
    mutating func publish(_ fresh: Value, driver: AppDriver) {
        guard fresh != value else { return }
        value = fresh
        fresh.logChange(to: driver.log)
        let json = fresh.json
        driver.setCurrentState(request, json)
        driver.post(notification, payload: json)
    }
}
