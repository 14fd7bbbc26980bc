import Glibc
import ServiceABI

/// The `sh_host` a service gets in a worker: the same size, version and members as the
/// host's, each forwarded to the host over the channel (HostCallForwarder carries them out
/// with the host's own table for that service). Calls with an answer wait for it; log,
/// post, subscribe and register_for_remote_notifications are sent and return at once, with
/// the results the host's table would give (their only failures are checked here).
///
/// `get_extension` answers NULL: an extension is a pointer into the host process, which a
/// worker cannot reach. None is offered in-process either, for now.
enum WorkerHostTable {
    /// What a table reaches; retained for the process lifetime, like the table.
    final class Context: Sendable {
        let index: UInt32
        let channel: FrameChannel
        let calls: PendingCalls
        let level: Int32

        init(index: UInt32, channel: FrameChannel, calls: PendingCalls, level: Int32) {
            self.index = index
            self.channel = channel
            self.calls = calls
            self.level = level
        }

        /// Sends a one-way frame; a lost host makes the worker exit soon, so failures are moot.
        func send(_ type: FrameType, _ fill: (inout WireWriter) -> Void) {
            var w = WireWriter()
            w.u32(index)
            fill(&w)
            try? channel.send(&w, type)
        }

        /// A host call with an answer.
        func call(_ call: HostCall, _ fill: (inout WireWriter) -> Void = { _ in }) -> WireReader? {
            var w = WireWriter()
            w.u32(index)
            w.u8(call.rawValue)
            fill(&w)
            return calls.call(&w)
        }
    }

