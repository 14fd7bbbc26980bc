import ServiceABI

/// The host functions a worker forwards, one case each: the worker's HostFunctions
/// (WorkerHostFunctions) writes one frame per call, and the host reads every one with
/// `read` and carries it out on the service's own HostFunctions with `perform`.
///
/// One-way calls (their answer is known in the worker) are a frame type each; calls with an
/// answer are a `call` frame with the function's number (HostCall) and are answered by a
/// `reply` frame (HostCallReply). Every payload starts with the u32 service index; optional
/// bytes are a presence byte, then a blob.
enum HostCallFrame: Sendable, Equatable {
    /// `log`: i32 level, blob message.
    case log(level: Int32, message: [UInt8])
    /// `post`: blob name, optional blob payload.
    case post(name: [UInt8], json: [UInt8]?)
    /// `subscribe`: blob name.
    case subscribe(name: [UInt8])
    /// `register_for_remote_notifications`: nothing.
    case registerForRemoteNotifications
    /// `request`: u32 request id, blob name, optional blob payload; answered later by a
    /// `requestReply` frame (WorkerRequests).
    case request(id: UInt32, name: [UInt8], json: [UInt8]?)
    /// The health extension's `report`: i32 status, optional blob reason.
    case reportHealth(status: Int32, reason: [UInt8]?)
    /// Extension deploy/1 `deploy`: u32 request id, blob directory, u32 probation in ms;
    /// answered later by a `requestReply` frame (WorkerRequests), as `request` is.
    case deploy(id: UInt32, directory: [UInt8], probationMilliseconds: UInt32)
    /// `app_state`. Reply: result.
    case appState
    /// `unsubscribe`: optional blob name. Reply: result.
    case unsubscribe(name: [UInt8]?)
    /// `store_get`: optional blob key, u64 capacity. Reply: storeRead.
    case storeGet(key: [UInt8]?, capacity: UInt64)
    /// `store_set`: optional blob key, optional blob value, u64 length. Reply: result.
    case storeSet(key: [UInt8]?, value: [UInt8]?, length: UInt64)
    /// `store_remove`: optional blob key. Reply: result.
    case storeRemove(key: [UInt8]?)
    /// `store_keys`. Reply: keys.
    case storeKeys
    /// `notification_settings`. Reply: settings.
    case notificationSettings
    /// `request_authorization`: u32 options. Reply: result.
    case requestAuthorization(options: UInt32)
    /// background-tasks/1 `begin`: blob name. Reply: result, the task id's bits; carried out
    /// by HostCallForwarder, which sends the expiry back (`taskExpired`).
    case beginBackgroundTask(name: [UInt8])
    /// background-tasks/1 `end`: u32 task. Reply: result.
    case endBackgroundTask(task: UInt32)
    /// `set_scene_restoration`: u64 scene id, optional blob activity. Reply: result.
    case setSceneRestoration(scene: UInt64, json: [UInt8]?)
    /// notifications/1 `set_categories`: blob JSON. Reply: result.
    case setNotificationCategories(json: [UInt8])

    /// The frame this call travels in, and the function's number for a `call` frame.
    var frame: (type: FrameType, call: HostCall?) {
        switch self {
        case .log: (.log, nil)
        case .post: (.post, nil)
        case .subscribe: (.subscribe, nil)
        case .registerForRemoteNotifications: (.registerForRemoteNotifications, nil)
        case .request: (.request, nil)
        case .reportHealth: (.reportHealth, nil)
        case .deploy: (.deploy, nil)
        case .appState: (.call, .appState)
        case .unsubscribe: (.call, .unsubscribe)
        case .storeGet: (.call, .storeGet)
        case .storeSet: (.call, .storeSet)
        case .storeRemove: (.call, .storeRemove)
        case .storeKeys: (.call, .storeKeys)
        case .notificationSettings: (.call, .notificationSettings)
        case .requestAuthorization: (.call, .requestAuthorization)
        case .setSceneRestoration: (.call, .setSceneRestoration)
        case .beginBackgroundTask: (.call, .beginBackgroundTask)
        case .endBackgroundTask: (.call, .endBackgroundTask)
        case .setNotificationCategories: (.call, .setNotificationCategories)
        }
    }

    // MARK: Worker side

    /// Writes the call of service `service` (the function's number included for a `call`).
    func write(service: UInt32, into w: inout WireWriter) {
        w.u32(service)
        if let call = frame.call { w.u8(call.rawValue) }
        switch self {
        case .log(let level, let message):
            w.i32(level)
            w.blob(message)
        case .post(let name, let json):
            w.blob(name)
            w.optionalBlob(json)
        case .subscribe(let name):
            w.blob(name)
        case .request(let id, let name, let json):
            w.u32(id)
            w.blob(name)
            w.optionalBlob(json)
        case .reportHealth(let status, let reason):
            w.i32(status)
            w.optionalBlob(reason)
        case .deploy(let id, let directory, let probation):
            w.u32(id)
            w.blob(directory)
            w.u32(probation)
        case .registerForRemoteNotifications, .appState, .storeKeys, .notificationSettings:
            break
        case .unsubscribe(let name):
            w.optionalBlob(name)
        case .storeGet(let key, let capacity):
            w.optionalBlob(key)
            w.u64(capacity)
        case .storeSet(let key, let value, let length):
            w.optionalBlob(key)
            w.optionalBlob(value)
            w.u64(length)
        case .storeRemove(let key):
            w.optionalBlob(key)
        case .requestAuthorization(let options):
            w.u32(options)
        case .setSceneRestoration(let scene, let json):
            w.u64(scene)
            w.optionalBlob(json)
        case .beginBackgroundTask(let name):
            w.blob(name)
        case .endBackgroundTask(let task):
            w.u32(task)
        case .setNotificationCategories(let json):
            w.blob(json)
        }
    }

