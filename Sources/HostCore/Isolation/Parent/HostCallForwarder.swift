import Glibc
import ServiceABI
import Synchronization

/// Carries out, in the host, what a worker's services ask of their `sh_host` tables: each
/// call goes to the real table the host made for that service (HostTable), so a service in a
/// worker reaches exactly what it would reach in the host. Also relays completions.
///
/// Thread-safe calls (log, post, app_state, subscribe, …) run on the worker's reader
/// thread, as the ABI allows; [main-thread] ones (the store) run on the main thread.
final class HostCallForwarder: Sendable {
    /// A C pointer the host never frees, shared across threads.
    struct Pointer<T>: @unchecked Sendable {  // Sendable: the pointee is the host's, valid for the process lifetime, and thread-safe where it is called from other threads
        let raw: UnsafePointer<T>
    }

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
                    json.withUnsafeBytes { complete?(pointer, result, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
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
    // The host's table of each service, by its index in the worker; set when it attaches.
    private let tables = Locked<[Int: Pointer<sh_host>]>([:])
    // Completions the worker's services hold, by id. Kept after they are answered, so a second
    // call still reaches the host's record (which logs it), as it would in-process; dropped
    // once `kept` newer ones were given, when the host's pool may have reused the slot.
    private let completions = Locked<(next: UInt32, table: [UInt32: Completion])>((0, [:]))
    private static let kept = UInt32(CompletionPool.quarantine)

    init(channel: FrameChannel) { self.channel = channel }

    func setTable(_ table: UnsafePointer<sh_host>, for service: Int) {
        tables.withLock { $0[service] = Pointer(raw: table) }
    }

    private func table(_ service: Int) -> UnsafePointer<sh_host>? { tables.withLock { $0[service]?.raw } }

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

    /// A one-way call or a thread-safe call with an answer, on the reader thread.
    func perform(_ frame: Frame) throws(WireError) {
        var r = frame.reader
        switch frame.type {
        case .complete:
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
        case .log:
            let service = Int(try r.u32("service"))
            let level = try r.i32("level")
            let message = try r.blob("message")
            try r.finish("log")
            guard let table = table(service) else { return }
            cString(message) { table.pointee.log?(table, level, $0) }
        case .post:
            let service = Int(try r.u32("service"))
            let name = try r.blob("name")
            let json = try r.optionalBlob("payload")
            try r.finish("post")
            guard let table = table(service) else { return }
            cString(name) { name in
                if let json {
                    _ = json.withUnsafeBytes { table.pointee.post?(table, name, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
                } else {
                    _ = table.pointee.post?(table, name, nil, 0)
                }
            }
        case .subscribe:
            let service = Int(try r.u32("service"))
            let name = try r.blob("name")
            try r.finish("subscribe")
            guard let table = table(service) else { return }
            cString(name) { _ = table.pointee.subscribe?(table, $0) }
        case .registerForRemoteNotifications:
            let service = Int(try r.u32("service"))
            try r.finish("register")
            guard let table = table(service) else { return }
            _ = table.pointee.register_for_remote_notifications?(table)
        case .request:
            let service = Int(try r.u32("service"))
            let id = try r.u32("request id")
            let name = try r.blob("name")
            let json = try r.optionalBlob("payload")
            try r.finish("request")
            forward(request: id, name: name, json: json, for: service)
        case .call:
            try answer(frame)
        default:
            throw .malformed("a worker sent a \(frame.type) frame")
        }
    }

    /// Hands a worker's request to the host's table of its service; the reply goes back to
    /// the worker as a `requestReply` frame (on the host's main thread, where it is made).
    private func forward(request id: UInt32, name: [UInt8], json: [UInt8]?, for service: Int) {
        let back = RequestBack(channel: channel, id: id)
        let context = Unmanaged.passRetained(back).toOpaque()
        let reply: sh_request_reply_fn = { context, result, text, length in
            guard let context else { return }
            let back = Unmanaged<RequestBack>.fromOpaque(context).takeRetainedValue()
            back.send(result, text.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? [])
        }
        let result =
            table(service).map { table in
                cString(name) { name in
                    guard let json else { return table.pointee.request?(table, name, nil, 0, reply, context) ?? Int32(SH_UNSUPPORTED) }
                    return json.withUnsafeBytes {
                        table.pointee.request?(table, name, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count, reply, context)
                            ?? Int32(SH_UNSUPPORTED)
                    }
                }
            } ?? Int32(SH_INVALID)
        // Refused at once (an empty name, no such service): the host will not call back.
        if result != SH_OK {
            Unmanaged<RequestBack>.fromOpaque(context).release()
            back.send(result, Array(#"{"error":"the host refused the request"}"#.utf8))
        }
    }

    /// Where one worker request's reply goes.
    private final class RequestBack: Sendable {
        let channel: FrameChannel
        let id: UInt32
        init(channel: FrameChannel, id: UInt32) {
            self.channel = channel
            self.id = id
        }

        /// A lost worker cannot be answered; its death is handled elsewhere.
        func send(_ result: Int32, _ json: [UInt8]) {
            var w = WireWriter()
            w.u32(id)
            w.i32(result)
            w.blob(json)
            try? channel.send(&w, .requestReply)
        }
    }

    /// Which host function a `call` frame asks for.
    static func callKind(_ frame: Frame) throws(WireError) -> HostCall {
        var r = frame.reader
        _ = try r.u32("service")
        let raw = try r.u8("call")
        guard let call = HostCall(rawValue: raw) else { throw .malformed("unknown host call \(raw)") }
        return call
    }

    /// Carries out a `call` frame and sends the reply. Store calls must run on the main thread.
    func answer(_ frame: Frame) throws(WireError) {
        var r = frame.reader
        let service = Int(try r.u32("service"))
        let raw = try r.u8("call")
        guard let call = HostCall(rawValue: raw) else { throw .malformed("unknown host call \(raw)") }
        var w = WireWriter()
        guard let table = table(service) else {
            w.i32(Int32(SH_INVALID))
            if call == .storeGet {
                w.u64(0)
                w.bool(false)
            }
            if call == .storeKeys { w.u32(0) }
            if call == .notificationSettings { w.u32(0) }
            return try channel.send(&w, .reply, sequence: frame.sequence)
        }
        let host = table.pointee
        switch call {
        case .appState:
            try r.finish("app_state")
            w.i32(host.app_state?(table) ?? Int32(SH_UNSUPPORTED))
        case .unsubscribe:
            let name = try r.optionalBlob("name")
            try r.finish("unsubscribe")
            w.i32(optionalCString(name) { host.unsubscribe?(table, $0) } ?? Int32(SH_UNSUPPORTED))
        case .storeGet:
            let key = try r.optionalBlob("key")
            let capacity = Int(min(try r.u64("capacity"), UInt64(Wire.maxPayload - 64)))
            try r.finish("store_get")
            var buffer = [UInt8](repeating: 0, count: max(capacity, 1))
            var length = 0
            let result = optionalCString(key) { key in
                buffer.withUnsafeMutableBytes { host.store_get?(table, key, $0.baseAddress, capacity, &length) } ?? Int32(SH_UNSUPPORTED)
            }
            w.i32(result)
            w.u64(UInt64(length))
            let hasValue = result == SH_OK && length <= capacity
            w.bool(hasValue)
            if hasValue { w.blob(Array(buffer[..<length])) }
        case .storeSet:
            let key = try r.optionalBlob("key")
            let value = try r.optionalBlob("value")
            let rawLength = try r.u64("length")
            try r.finish("store_set")
            // A length no buffer can have is a worker that lies, not a value to store.
            guard let length = Int(exactly: rawLength) else { throw .malformed("store_set of \(rawLength) bytes") }
            w.i32(
                optionalCString(key) { key in
                    guard let value else { return host.store_set?(table, key, nil, length) }
                    return value.withUnsafeBytes { host.store_set?(table, key, $0.baseAddress, $0.count) }
                } ?? Int32(SH_UNSUPPORTED))
        case .storeRemove:
            let key = try r.optionalBlob("key")
            try r.finish("store_remove")
            w.i32(optionalCString(key) { host.store_remove?(table, $0) } ?? Int32(SH_UNSUPPORTED))
        case .storeKeys:
            try r.finish("store_keys")
            final class Keys { var list: [[UInt8]] = [] }
            let keys = Keys()
            let result = withExtendedLifetime(keys) {
                host.store_keys?(
                    table,
                    { context, key in
                        guard let context, let key else { return }
                        let keys = Unmanaged<Keys>.fromOpaque(context).takeUnretainedValue()
                        keys.list.append(Array(UnsafeRawBufferPointer(start: key, count: strlen(key))))
                    }, Unmanaged.passUnretained(keys).toOpaque()) ?? Int32(SH_UNSUPPORTED)
            }
            w.i32(result)
            w.u32(UInt32(keys.list.count))
            for key in keys.list { w.blob(key) }
        case .notificationSettings:
            try r.finish("notification_settings")
            var allowed: UInt32 = 0
            w.i32(host.notification_settings?(table, &allowed) ?? Int32(SH_UNSUPPORTED))
            w.u32(allowed)
        case .requestAuthorization:
            let options = try r.u32("options")
            try r.finish("request_authorization")
            w.i32(host.request_authorization?(table, options) ?? Int32(SH_UNSUPPORTED))
        case .setSceneRestoration:
            let scene = try r.u64("scene")
            let json = try r.optionalBlob("activity")
            try r.finish("set_scene_restoration")
            let result =
                json.map { bytes in
                    bytes.withUnsafeBytes { host.set_scene_restoration?(table, scene, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
                } ?? host.set_scene_restoration?(table, scene, nil, 0)
            w.i32(result ?? Int32(SH_UNSUPPORTED))
        }
        try channel.send(&w, .reply, sequence: frame.sequence)
    }

    /// Runs `body` with `bytes` as a NUL-terminated C string, or NULL.
    private func optionalCString<R>(_ bytes: [UInt8]?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let bytes else { return body(nil) }
        return cString(bytes) { body($0) }
    }

    /// Runs `body` with `bytes` as a NUL-terminated C string.
    private func cString<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
        (bytes + [0]).withUnsafeBytes { body($0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
    }
}
