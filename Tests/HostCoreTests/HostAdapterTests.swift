import Glibc
import ServiceABI
import Synchronization
import Testing

@testable import HostCore

/// The one `sh_host` adapter: what it refuses before any implementation runs, and what it
/// hands an implementation; and the worker's frames of every host function, read back as
/// they were written.
@Suite struct HostAdapterTests {
    /// Host functions that record what reached them and answer fixed results.
    final class Recorder: HostFunctions {
        let calls = Locked<[String]>([])
        let value: [UInt8]

        init(value: [UInt8] = Array("hello".utf8)) { self.value = value }

        private func note(_ call: String) { calls.withLock { $0.append(call) } }
        func logLine(_ level: LogLevel, _ message: String) { note("log \(level.name) \(message)") }
        func post(name: String, json: [UInt8]?) -> Int32 {
            note("post \(name) \(json.map { String(decoding: $0, as: UTF8.self) } ?? "nil")")
            return Int32(SH_OK)
        }
        func appState() -> Int32 { 2 }
        func storeGet(key: [UInt8], capacity: Int) -> StoreRead {
            note("store_get \(String(decoding: key, as: UTF8.self))")
            return StoreRead(result: Int32(SH_OK), length: value.count, value: value)
        }
        func storeSet(key: [UInt8], value: UnsafeRawBufferPointer) -> Int32 {
            note("store_set \(String(decoding: key, as: UTF8.self)) \(value.count)")
            return Int32(SH_OK)
        }
        func storeRemove(key: [UInt8]) -> Int32 { Int32(SH_NOT_FOUND) }
        func storeKeys() -> (result: Int32, keys: [[UInt8]]) { (Int32(SH_OK), [Array("a".utf8), Array("b".utf8)]) }
        func subscribe(_ name: String) -> Int32 {
            note("subscribe \(name)")
            return Int32(SH_OK)
        }
        func unsubscribe(_ name: String) -> Int32 { Int32(SH_NOT_FOUND) }
        func registerForRemoteNotifications() -> Int32 { Int32(SH_OK) }
        func notificationSettings() -> (status: Int32, allowed: UInt32) { (2, 7) }
        func requestAuthorization(_ options: UInt32) -> Int32 { 2 }
        func setSceneRestoration(scene: UInt64, json: [UInt8]?) -> Int32 {
            note("set_scene_restoration \(scene) \(json?.count ?? -1)")
            return Int32(SH_OK)
        }
        func control(_ json: [UInt8], reply: @escaping @Sendable ([UInt8]) -> Void) -> Int32 {
            note("control \(json.count)")
            return Int32(SH_OK)
        }
        func request(name: String, json: [UInt8]?, reply: @escaping @Sendable (RequestReply) -> Void) -> Int32 {
            note("request \(name)")
            return Int32(SH_OK)
        }
        func beginBackgroundTask(name: String, expired: @escaping @MainActor @Sendable (UInt32) -> Void) -> UInt32 {
            note("beginBackgroundTask \(name)")
            return 7
        }
        func endBackgroundTask(_ task: UInt32) -> Int32 {
            note("endBackgroundTask \(task)")
            return Int32(SH_OK)
        }
        func reportHealth(_ status: Int32, reason: String?) -> Int32 {
            note("reportHealth \(status) \(reason ?? "-")")
            return Int32(SH_OK)
        }
        func setNotificationCategories(json: [UInt8]) -> Int32 {
            note("setNotificationCategories \(String(decoding: json, as: UTF8.self))")
            return Int32(SH_OK)
        }
        func deploy(
            directory: String, probationMilliseconds: UInt32, done: @escaping @Sendable (RequestReply) -> Void
        ) -> Int32 {
            note("deploy \(directory) \(probationMilliseconds)")
            done(RequestReply(result: Int32(SH_DEPLOY_APPLIED.rawValue), json: Array(#"{"outcome":"applied"}"#.utf8)))
            return Int32(SH_OK)
        }
    }

    private let recorder = Recorder()
    private var host: UnsafePointer<sh_host> { HostAdapter.make(recorder) }
    /// A size_t past INT64_MAX, as a C caller passes it.
    private let huge = Int(bitPattern: UInt.max)

    @Test func nullWithALength_orASizePastInt64Max_isInvalid_andReachesNoImplementation() {
        let h = host
        let t = h.pointee
        let bytes: [CChar] = [0x61, 0x62, 0x63]
        #expect(t.post!(h, "n", nil, 5) == SH_INVALID)
        #expect(t.post!(h, "n", bytes, huge) == SH_INVALID)
        #expect(t.store_set!(h, "k", nil, 5) == SH_INVALID)
        #expect(t.store_set!(h, "k", bytes, huge) == SH_INVALID)
        var length = 0
        #expect(t.store_get!(h, "k", nil, 8, &length) == SH_INVALID)
        #expect(t.set_scene_restoration!(h, 1, nil, 3) == SH_INVALID)
        #expect(t.request!(h, "geo", nil, 3, { _, _, _, _ in }, nil) == SH_INVALID)
        #expect(t.control!(h, nil, 3, { _, _, _ in }, nil) == SH_INVALID)
        #expect(recorder.calls.withLock { $0 }.isEmpty)
    }

    @Test func emptyOrNullNames_andNullCallbacks_areInvalid() {
        let h = host
        let t = h.pointee
        #expect(t.post!(h, nil, nil, 0) == SH_INVALID)
        #expect(t.post!(h, "", nil, 0) == SH_INVALID)
        #expect(t.subscribe!(h, "") == SH_INVALID)
        #expect(t.unsubscribe!(h, nil) == SH_INVALID)
        #expect(t.request!(h, "", nil, 0, { _, _, _, _ in }, nil) == SH_INVALID)
        #expect(t.request!(h, "geo", nil, 0, nil, nil) == SH_INVALID)
        #expect(t.control!(h, "{}", 2, nil, nil) == SH_INVALID)
        #expect(t.control!(h, "{}", 0, { _, _, _ in }, nil) == SH_INVALID)
        #expect(t.store_keys!(h, nil, nil) == SH_INVALID)
        #expect(recorder.calls.withLock { $0 }.isEmpty)
    }

    @Test func checkedArguments_reachTheImplementation_asSwiftValues() {
        let h = host
        let t = h.pointee
        t.log!(h, 9, "loud")
        t.log!(h, -4, nil)
        #expect(t.post!(h, "n", nil, 0) == SH_OK)
        #expect(t.post!(h, "n", "{}x", 2) == SH_OK)
        #expect(t.store_set!(h, "k", nil, 0) == SH_OK)
        #expect(t.subscribe!(h, "*") == SH_OK)
        #expect(t.set_scene_restoration!(h, 4, nil, 0) == SH_OK)
        #expect(t.control!(h, "{}", 2, { _, _, _ in }, nil) == SH_OK)
        #expect(t.request!(h, "geo", nil, 0, { _, _, _, _ in }, nil) == SH_OK)
        #expect(
            recorder.calls.withLock { $0 } == [
                "log debug loud", "log error ", "post n nil", "post n {}", "store_set k 0", "subscribe *",
                "set_scene_restoration 4 -1", "control 2", "request geo",
            ])
        #expect(t.app_state!(h) == 2)
        var allowed: UInt32 = 0
        #expect(t.notification_settings!(h, &allowed) == 2 && allowed == 7)
        #expect(t.get_extension!(h, "dev.servicehost.none/1") == nil)
    }

    @Test func storeGet_answersTooSmall_withTheLength_andCopiesWhatFits() {
        let h = host
        let t = h.pointee
        var buffer = [UInt8](repeating: 0, count: 8)
        var length = 0
        #expect(buffer.withUnsafeMutableBytes { t.store_get!(h, "k", $0.baseAddress, 3, &length) } == SH_TOO_SMALL)
        #expect(length == 5 && buffer == [UInt8](repeating: 0, count: 8))
        #expect(buffer.withUnsafeMutableBytes { t.store_get!(h, "k", $0.baseAddress, huge, &length) } == SH_OK)
        #expect(length == 5 && Array(buffer[..<5]) == Array("hello".utf8))
        #expect(t.store_get!(h, "k", nil, 0, &length) == SH_TOO_SMALL && length == 5)

        final class Keys { var list: [String] = [] }
        let keys = Keys()
        let result = t.store_keys!(
            h,
            { context, key in
                Unmanaged<Keys>.fromOpaque(context!).takeUnretainedValue().list.append(String(cString: key!))
            },
            Unmanaged.passUnretained(keys).toOpaque())
        #expect(result == SH_OK && keys.list == ["a", "b"])
    }

    /// The background-tasks extension (issue 38): found by its id, its thunks refuse a NULL or
    /// empty name and a NULL handler before any implementation, and pass the rest on.
    @Test func theBackgroundTasksExtension_checksItsArguments() throws {
        let h = host
        let raw = try #require(h.pointee.get_extension!(h, SH_BACKGROUND_TASKS_ID))
        let tasks = raw.assumingMemoryBound(to: sh_background_tasks.self).pointee
        #expect(tasks.size == SH_BACKGROUND_TASKS_SIZE_V1 && tasks.version == SH_BACKGROUND_TASKS_VERSION)
        let expired: sh_background_task_expired_fn = { _, _ in }
        #expect(tasks.begin!(h, nil, expired, nil) == SH_BACKGROUND_TASK_INVALID)
        #expect(tasks.begin!(h, "", expired, nil) == SH_BACKGROUND_TASK_INVALID)
        #expect(tasks.begin!(h, "save", nil, nil) == SH_BACKGROUND_TASK_INVALID)
        #expect(recorder.calls.withLock { $0 }.isEmpty)
        #expect(tasks.begin!(h, "save", expired, nil) == 7)
        #expect(tasks.end!(h, 7) == SH_OK)
        #expect(recorder.calls.withLock { $0 } == ["beginBackgroundTask save", "endBackgroundTask 7"])
    }

    /// The notifications extension (issue 39): found by its id, its thunk refuses a NULL
    /// document and one over the limit before any implementation, and passes the rest on.
    @Test func theNotificationsExtension_checksItsArguments() throws {
        let h = host
        let raw = try #require(h.pointee.get_extension!(h, SH_NOTIFICATIONS_ID))
        let table = raw.assumingMemoryBound(to: sh_notifications.self).pointee
        #expect(table.size == SH_NOTIFICATIONS_SIZE_V1 && table.version == SH_NOTIFICATIONS_VERSION)
        #expect(table.set_categories!(h, nil, 0) == SH_INVALID)
        let big = [CChar](repeating: 32, count: Int(SH_NOTIFICATIONS_MAX_CATEGORIES_BYTES) + 1)
        #expect(table.set_categories!(h, big, big.count) == SH_INVALID)
        #expect(recorder.calls.withLock { $0 }.isEmpty)
        let json = #"{"m":[]}"#
        #expect(table.set_categories!(h, json, json.utf8.count) == SH_OK)
        #expect(recorder.calls.withLock { $0 } == [#"setNotificationCategories {"m":[]}"#])
    }

    /// The deploy extension (issue 40): found by its id, its thunk refuses a NULL, empty or
    /// relative directory, a probation over a day and a NULL done before any implementation,
    /// and hands the outcome to done with the context it was given.
    @Test func theDeployExtension_checksItsArguments_andHandsTheOutcomeOn() throws {
        let h = host
        let raw = try #require(h.pointee.get_extension!(h, SH_DEPLOY_ID))
        let table = raw.assumingMemoryBound(to: sh_deploy.self).pointee
        #expect(table.size == SH_DEPLOY_SIZE_V1 && table.version == SH_DEPLOY_VERSION)
        final class Outcome: @unchecked Sendable {
            // @unchecked: written and read on the test's thread only (the recorder calls back at once).
            var code: Int32 = -1
            var json = ""
        }
        let outcome = Outcome()
        let context = Unmanaged.passUnretained(outcome).toOpaque()
        let done: sh_deploy_done_fn = { context, code, json, length in
            let outcome = Unmanaged<Outcome>.fromOpaque(context!).takeUnretainedValue()
            outcome.code = code
            outcome.json = String(decoding: UnsafeRawBufferPointer(start: json, count: length), as: UTF8.self)
        }
        #expect(table.deploy!(h, nil, 0, done, context) == SH_INVALID)
        #expect(table.deploy!(h, "", 0, done, context) == SH_INVALID)
        #expect(table.deploy!(h, "release-2", 0, done, context) == SH_INVALID)
        #expect(table.deploy!(h, "/srv/release-2", 86_400_001, done, context) == SH_INVALID)
        #expect(table.deploy!(h, "/srv/release-2", 0, nil, context) == SH_INVALID)
        #expect(recorder.calls.withLock { $0 }.isEmpty && outcome.code == -1)
        #expect(table.deploy!(h, "/srv/release-2", 86_400_000, done, context) == SH_OK)
        #expect(recorder.calls.withLock { $0 } == ["deploy /srv/release-2 86400000"])
        #expect(outcome.code == Int32(SH_DEPLOY_APPLIED.rawValue) && outcome.json == #"{"outcome":"applied"}"#)
    }

    // MARK: Worker frames

    static let calls: [HostCallFrame] = [
        .log(level: 3, message: Array("hi".utf8)), .post(name: Array("n".utf8), json: nil),
        .post(name: Array("n".utf8), json: Array("{}".utf8)), .subscribe(name: Array("*".utf8)),
        .registerForRemoteNotifications, .request(id: 9, name: Array("geo".utf8), json: []), .appState,
        .unsubscribe(name: nil), .unsubscribe(name: Array("x".utf8)), .storeGet(key: Array("k".utf8), capacity: .max),
        .storeSet(key: nil, value: nil, length: 5), .storeSet(key: Array("k".utf8), value: [1, 2], length: 2),
        .storeRemove(key: Array("k".utf8)), .storeKeys, .notificationSettings, .requestAuthorization(options: 6),
        .setSceneRestoration(scene: 1 << 40, json: Array("{}".utf8)),
        .deploy(id: 3, directory: Array("/srv/release-2".utf8), probationMilliseconds: 5000),
    ]

    @Test(arguments: calls)
    func everyHostFunctionsFrame_readsBackAsWritten(call: HostCallFrame) throws {
        var w = WireWriter()
        call.write(service: 7, into: &w)
        let frame = Frame(type: call.frame.type, sequence: 0, payload: Array(w.bytes.dropFirst(Wire.headerSize)))
        let read = try HostCallFrame.read(frame)
        #expect(read.service == 7 && read.call == call)
        if let function = call.frame.call { #expect(try HostCallFrame.callKind(frame) == function) }
    }

    @Test func everyReply_readsBackAsWritten() throws {
        let replies: [(HostCall, HostCallReply)] = [
            (.appState, .result(2)), (.storeGet, .storeRead(StoreRead(result: 0, length: 3, value: [1, 2, 3]))),
            (.storeGet, .storeRead(.failed(Int32(SH_NOT_FOUND)))), (.storeKeys, .keys(0, [[0x61], []])),
            (.notificationSettings, .settings(2, 7)), (.setSceneRestoration, .result(-3)),
        ]
        for (call, reply) in replies {
            var w = WireWriter()
            reply.write(into: &w)
            var r = WireReader(Array(w.bytes.dropFirst(Wire.headerSize)))
            #expect(try HostCallReply.read(&r, for: call) == reply)
            #expect(r.isAtEnd)
        }
    }

    /// From a worker, the forwarder applies the adapter's rules: NULL with a length is refused
    /// before the implementation, and a request without a name is answered with a refusal.
    @Test func aWorkersFrames_meetTheAdaptersRules() throws {
        let recorder = Recorder()
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        let forwarder = HostCallForwarder(channel: .adopting(pair[0]))
        forwarder.setFunctions(recorder, for: 0)
        for call in [
            HostCallFrame.post(name: [], json: nil), .subscribe(name: []), .storeSet(key: nil, value: nil, length: 5),
        ] {
            var w = WireWriter()
            call.write(service: 0, into: &w)
            try forwarder.answer(
                Frame(type: call.frame.type, sequence: 1, payload: Array(w.bytes.dropFirst(Wire.headerSize))))
        }
        #expect(recorder.calls.withLock { $0 }.isEmpty)
        var w = WireWriter()
        HostCallFrame.storeSet(key: nil, value: nil, length: 0).write(service: 0, into: &w)
        try forwarder.answer(Frame(type: .call, sequence: 2, payload: Array(w.bytes.dropFirst(Wire.headerSize))))
        #expect(recorder.calls.withLock { $0 } == ["store_set  0"])
    }
}