    // MARK: Host side

    /// Which host function a `call` frame asks for (read before the frame is read whole, to
    /// pick the thread it runs on).
    static func callKind(_ frame: Frame) throws(WireError) -> HostCall {
        var r = frame.reader
        _ = try r.u32("service")
        return try call(&r)
    }

    private static func call(_ r: inout WireReader) throws(WireError) -> HostCall {
        let raw = try r.u8("call")
        guard let call = HostCall(rawValue: raw) else { throw .malformed("unknown host call \(raw)") }
        return call
    }

    /// Reads a worker's frame of a host function: the service's index and the call. Every
    /// frame a worker may send for a host function; anything else breaks the protocol.
    static func read(_ frame: Frame) throws(WireError) -> (service: Int, call: HostCallFrame) {
        var r = frame.reader
        let service = Int(try r.u32("service"))
        let call: HostCallFrame
        switch frame.type {
        case .log:
            call = .log(level: try r.i32("level"), message: try r.blob("message"))
            try r.finish("log")
        case .post:
            call = .post(name: try r.blob("name"), json: try r.optionalBlob("payload"))
            try r.finish("post")
        case .subscribe:
            call = .subscribe(name: try r.blob("name"))
            try r.finish("subscribe")
        case .registerForRemoteNotifications:
            call = .registerForRemoteNotifications
            try r.finish("register")
        case .request:
            call = .request(id: try r.u32("request id"), name: try r.blob("name"), json: try r.optionalBlob("payload"))
            try r.finish("request")
        case .reportHealth:
            call = .reportHealth(status: try r.i32("status"), reason: try r.optionalBlob("reason"))
            try r.finish("reportHealth")
        case .deploy:
            call = .deploy(
                id: try r.u32("request id"), directory: try r.blob("directory"),
                probationMilliseconds: try r.u32("probation"))
            try r.finish("deploy")
        case .call:
            switch try Self.call(&r) {
            case .appState:
                call = .appState
                try r.finish("app_state")
            case .unsubscribe:
                call = .unsubscribe(name: try r.optionalBlob("name"))
                try r.finish("unsubscribe")
            case .storeGet:
                call = .storeGet(key: try r.optionalBlob("key"), capacity: try r.u64("capacity"))
                try r.finish("store_get")
            case .storeSet:
                call = .storeSet(
                    key: try r.optionalBlob("key"), value: try r.optionalBlob("value"), length: try r.u64("length"))
                try r.finish("store_set")
            case .storeRemove:
                call = .storeRemove(key: try r.optionalBlob("key"))
                try r.finish("store_remove")
            case .storeKeys:
                call = .storeKeys
                try r.finish("store_keys")
            case .notificationSettings:
                call = .notificationSettings
                try r.finish("notification_settings")
            case .requestAuthorization:
                call = .requestAuthorization(options: try r.u32("options"))
                try r.finish("request_authorization")
            case .setSceneRestoration:
                call = .setSceneRestoration(scene: try r.u64("scene"), json: try r.optionalBlob("activity"))
                try r.finish("set_scene_restoration")
            case .beginBackgroundTask:
                call = .beginBackgroundTask(name: try r.blob("name"))
                try r.finish("background task begin")
            case .endBackgroundTask:
                call = .endBackgroundTask(task: try r.u32("task"))
                try r.finish("background task end")
            case .setNotificationCategories:
                call = .setNotificationCategories(json: try r.blob("categories"))
                try r.finish("set_categories")
            }
        default:
            throw .malformed("a worker sent a \(frame.type) frame")
        }
        return (service, call)
    }

