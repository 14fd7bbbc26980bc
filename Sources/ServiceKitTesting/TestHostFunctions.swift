import Locking
import ServiceABI
import ServiceKit

internal import protocol HostCore.HostFunctions
internal import protocol HostCore.PluginSourceFunctions
internal import struct HostCore.RequestReply
internal import struct HostCore.StoreRead

/// What the service under test did through its `sh_host`, and how the test wants some of it
/// answered. Written from any thread (host.h), so behind a lock.
final class TestRecorder: Sendable {
    struct State {
        var logs: [LogLine] = []
        var posts: [Post] = []
        var requests: [Request] = []
        var store: [String: [UInt8]] = [:]
        var authorizationAnswer: AuthorizationStatus = .authorized
        /// How `host.request` is answered, by name (``TestHost/requestAnswers``).
        var requestAnswers: [String: Result<JSONValue, RequestError>] = [:]
        /// The service's watches (extension sources/1) by id: the descriptor and the handler.
        var watches: [UInt64: (fd: Int32, readable: @MainActor @Sendable (Int32) -> Void)] = [:]
        var nextWatch: UInt64 = 1
    }

    let state = Locked(State())
}

/// The service's host functions in a TestHost: the real host's (its ServiceContext, behind the
/// one C adapter), with what the test observes recorded on the way. Three members answer here
/// instead: the store (kept in memory, so a test seeds and reads it), a request nobody in the
/// host answers (from ``TestHost/requestAnswers``), and an authorization the host leaves not
/// determined (from ``TestHost/authorizationAnswer``).
final class TestHostFunctions: HostFunctions {
    private let base: any HostFunctions
    private let recorder: TestRecorder
    /// Decides a status still not determined, as the user at the prompt (Host.decideAuthorization).
    private let decide: @Sendable (Int32) -> Int32

    init(_ base: any HostFunctions, recorder: TestRecorder, decide: @escaping @Sendable (Int32) -> Int32) {
        self.base = base
        self.recorder = recorder
        self.decide = decide
    }

    private func record(_ request: Request) { recorder.state.withLock { $0.requests.append(request) } }

    private static func parse(_ json: [UInt8]?) -> JSONValue? { json.flatMap { try? JSONValue(parsing: $0) } }

    func logLine(_ level: LogLevel, _ message: String) {
        recorder.state.withLock { $0.logs.append(LogLine(level, message)) }
        base.logLine(level, message)
    }

    func post(name: String, json: [UInt8]?) -> Int32 {
        recorder.state.withLock { $0.posts.append(Post(name, payload: Self.parse(json))) }
        return base.post(name: name, json: json)
    }

    func appState() -> Int32 { base.appState() }

    func storeGet(key: [UInt8], capacity: Int) -> StoreRead {
        guard let value = recorder.state.withLock({ $0.store[String(decoding: key, as: UTF8.self)] }) else {
            return .failed(Int32(SH_NOT_FOUND))
        }
        return StoreRead(result: Int32(SH_OK), length: value.count, value: value)
    }

    func storeSet(key: [UInt8], value: UnsafeRawBufferPointer) -> Int32 {
        recorder.state.withLock { $0.store[String(decoding: key, as: UTF8.self)] = Array(value) }
        return Int32(SH_OK)
    }

    func storeRemove(key: [UInt8]) -> Int32 {
        let removed = recorder.state.withLock { $0.store.removeValue(forKey: String(decoding: key, as: UTF8.self)) }
        return Int32(removed == nil ? SH_NOT_FOUND : SH_OK)
    }

    func storeKeys() -> (result: Int32, keys: [[UInt8]]) {
        (Int32(SH_OK), recorder.state.withLock { $0.store.keys.sorted().map { Array($0.utf8) } })
    }

    func subscribe(_ name: String) -> Int32 {
        record(.subscribe(name))
        return base.subscribe(name)
    }

    func unsubscribe(_ name: String) -> Int32 {
        record(.unsubscribe(name))
        return base.unsubscribe(name)
    }

    func registerForRemoteNotifications() -> Int32 {
        record(.registerForRemoteNotifications)
        return base.registerForRemoteNotifications()
    }