    /// A table for service `index`, never freed.
    static func make(_ context: Context) -> UnsafePointer<sh_host> {
        let table = UnsafeMutablePointer<sh_host>.allocate(capacity: 1)
        table.initialize(
            to: sh_host(
                size: UInt32(MemoryLayout<sh_host>.size),
                version: SH_HOST_VERSION,
                host_data: Unmanaged.passRetained(context).toOpaque(),
                host_version: HostVersion.cString,
                log: { host, level, message in
                    guard let context = WorkerHostTable.context(host) else { return }
                    let clamped = min(max(level, 0), 3)
                    guard clamped <= context.level else { return }  // the host would not write it either
                    context.send(.log) { w in
                        w.i32(level)
                        if let message { w.cString(message) } else { w.blob([]) }
                    }
                },
                post: { host, name, json, length in
                    guard let context = WorkerHostTable.context(host), let name, name.pointee != 0 else {
                        return Int32(SH_INVALID)
                    }
                    context.send(.post) { w in
                        w.cString(name)
                        w.bool(json != nil)
                        if json != nil { w.blob(json, count: length) }
                    }
                    return Int32(SH_OK)
                },
                app_state: { host in
                    guard var reply = WorkerHostTable.context(host)?.call(.appState),
                        let state = try? reply.i32("state")
                    else { return AppState.notRunning.rawValue }
                    return state
                },
                store_get: { host, key, buffer, capacity, length in
                    guard let context = WorkerHostTable.context(host) else { return Int32(SH_INVALID) }
                    guard
                        var reply = context.call(
                            .storeGet,
                            { w in
                                w.optionalCString(key)
                                // The plugin's size_t as it is (a huge one reads as a negative Int).
                                w.u64(UInt64(UInt(bitPattern: capacity)))
                            })
                    else { return Int32(SH_ERROR) }
                    do throws(WireError) {
                        let result = try reply.i32("result")
                        let needed = try reply.u64("length")
                        let value = try reply.optionalBlob("value")
                        // Back to a size_t, bit for bit: `Int(_:)` trapped past Int.max.
                        length?.pointee = Int(truncatingIfNeeded: needed)
                        if let value, UInt(value.count) <= UInt(bitPattern: capacity), let buffer, !value.isEmpty {
                            value.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                        }
                        return result
                    } catch {
                        return Int32(SH_ERROR)
                    }
                },
                store_set: { host, key, value, length in
                    // As in process: NULL with a length, or a size_t past Int.max, is invalid. A
                    // value no frame can carry is too large for any store (1 MiB by default),
                    // which is SH_INVALID too; the frame's 32-bit length trapped on it.
                    guard length >= 0, value != nil || length == 0, length <= Wire.maxPayload else { return Int32(SH_INVALID) }
                    guard let context = WorkerHostTable.context(host) else { return Int32(SH_INVALID) }
                    guard
                        var reply = context.call(
                            .storeSet,
                            { w in
                                w.optionalCString(key)
                                w.bool(value != nil)
                                if value != nil { w.blob(value, count: length) }
                                w.u64(UInt64(length))
                            }), let result = try? reply.i32("result")
                    else { return Int32(SH_ERROR) }
                    return result
                },
                store_remove: { host, key in
                    guard var reply = WorkerHostTable.context(host)?.call(.storeRemove, { $0.optionalCString(key) }),
                        let result = try? reply.i32("result")
                    else { return Int32(SH_ERROR) }
                    return result
                },
                store_keys: { host, each, eachContext in
                    guard var reply = WorkerHostTable.context(host)?.call(.storeKeys),
                        let result = try? reply.i32("result"), let count = try? reply.u32("count")
                    else {
                        return Int32(SH_ERROR)
                    }
                    for _ in 0..<count {
                        guard let key = try? reply.blob("key") else { break }
                        (key + [0]).withUnsafeBytes { each?(eachContext, $0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
                    }
                    return result
                },
                get_extension: { _, _ in nil },
                subscribe: { host, name in
                    guard let context = WorkerHostTable.context(host), let name, name.pointee != 0 else {
                        return Int32(SH_INVALID)
                    }
                    context.send(.subscribe) { $0.cString(name) }
                    return Int32(SH_OK)
                },
                unsubscribe: { host, name in
                    guard let context = WorkerHostTable.context(host) else { return Int32(SH_INVALID) }
                    guard var reply = context.call(.unsubscribe, { $0.optionalCString(name) }),
                        let result = try? reply.i32("result")
                    else { return Int32(SH_ERROR) }
                    return result
                },
                register_for_remote_notifications: { host in
                    guard let context = WorkerHostTable.context(host) else { return Int32(SH_INVALID) }
                    context.send(.registerForRemoteNotifications) { _ in }
                    return Int32(SH_OK)
                },
                notification_settings: { host, allowed in
                    guard var reply = WorkerHostTable.context(host)?.call(.notificationSettings),
                        let status = try? reply.i32("status"), let options = try? reply.u32("allowed")
                    else {
                        return Int32(SH_ERROR)
                    }
                    allowed?.pointee = options
                    return status
                },
                request_authorization: { host, options in
                    guard var reply = WorkerHostTable.context(host)?.call(.requestAuthorization, { $0.u32(options) }),
                        let result = try? reply.i32("result")
                    else { return Int32(SH_ERROR) }
                    return result
                },
                set_scene_restoration: { host, scene, json, length in
                    guard
                        var reply = WorkerHostTable.context(host)?.call(
                            .setSceneRestoration,
                            { w in
                                w.u64(scene)
                                w.bool(json != nil)
                                if json != nil { w.blob(json, count: length) }
                            }), let result = try? reply.i32("result")
                    else { return Int32(SH_ERROR) }
                    return result
                },
                // A reply would have to cross back into the worker on a thread of its own; the
                // bundled service that needs requests (MQTTBridge) runs in-process.
                control: { _, _, _, _, _ in Int32(SH_UNSUPPORTED) },
                request: { host, name, json, length, reply, replyContext in
                    guard let context = WorkerHostTable.context(host), let name, name.pointee != 0, let reply else {
                        return Int32(SH_INVALID)
                    }
                    let id = WorkerRequests.shared.add(reply, replyContext)
                    context.send(.request) { w in
                        w.u32(id)
                        w.cString(name)
                        w.bool(json != nil)
                        if json != nil { w.blob(json, count: length) }
                    }
                    return Int32(SH_OK)
                }
            ))
        return UnsafePointer(table)
    }

    private static func context(_ host: UnsafePointer<sh_host>?) -> Context? {
        guard let data = host?.pointee.host_data else { return nil }
        return Unmanaged<Context>.fromOpaque(data).takeUnretainedValue()
    }
}
