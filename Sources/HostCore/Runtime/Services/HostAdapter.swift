import Glibc
import ServiceABI

/// The one `sh_host` a service gets, in the host or in a worker: C thunks that check every
/// argument against host.h and call a HostFunctions with Swift values.
///
/// The checks, once for every implementation: a NULL name or key where one is required, an
/// empty name, a NULL callback, a pointer that is NULL with a non-zero length, and a `size_t`
/// length past `Int.max` (which would read as negative) are SH_INVALID before any
/// implementation runs; C strings are read up to their NUL and decoded as UTF-8, repaired.
enum HostAdapter {
    /// What `host_data` points at: the implementation, retained for the process lifetime.
    private final class Box: Sendable {
        let functions: any HostFunctions
        init(_ functions: any HostFunctions) { self.functions = functions }
    }

    /// A table calling `functions`, never freed: services may keep the pointer until exit.
    static func make(_ functions: any HostFunctions) -> UnsafePointer<sh_host> {
        let table = UnsafeMutablePointer<sh_host>.allocate(capacity: 1)
        table.initialize(to: Self.table(Unmanaged.passRetained(Box(functions)).toOpaque()))
        return UnsafePointer(table)
    }

    /// The implementation behind a table `make` built (never another table).
    static func functions(_ host: UnsafePointer<sh_host>?) -> (any HostFunctions)? {
        guard let data = host?.pointee.host_data else { return nil }
        return Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().functions
    }

    /// A caller's buffer: NULL with a length of 0, bytes, or `invalid`: NULL with a length, or a
    /// length past Int.max.
    enum Bytes {
        case null
        case bytes(UnsafeRawBufferPointer)
        case invalid

        init(_ pointer: UnsafeRawPointer?, _ length: Int) {
            if length < 0 {
                self = .invalid  // a size_t past Int.max
            } else if let pointer {
                self = .bytes(UnsafeRawBufferPointer(start: pointer, count: length))
            } else {
                self = length == 0 ? .null : .invalid
            }
        }

        /// The bytes copied, nil for NULL; `invalid` answers nil from the outer optional.
        var copied: [UInt8]?? {
            switch self {
            case .null: .some(nil)
            case .bytes(let buffer): .some(Array(buffer))
            case .invalid: nil
            }
        }
    }

    /// A NUL-terminated string's bytes; empty for NULL.
    static func bytes(_ text: UnsafePointer<CChar>?) -> [UInt8] {
        guard let text else { return [] }
        return Array(UnsafeRawBufferPointer(start: text, count: strlen(text)))
    }

    /// A required name: nil for NULL or empty.
    private static func name(_ text: UnsafePointer<CChar>?) -> String? {
        guard let text else { return nil }
        return HostArguments.name(UnsafeRawBufferPointer(start: text, count: strlen(text)))
    }

    /// Runs `body` with `bytes` and a NUL after them, as a C string of `bytes.count` bytes.
    static func withCString<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
        (bytes + [0]).withUnsafeBufferPointer { text in text.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }

    static let invalid = Int32(SH_INVALID)