    func notificationSettings() -> (status: Int32, allowed: UInt32) { base.notificationSettings() }

    func requestAuthorization(_ options: UInt32) -> Int32 {
        record(.authorization(AuthorizationOptions(rawValue: options)))
        let status = base.requestAuthorization(options)
        guard status == AuthorizationStatus.notDetermined.rawValue else { return status }
        return decide(recorder.state.withLock { $0.authorizationAnswer.rawValue })
    }

    func setSceneRestoration(scene: UInt64, json: [UInt8]?) -> Int32 {
        record(.restoration(scene: scene, activity: Self.parse(json)))
        return base.setSceneRestoration(scene: scene, json: json)
    }

    func beginBackgroundTask(name: String, expired: @escaping @MainActor @Sendable (UInt32) -> Void) -> UInt32 {
        base.beginBackgroundTask(name: name, expired: expired)
    }

    func endBackgroundTask(_ task: UInt32) -> Int32 { base.endBackgroundTask(task) }

    func reportHealth(_ status: Int32, reason: String?) -> Int32 { base.reportHealth(status, reason: reason) }
    func setNotificationCategories(json: [UInt8]) -> Int32 {
        record(.notificationCategories(Self.parse(json)))
        return base.setNotificationCategories(json: json)
    }

    func deploy(directory: String, probationMilliseconds: UInt32, done: @escaping @Sendable (RequestReply) -> Void)
        -> Int32
    {
        base.deploy(directory: directory, probationMilliseconds: probationMilliseconds, done: done)
    }

    func control(_ json: [UInt8], reply: @escaping @Sendable ([UInt8]) -> Void) -> Int32 {
        base.control(json, reply: reply)
    }

    func request(name: String, json: [UInt8]?, reply: @escaping @Sendable (RequestReply) -> Void) -> Int32 {
        record(.request(name, payload: Self.parse(json)))
        let recorder = recorder
        // The host's desk carries it (its limits, its JSON check, after the event); where it finds
        // nobody to answer, the test's stub answers in the desk's place.
        return base.request(name: name, json: json) { answer in
            guard answer.result == SH_NOT_FOUND, let stub = recorder.state.withLock({ $0.requestAnswers[name] }) else {
                return reply(answer)
            }
            switch stub {
            case .success(let value): reply(.testReply(result: Int32(SH_OK), json: Array(value.serialized.utf8)))
            case .failure(let error):
                let body = JSONValue.object(["error": .string(error.message)]).serialized
                reply(.testReply(result: error.code, json: Array(body.utf8)))
            }
        }
    }
}

/// Extension sources/1 in a TestHost: a move and a current state go to the real host (the move
/// after the current call, the state answered by its request desk), recorded on the way; the
/// host's main loop does not run under a test, so a watch is only recorded, and the test makes
/// its descriptor readable (``TestHost/descriptorReadable(_:)``).
extension TestHostFunctions: PluginSourceFunctions {
    func moveApp(_ move: AppMove) -> Int32 {
        record(.moveApp(move))
        return (base as? any PluginSourceFunctions)?.moveApp(move) ?? Int32(SH_UNSUPPORTED)
    }

    func watch(_ fd: Int32, readable: @escaping @MainActor @Sendable (Int32) -> Void) -> UInt64 {
        record(.watch(fd))
        return recorder.state.withLock { state in
            let id = state.nextWatch
            state.nextWatch += 1
            state.watches[id] = (fd, readable)
            return id
        }
    }

    func unwatch(_ watch: UInt64) -> Int32 {
        guard let fd = recorder.state.withLock({ $0.watches.removeValue(forKey: watch)?.fd }) else {
            return Int32(SH_NOT_FOUND)
        }
        record(.unwatch(fd))
        return Int32(SH_OK)
    }

    func setCurrentState(_ name: String, json: [UInt8]) -> Int32 {
        record(.currentState(name, Self.parse(json)))
        return (base as? any PluginSourceFunctions)?.setCurrentState(name, json: json) ?? Int32(SH_UNSUPPORTED)
    }
}
