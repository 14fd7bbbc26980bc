import Glibc
import ServiceABI

/// Services made in this process rather than loaded from a plugin file: ServiceKitTesting's
/// TestHost attaches the service under test here, so a unit test drives the real host (the same
/// Application, Dispatcher and AnswerBook, on a ManualClock) and sees its order, merging and
/// deadlines. `package`: for the package's own testing library, not for plugins.
extension Host {
    /// Attaches `descriptor` as service `id`, handling `events` and receiving the notifications
    /// posted under `subscriptions`, after the services already running. Its `sh_host` is the
    /// one adapter over `functions(context)`, where `context` is what a loaded service's table
    /// calls. Returns the result of the descriptor's `attach` (negative: not attached).
    package func attachInProcess(
        id: String, events: [EventKind], subscriptions: [String], descriptor: UnsafePointer<sh_service>,
        functions: (any HostFunctions) -> any HostFunctions
    ) -> Int32 {
        let metadata = ServiceMetadata(
            id: id, name: id, version: "0.0.0", events: EventMask(kinds: events), priority: 0,
            subscriptions: subscriptions)
        let info = LoadedServiceInfo(
            metadata: metadata, path: "", identity: FileIdentity(Glibc.stat()), hostMade: descriptor)
        var failure: LoadFailure?
        guard let slot = serviceSet.attach(info, cost: StartupCost(), failure: &failure, functions: functions) else {
            if case .attachFailed(_, let result)? = failure?.reason { return result }
            return Int32(SH_ERROR)
        }
        serviceSet.startOrder.append(id)
        serviceSet.insertInStartOrder([slot])
        return Int32(SH_OK)
    }

    /// Makes in-process service `id` the answerer of requests named `name`, as an
    /// `SH_CLAIM_ANSWER` in its metadata would (a test names the requests it sends).
    package func claimInProcess(answer name: String, service id: String) {
        guard let slot = serviceSet.slot(id), !slot.metadata.answers.contains(name) else { return }
        var metadata = slot.metadata
        metadata.answers.append(name)
        let info = LoadedServiceInfo(
            metadata: metadata, path: slot.path, identity: slot.identity, descriptor: slot.descriptor,
            attach: nil, handleEvent: slot.handleEvent)
        let claimed = ServiceSlot(info, context: slot.context, configuration: slot.configuration)
        dispatcher.setServices(serviceSet.slots.map { $0 === slot ? claimed : $0 })
    }

    /// Posts notification `name` as service `sender` would through `sh_host.post`, and
    /// delivers it now, in service order, to every other subscriber.
    package func post(name: String, sender: String, json: [UInt8]?) {
        bus.mailbox.send(.post(name: name, sender: sender, json: json))
        bus.drain()
    }

    /// Asks the service that answers `name` from `sender`, as `sh_host.request` does (the
    /// reply to the asker is left out: a test observes the answerer's completion).
    package func request(_ name: String, from sender: String, json: [UInt8]?) {
        bus.mailbox.send(.request(ServiceRequest(name: name, from: sender, json: json) { _ in }))
        bus.drain()
    }

    /// Decides a notification authorization still not determined, as the user would at the
    /// system's prompt: callable from any thread, saved and announced (didChangeNotificationAuthorization)
    /// on the main thread after the current event. Takes and returns an sh_authorization_status;
    /// returns the status after the decision.
    package var decideAuthorization: @Sendable (Int32) -> Int32 {
        let authorization = bus.authorization
        let mailbox = bus.mailbox
        return { raw in
            guard let status = AuthorizationStatus(rawValue: raw), status != .notDetermined,
                authorization.current.status == .notDetermined
            else { return authorization.current.status.rawValue }
            if authorization.set(status) { mailbox.send(.authorizationChanged) }
            return authorization.current.status.rawValue
        }
    }
}

extension RequestReply {
    /// A reply as a test's stub answerer gives it (ServiceKitTesting's `requestAnswers`).
    package static func testReply(result: Int32, json: [UInt8]) -> RequestReply {
        RequestReply(result: result, json: json)
    }
}
