import Locking
import ServiceABI
import ServiceKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the service did through its `sh_host` table, and what the table answers. The
/// table's functions may be called from any thread (host.h), so everything is behind a lock.
final class TestRecorder: Sendable {
    struct State {
        var logs: [LogLine] = []
        var posts: [Post] = []
        var requests: [Request] = []
        var store: [String: [UInt8]] = [:]
        var appState: AppState = .notRunning
        var settings = NotificationSettings(status: .notDetermined, allowed: [])
        var authorizationAnswer: AuthorizationStatus = .authorized
        /// How `host.request` is answered, by name (``TestHost/requestAnswers``).
        var requestAnswers: [String: Result<JSONValue, RequestError>] = [:]
        /// Requests the service made that are not answered yet, in order.
        var asked: [AskedRequest] = []
    }

    /// A `host.request` waiting for its reply: the service's reply function and context.
    // @unchecked: `context` is the service's own pointer, never read here, only handed back to
    // `reply` once; the recorder's lock guards the list that holds it.
    struct AskedRequest: @unchecked Sendable {
        let name: String
        /// Why the host refuses it before asking anyone (a payload that is not JSON).
        let refusal: String?
        let reply: sh_request_reply_fn
        let context: UnsafeMutableRawPointer?
    }

    let state = Locked(State())

    /// The recorder a table's `host_data` points at.
    static func of(_ host: UnsafePointer<sh_host>?) -> TestRecorder {
        Unmanaged<TestRecorder>.fromOpaque(host!.pointee.host_data!).takeUnretainedValue()
    }
}

/// The `sh_host` table a `TestHost` hands its service: the real host's members, each
/// recording into a ``TestRecorder`` instead of logging, posting or writing files.
enum TestHostTable {
    /// A table for `recorder`; the caller frees it with ``free(_:)`` and keeps `recorder`
    /// alive until then.
    static func make(for recorder: TestRecorder) -> UnsafeMutablePointer<sh_host> {
        var table = sh_host()
        table.size = UInt32(MemoryLayout<sh_host>.size)
        table.version = SH_HOST_VERSION
        table.host_data = Unmanaged.passUnretained(recorder).toOpaque()
        table.host_version = UnsafePointer(strdup("servicehost TestHost"))
        table.log = { host, level, message in
            let line = LogLine(LogLevel(rawValue: level) ?? .info, message.map { String(cString: $0) } ?? "")
            TestRecorder.of(host).state.withLock { $0.logs.append(line) }
        }
        table.post = { host, name, json, length in
            guard let name, name.pointee != 0 else { return Int32(SH_INVALID) }
            let payload = json.flatMap { try? JSONValue(parsing: UnsafeRawBufferPointer(start: $0, count: length)) }
            let post = Post(String(cString: name), payload: payload)
            TestRecorder.of(host).state.withLock { $0.posts.append(post) }
            return Int32(SH_OK)
        }
        table.app_state = { host in TestRecorder.of(host).state.withLock { $0.appState.rawValue } }
        table.store_get = { host, key, buffer, capacity, length in
            guard let key, let length else { return Int32(SH_INVALID) }
            guard let value = TestRecorder.of(host).state.withLock({ $0.store[String(cString: key)] }) else {
                return Int32(SH_NOT_FOUND)
            }
            length.pointee = value.count
            guard value.count <= capacity else { return Int32(SH_TOO_SMALL) }
            value.withUnsafeBytes { bytes in
                if let buffer, let base = bytes.baseAddress { buffer.copyMemory(from: base, byteCount: bytes.count) }
            }
            return Int32(SH_OK)
        }
        table.store_set = { host, key, value, length in
            guard let key else { return Int32(SH_INVALID) }
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
            TestRecorder.of(host).state.withLock { $0.store[String(cString: key)] = bytes }
            return Int32(SH_OK)
        }
        table.store_remove = { host, key in
            guard let key else { return Int32(SH_INVALID) }
            let removed = TestRecorder.of(host).state.withLock { $0.store.removeValue(forKey: String(cString: key)) }
            return Int32(removed == nil ? SH_NOT_FOUND : SH_OK)
        }
        table.store_keys = { host, each, context in
            let keys = TestRecorder.of(host).state.withLock { $0.store.keys.sorted() }
            for key in keys { each?(context, key) }
            return Int32(SH_OK)
        }
        table.get_extension = { _, _ in nil }
        table.subscribe = { host, name in
            guard let name, name.pointee != 0 else { return Int32(SH_INVALID) }
            TestRecorder.of(host).state.withLock { $0.requests.append(.subscribe(String(cString: name))) }
            return Int32(SH_OK)
        }
        table.unsubscribe = { host, name in
            guard let name else { return Int32(SH_INVALID) }
            TestRecorder.of(host).state.withLock { $0.requests.append(.unsubscribe(String(cString: name))) }
            return Int32(SH_OK)
        }
        table.register_for_remote_notifications = { host in
            TestRecorder.of(host).state.withLock { $0.requests.append(.registerForRemoteNotifications) }
            return Int32(SH_OK)
        }
        table.notification_settings = { host, allowed in
            let settings = TestRecorder.of(host).state.withLock { $0.settings }
            allowed?.pointee = settings.allowed.rawValue
            return settings.status.rawValue
        }
        table.request_authorization = { host, options in
            TestRecorder.of(host).state.withLock { state in
                state.requests.append(.authorization(AuthorizationOptions(rawValue: options)))
                // As the host's `grant`/`deny` policy: only a status not yet determined changes.
                if state.settings.status == .notDetermined {
                    state.settings.status = state.authorizationAnswer
                    state.settings.allowed = state.authorizationAnswer.allowedPresentation
                }
                return state.settings.status.rawValue
            }
        }
        table.set_scene_restoration = { host, scene, json, length in
            let activity = json.flatMap { try? JSONValue(parsing: UnsafeRawBufferPointer(start: $0, count: length)) }
            TestRecorder.of(host).state.withLock { $0.requests.append(.restoration(scene: scene, activity: activity)) }
            return Int32(SH_OK)
        }
        table.request = { host, name, json, length, reply, context in
            guard let name, name.pointee != 0, let reply else { return Int32(SH_INVALID) }
            var payload: JSONValue?
            var refusal: String?
            if let json {
                do { payload = try JSONValue(parsing: UnsafeRawBufferPointer(start: json, count: length)) } catch {
                    refusal = "the payload of request \(String(cString: name)) is not JSON: \(error)"
                }
            }
            let asked = TestRecorder.AskedRequest(name: String(cString: name), refusal: refusal, reply: reply, context: context)
            TestRecorder.of(host).state.withLock { state in
                state.requests.append(.request(asked.name, payload: payload))
                state.asked.append(asked)
            }
            return Int32(SH_OK)
        }
        let pointer = UnsafeMutablePointer<sh_host>.allocate(capacity: 1)
        pointer.initialize(to: table)
        return pointer
    }

    /// Frees a table from ``make(for:)``.
    static func release(_ table: UnsafeMutablePointer<sh_host>) {
        free(UnsafeMutableRawPointer(mutating: table.pointee.host_version))
        table.deinitialize(count: 1)
        table.deallocate()
    }
}
