import Glibc
import ServiceABI
import Synchronization

/// Carries out, in the host, what a worker's services ask of their `sh_host` tables: each
/// call (HostCallFrame) goes to the HostFunctions the host made for that service, the ones
/// its table would reach in process, so a service in a worker reaches exactly what it would
/// reach in the host. Also relays completions.
///
/// Every call runs on the main thread, where the host reads its workers' channels
/// (WorkerConnection), in the order the worker made them.
final class HostCallForwarder: Sendable {
    private enum CompletionState { case inFlight, awaiting, answered }
    /// A copy of the host's completion, made when the event was sent: its host_data holds the
    /// pool slot's generation, so a call relayed after the slot was reused is recognised as
    /// stale instead of answering the slot's newer event.
    struct CompletionCopy: @unchecked Sendable {  // Sendable: an immutable copy whose `complete` is [thread-safe]
        let table: sh_completion

        func complete(_ result: Int32, _ json: [UInt8]?) {
            var copy = table
            let complete = table.complete
            withUnsafePointer(to: &copy) { pointer in
                if let json {
                    json.withUnsafeBytes {
                        complete?(pointer, result, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count)
                    }
                } else {
                    complete?(pointer, result, nil, 0)
                }
            }
        }
    }
    private struct Completion {
        let copy: CompletionCopy
        var state: CompletionState
    }

    private let channel: FrameChannel
    // Each service's host functions, by its index in the worker; set when it attaches.
    private let services = Locked<[Int: any HostFunctions]>([:])
    // Completions the worker's services hold, by id. Kept after they are answered, so a second
    // call still reaches the host's record (which logs it), as it would in-process; dropped
    // once `kept` newer ones were given, when the host's pool may have reused the slot.
    private let completions = Locked<(next: UInt32, table: [UInt32: Completion])>((0, [:]))
    private static let kept = UInt32(CompletionPool.quarantine)

    init(channel: FrameChannel) { self.channel = channel }

    /// What the worker's service `service` reaches: the functions its own `sh_host` would call
    /// in process.
    func setFunctions(_ functions: any HostFunctions, for service: Int) {
        services.withLock { $0[service] = functions }
    }

    private func functions(_ service: Int) -> (any HostFunctions)? { services.withLock { $0[service] } }

    // MARK: Completions

    /// An id for the completion of an event about to be sent.
    func register(_ completion: UnsafePointer<sh_completion>) -> UInt32 {
        completions.withLock { state in
            state.next &+= 1
            if state.next == 0 { state.next = 1 }
            state.table[state.next] = Completion(copy: CompletionCopy(table: completion.pointee), state: .inFlight)
            state.table[state.next &- Self.kept] = nil
            return state.next
        }
    }

    /// The event with completion `id` returned `result`: the host now waits for the answer,
    /// unless a negative result said there will be none (the host counts it failed itself).
    func eventReturned(completion id: UInt32, result: Int32) {
        completions.withLock { state in
            guard state.table[id]?.state == .inFlight else { return }
            state.table[id]?.state = result < 0 ? .answered : .awaiting
        }
    }

    /// The worker died: every answer the host still waits for counts as failed now, rather
    /// than at its deadline. Returns how many.
    @discardableResult
    func failOutstanding() -> Int {
        let waiting = completions.withLock { state -> [CompletionCopy] in
            var waiting: [CompletionCopy] = []
            for (id, entry) in state.table where entry.state != .answered {
                if entry.state == .awaiting { waiting.append(entry.copy) }
                state.table[id]?.state = .answered
            }
            return waiting
        }
        for completion in waiting { completion.complete(Int32(SH_ERROR), nil) }
        return waiting.count
    }

    // MARK: Calls

