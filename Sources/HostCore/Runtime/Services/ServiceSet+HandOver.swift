import Locking
import ServiceABI

/// The state a service hands to the instance that replaces it (issue 42 item 4): its bytes and
/// the id and version of the instance that wrote them.
struct HandedOverState: Sendable, Equatable {
    var bytes: [UInt8]
    var serviceID: String
    var version: String
}

/// State across a reload: a service about to be replaced (a reload's new version or changed
/// configuration, a restart by request, its new worker) that handles `willReload` is asked for
/// its state before it is taken down, and the host hands the bytes to the replacing instance's
/// launch events (`sh_launch_options.restored_state`, version 2). A service that does not handle
/// it is caught up as before. Nothing is asked after a crash: the instance is gone.
extension ServiceSet {
    /// The largest state handed over: `SH_RELOAD_STATE_MAX`, 1 MiB.
    nonisolated static let largestHandedOverState = Int(SH_RELOAD_STATE_MAX)

    /// Asks each of `leaving` (running services, in service order) that handles willReload
    /// for its state, and returns those handed over by service id. A state over
    /// ``largestHandedOverState`` is refused and logged; so is a completion missing when the
    /// event returned (the replacement launches now and cannot wait for it).
    func askForState(of leaving: [ServiceSlot], state: AppState) -> [String: HandedOverState] {
        var handed: [String: HandedOverState] = [:]
        for slot in leaving where slot.metadata.events.contains(.willReload) {
            if let given = askForState(of: slot, state: state) { handed[slot.id] = given }
        }
        return handed
    }

    private func askForState(of slot: ServiceSlot, state: AppState) -> HandedOverState? {
        guard let index = slots.firstIndex(where: { $0 === slot }) else { return nil }
        // Filled by the completion, on the thread that calls it: the main thread in process, or
        // the main thread reading the worker's `complete` frame before its result.
        let answer = Locked<(result: Int32, bytes: [UInt8]?)?>(nil)
        let trace = dispatcher.trace
        let record = CompletionRecord(
            answerID: 0, serviceID: slot.id, event: .willReload, seq: dispatcher.sequence &+ 1, log: log
        ) { record, result, json in
            trace?.recordCompletion(seq: record.seq, event: record.event, service: record.serviceID, result: result)
            answer.withLock { $0 = (result, json) }
        }
        let returned = dispatcher.call(index, .willReload, nil, completion: UnsafePointer(record.table), state: state)
            .result
        // From now on a call is late: the pool logs and drops it.
        _ = record.expire()
        guard let (result, bytes) = answer.withLock({ $0 }) else {
            if returned >= 0 { refused(slot, bytes: 0, reason: "notCompleted") }
            return nil
        }
        guard result == SH_OK, let bytes else { return nil }
        guard bytes.count <= Self.largestHandedOverState else {
            refused(slot, bytes: bytes.count, reason: "tooLarge")
            return nil
        }
        log.info(
            "host",
            "service \(slot.id) \(slot.metadata.version) handed over \(bytes.count) bytes of state to its replacement",
            event: .reloadStateHandedOver, .string("service", slot.id), .int("bytes", bytes.count),
            .string("version", slot.metadata.version))
        return HandedOverState(bytes: bytes, serviceID: slot.id, version: slot.metadata.version)
    }

    private func refused(_ slot: ServiceSlot, bytes: Int, reason: String) {
        let why =
            reason == "tooLarge"
            ? "its state of \(bytes) bytes is over the limit of \(Self.largestHandedOverState) bytes"
            : "it did not complete willReload before returning"
        log.error(
            "host", "service \(slot.id): \(why); its replacement starts without a state",
            event: .reloadStateRefused, .string("service", slot.id), .int("bytes", bytes),
            .int("limit", Self.largestHandedOverState), .string("reason", reason))
    }
}