    /// Every member, `host_data` given.
    private static func table(_ data: UnsafeMutableRawPointer) -> sh_host {
        sh_host(
            size: UInt32(MemoryLayout<sh_host>.size),
            version: SH_HOST_VERSION,
            host_data: data,
            host_version: HostVersion.cString,
            log: { host, level, message in
                guard let functions = HostAdapter.functions(host) else { return }
                functions.logLine(HostArguments.level(level), message.map { String(cString: $0) } ?? "")
            },
            post: { host, name, json, length in
                guard let functions = HostAdapter.functions(host), let name = HostAdapter.name(name),
                    let json = Bytes(json, length).copied
                else {
                    return HostAdapter.invalid
                }
                return functions.post(name: name, json: json)
            },
            app_state: { host in
                HostAdapter.functions(host)?.appState() ?? AppState.notRunning.rawValue
            },
            store_get: { host, key, buffer, capacity, length in
                // A NULL buffer only with a capacity of 0; a capacity past Int.max is a size_t the
                // service may pass (only the value's length is ever written).
                guard let functions = HostAdapter.functions(host), buffer != nil || capacity == 0 else {
                    return HostAdapter.invalid
                }
                let read = functions.storeGet(key: HostAdapter.bytes(key), capacity: capacity).fitting(capacity)
                if read.result == SH_OK || read.result == SH_TOO_SMALL { length?.pointee = read.length }
                if read.result == SH_OK, let value = read.value, let buffer, !value.isEmpty {
                    value.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                }
                return read.result
            },
            store_set: { host, key, value, length in
                guard let functions = HostAdapter.functions(host) else { return HostAdapter.invalid }
                switch Bytes(value, length) {
                case .invalid: return HostAdapter.invalid
                case .null:
                    return functions.storeSet(
                        key: HostAdapter.bytes(key), value: UnsafeRawBufferPointer(start: nil, count: 0))
                case .bytes(let buffer): return functions.storeSet(key: HostAdapter.bytes(key), value: buffer)
                }
            },
            store_remove: { host, key in
                HostAdapter.functions(host)?.storeRemove(key: HostAdapter.bytes(key)) ?? HostAdapter.invalid
            },
            store_keys: { host, each, context in
                guard let functions = HostAdapter.functions(host), let each else { return HostAdapter.invalid }
                let (result, keys) = functions.storeKeys()
                for key in keys { HostAdapter.withCString(key) { each(context, $0) } }
                return result
            },
            get_extension: { host, id in
                guard HostAdapter.functions(host) != nil, let id else { return nil }
                return HostExtensions.table(String(cString: id))
            },
            subscribe: { host, name in
                guard let functions = HostAdapter.functions(host), let name = HostAdapter.name(name) else {
                    return HostAdapter.invalid
                }
                return functions.subscribe(name)
            },
            unsubscribe: { host, name in
                guard let functions = HostAdapter.functions(host), let name else { return HostAdapter.invalid }
                return functions.unsubscribe(String(cString: name))
            },
            register_for_remote_notifications: { host in
                HostAdapter.functions(host)?.registerForRemoteNotifications() ?? HostAdapter.invalid
            },
            notification_settings: { host, allowed in
                guard let functions = HostAdapter.functions(host) else { return HostAdapter.invalid }
                let settings = functions.notificationSettings()
                allowed?.pointee = settings.allowed
                return settings.status
            },
            request_authorization: { host, options in
                HostAdapter.functions(host)?.requestAuthorization(options) ?? HostAdapter.invalid
            },
            set_scene_restoration: { host, scene, json, length in
                guard let functions = HostAdapter.functions(host), let json = Bytes(json, length).copied else {
                    return HostAdapter.invalid
                }
                return functions.setSceneRestoration(scene: scene, json: json)
            },
            control: { host, json, length, reply, context in
                guard let functions = HostAdapter.functions(host), let reply,
                    case .bytes(let request) = Bytes(json, length), length > 0
                else {
                    return HostAdapter.invalid
                }
                let target = ControlReplyTarget(function: reply, context: context)
                return functions.control(Array(request)) { answer in target.call(answer) }
            },
            request: { host, name, json, length, reply, context in
                guard let functions = HostAdapter.functions(host), let name = HostAdapter.name(name), let reply,
                    let json = Bytes(json, length).copied
                else { return HostAdapter.invalid }
                let target = RequestReplyTarget(function: reply, context: context)
                return functions.request(name: name, json: json) { answer in target.call(answer) }
            })
    }

    /// Where a control request's reply goes: the service's function and its context pointer.
    private struct ControlReplyTarget: @unchecked Sendable {
        // @unchecked: the host never touches `context`, only hands it back to the service's
        // function once, on the main thread, as host.h promises the service.
        let function: sh_control_reply_fn
        let context: UnsafeMutableRawPointer?

        func call(_ answer: [UInt8]) {
            withCString(answer) { function(context, $0, answer.count) }
        }
    }

    /// Where a service request's reply goes: the asker's function and its context pointer.
    private struct RequestReplyTarget: @unchecked Sendable {
        // @unchecked: the host never touches `context`, only hands it back to the asker's
        // function once, on the main thread, as host.h promises.
        let function: sh_request_reply_fn
        let context: UnsafeMutableRawPointer?

        func call(_ reply: RequestReply) {
            withCString(reply.json) { function(context, reply.result, reply.json.isEmpty ? nil : $0, reply.json.count) }
        }
    }
}
