import ServiceABI
import ServiceJSON

extension Host {
    /// Posts a notification from the host (a control client): delivered now to every
    /// subscribed service, in service order.
    public func post(name: String, payload: JSONValue?) throws(InputError) -> EventOutcome {
        guard !name.isEmpty else { throw InputError("a notification needs a name") }
        return deliverNotification(name: name, sender: "host", json: payload.map { Array($0.serialized.utf8) })
    }

    /// Handles what services sent from any thread: notifications and token requests, in the
    /// order sent. Messages sent while draining wait for the next round, so a chatty pair of
    /// services cannot starve the main queue.
    public func drainMailbox() {
        for message in mailbox.takeAll() {
            switch message {
            case .post(let name, let sender, let json):
                _ = deliverNotification(name: name, sender: sender, json: json)
            case .tokenRequest(let service):
                deliverToken(to: service)
            }
        }
    }

    private func deliverNotification(name: String, sender: String, json: [UInt8]?) -> EventOutcome {
        let indexes = handlerIndexes(.notification).filter { index in
            services[index].id != sender && services[index].isSubscribed(to: name)
        }
        var outcome = EventOutcome(event: .notification, handled: !indexes.isEmpty,
                                   note: indexes.isEmpty ? "no service subscribes to \(name)" : nil)
        outcome.receivers = indexes.map { services[$0].id }
        guard !indexes.isEmpty else { return outcome }
        let arena = EventArena()
        let data = UnsafeRawPointer(arena.notification(name: name, sender: sender, json: json))
        for index in indexes { call(index, .notification, data) }
        return outcome
    }
}