    /// Carries the call out on `functions` (nil: no service at that index) with host.h's
    /// checks, as HostAdapter makes them; the answer for a `call` frame, nil for a one-way
    /// call. `request` and `deploy` are not carried out here (their reply crosses back later): see
    /// HostCallForwarder.
    func perform(on functions: (any HostFunctions)?) throws(WireError) -> HostCallReply? {
        guard let functions else { return frame.call.map { HostCallReply.refused($0, Int32(SH_INVALID)) } }
        let invalid = Int32(SH_INVALID)
        switch self {
        case .log(let level, let message):
            functions.logLine(HostArguments.level(level), String(decoding: message, as: UTF8.self))
            return nil
        case .post(let name, let json):
            if let name = HostArguments.name(name) { _ = functions.post(name: name, json: json) }
            return nil
        case .subscribe(let name):
            if let name = HostArguments.name(name) { _ = functions.subscribe(name) }
            return nil
        case .registerForRemoteNotifications:
            _ = functions.registerForRemoteNotifications()
            return nil
        case .request, .deploy:
            return nil
        case .reportHealth(let status, let reason):
            // Checked again here: a worker is not trusted to have checked it.
            if HealthStatus(rawValue: status) != nil {
                _ = functions.reportHealth(status, reason: reason.map(HealthExtension.reason))
            }
            return nil
        case .appState:
            return .result(functions.appState())
        case .unsubscribe(let name):
            return .result(name.map { functions.unsubscribe(String(decoding: $0, as: UTF8.self)) } ?? invalid)
        case .storeGet(let key, let capacity):
            // The reply carries the value: at most what a frame holds.
            let room = Int(min(capacity, UInt64(Wire.maxPayload - 64)))
            return .storeRead(functions.storeGet(key: key ?? [], capacity: room).fitting(room))
        case .storeSet(let key, let value, let length):
            // A length no buffer can have is a worker that lies, not a value to store.
            guard let length = Int(exactly: length) else { throw .malformed("store_set of \(length) bytes") }
            guard let value else {
                // NULL with a length: what HostAdapter refuses.
                return .result(
                    length == 0
                        ? functions.storeSet(key: key ?? [], value: UnsafeRawBufferPointer(start: nil, count: 0))
                        : invalid)
            }
            return .result(value.withUnsafeBytes { functions.storeSet(key: key ?? [], value: $0) })
        case .storeRemove(let key):
            return .result(functions.storeRemove(key: key ?? []))
        case .storeKeys:
            let (result, keys) = functions.storeKeys()
            return .keys(result, keys)
        case .notificationSettings:
            let (status, allowed) = functions.notificationSettings()
            return .settings(status, allowed)
        case .requestAuthorization(let options):
            return .result(functions.requestAuthorization(options))
        case .setSceneRestoration(let scene, let json):
            return .result(functions.setSceneRestoration(scene: scene, json: json))
        case .beginBackgroundTask(let name):
            // Without a way back for the expiry (HostCallForwarder has one) the handler is lost.
            guard let name = HostArguments.name(name) else { return .result(0) }
            return .result(Int32(bitPattern: functions.beginBackgroundTask(name: name) { _ in }))
        case .endBackgroundTask(let task):
            return .result(functions.endBackgroundTask(task))
        case .setNotificationCategories(let json):
            return .result(functions.setNotificationCategories(json: json))
        }
    }
}

/// The host's answer to a `call` frame, in its `reply` frame.
enum HostCallReply: Sendable, Equatable {
    /// i32.
    case result(Int32)
    /// i32 result, u64 length, optional blob value (present only when it fit).
    case storeRead(StoreRead)
    /// i32 result, u32 count, that many blobs.
    case keys(Int32, [[UInt8]])
    /// i32 status, u32 allowed options.
    case settings(Int32, UInt32)

    /// The answer of `call` when the host cannot carry it out: `result` in the call's shape.
    static func refused(_ call: HostCall, _ result: Int32) -> HostCallReply {
        switch call {
        case .storeGet: .storeRead(.failed(result))
        case .storeKeys: .keys(result, [])
        case .notificationSettings: .settings(result, 0)
        default: .result(result)
        }
    }

    func write(into w: inout WireWriter) {
        switch self {
        case .result(let result):
            w.i32(result)
        case .storeRead(let read):
            w.i32(read.result)
            w.u64(UInt64(read.length))
            w.optionalBlob(read.value)
        case .keys(let result, let keys):
            w.i32(result)
            w.u32(UInt32(keys.count))
            for key in keys { w.blob(key) }
        case .settings(let status, let allowed):
            w.i32(status)
            w.u32(allowed)
        }
    }

    /// Reads the reply to `call`, in the shape `write` gave it.
    static func read(_ r: inout WireReader, for call: HostCall) throws(WireError) -> HostCallReply {
        switch call {
        case .storeGet:
            let result = try r.i32("result")
            let length = try r.u64("length")
            // Back to a size_t, bit for bit: `Int(_:)` trapped past Int.max.
            return .storeRead(
                StoreRead(result: result, length: Int(truncatingIfNeeded: length), value: try r.optionalBlob("value")))
        case .storeKeys:
            let result = try r.i32("result")
            let count = try r.u32("count")
            // Every key takes at least its 4-byte length: a count the payload cannot hold is a lie.
            guard count <= r.remaining / 4 else { throw .malformed("\(count) keys in \(r.remaining) bytes") }
            var keys: [[UInt8]] = []
            for _ in 0..<count { keys.append(try r.blob("key")) }
            return .keys(result, keys)
        case .notificationSettings:
            return .settings(try r.i32("status"), try r.u32("allowed"))
        default:
            return .result(try r.i32("result"))
        }
    }

    /// The i32 every reply starts with.
    var result: Int32 {
        switch self {
        case .result(let result), .keys(let result, _), .settings(let result, _): result
        case .storeRead(let read): read.result
        }
    }
}