    /// A one-way call, or a `call` frame (``answer(_:)``).
    func perform(_ frame: Frame) throws(WireError) {
        guard frame.type == .complete else { return try answer(frame) }
        var r = frame.reader
        let id = try r.u32("completion")
        let result = try r.i32("result")
        let json = try r.optionalBlob("answer")
        try r.finish("complete")
        enum Known {
            case given(CompletionCopy)
            case dropped, never
        }
        let known = completions.withLock { state -> Known in
            guard let entry = state.table[id] else {
                // Ids count up from 1: one at most `next` that is gone was dropped long ago.
                return id != 0 && id <= state.next ? .dropped : .never
            }
            state.table[id]?.state = .answered
            return .given(entry.copy)
        }
        switch known {
        case .given(let completion): completion.complete(result, json)
        case .dropped: break  // a call long after its event: nothing waits for it
        case .never: throw .malformed("completion \(id) was never given")
        }
    }

    /// Carries out a worker's host function frame on the service's HostFunctions and, for a
    /// `call` frame, sends the reply. [main-thread] calls (HostCall.needsMainThread) must run
    /// on the main thread (the host runs them all there).
    func answer(_ frame: Frame) throws(WireError) {
        let (service, call) = try HostCallFrame.read(frame)
        let target = functions(service)
        if case .request(let id, let name, let json) = call {
            return forward(request: id, name: name, json: json, to: target)
        }
        if case .deploy(let id, let directory, let probation) = call {
            return forward(deploy: id, directory: directory, probation: probation, to: target)
        }
        let reply: HostCallReply
        if case .beginBackgroundTask(let name) = call {
            reply = .result(Int32(bitPattern: beginTask(name: name, service: service, on: target)))
        } else {
            guard let performed = try call.perform(on: target) else { return }
            reply = performed
        }
        var w = WireWriter()
        reply.write(into: &w)
        try channel.send(&w, .reply, sequence: frame.sequence)
    }

    /// Opens a background task for the worker's service `service`; its expiry goes back to the
    /// worker as a `taskExpired` frame, whose handler runs there (WorkerTasks). 0: none opened.
    private func beginTask(name: [UInt8], service: Int, on functions: (any HostFunctions)?) -> UInt32 {
        guard let functions, let name = HostArguments.name(name) else { return 0 }
        let channel = channel
        return functions.beginBackgroundTask(name: name) { task in
            // A lost worker has no handler to run; its death is handled elsewhere.
            var w = WireWriter()
            w.u32(UInt32(truncatingIfNeeded: service))
            w.u32(task)
            try? channel.send(&w, .taskExpired)
        }
    }

    /// How the reply to a worker's request (or deploy) `id` goes back: a `requestReply` frame,
    /// sent on the host's main thread, where it is made.
    private func replying(to id: UInt32) -> @Sendable (RequestReply) -> Void {
        let channel = channel
        return { reply in
            // A lost worker cannot be answered; its death is handled elsewhere.
            var w = WireWriter()
            w.u32(id)
            w.i32(reply.result)
            w.blob(reply.json)
            try? channel.send(&w, .requestReply)
        }
    }

    /// Hands a worker's deploy (extension deploy/1) to its service's HostFunctions, checked as
    /// DeployExtension checks it; the outcome goes back as a `requestReply` frame.
    private func forward(deploy id: UInt32, directory: [UInt8], probation: UInt32, to functions: (any HostFunctions)?) {
        let send = replying(to: id)
        guard let functions, let path = DeployExtension.validDirectory(directory),
            DeployExtension.isValidProbation(probation)
        else {
            return send(Host.settlement(SH_DEPLOY_REFUSED, error: "the host refused the deploy: invalid arguments"))
        }
        let result = functions.deploy(directory: path, probationMilliseconds: probation, done: send)
        if result != SH_OK {
            send(Host.settlement(SH_DEPLOY_REFUSED, error: "the host refused the deploy (\(result))"))
        }
    }

    /// Hands a worker's request to its service's HostFunctions; the reply goes back to the
    /// worker as a `requestReply` frame (on the host's main thread, where it is made).
    private func forward(request id: UInt32, name: [UInt8], json: [UInt8]?, to functions: (any HostFunctions)?) {
        let send = replying(to: id)
        // Refused at once (an empty name, no such service): the host will not call back.
        guard let functions, let name = HostArguments.name(name) else {
            return send(.refused(Int32(SH_INVALID), "the host refused the request"))
        }
        let result = functions.request(name: name, json: json, reply: send)
        if result != SH_OK { send(.refused(result, "the host refused the request")) }
    }
}
