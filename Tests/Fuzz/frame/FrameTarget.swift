// Fuzz target `frame`: bytes a worker (or the host) could write on the worker channel,
// through FrameDecoder and then each frame's payload decoder: the host's HostCallForwarder
// (with a stand-in sh_host table, so store calls are decoded and carried out), the load
// failure codec, the worker's event decoder, and the host's readers of a worker's answers
// (an `opened` frame's service ids; a `result` frame's configuration answer, copied into a
// stand-in configurationForConnecting event's out-struct as into the real one). Any WireError is the peer breaking the
// protocol (the host kills that worker); nothing may trap.
import Glibc
import ServiceABI
import ServiceVocabulary

@testable import HostCore

/// The stand-in table: each function checks what the ABI promises it (a real table trusts it).
/// Members are set one by one, so the table still builds when sh_host grows.
nonisolated(unsafe) private var table: sh_host = {
    var t = sh_host()
    t.size = UInt32(MemoryLayout<sh_host>.size)
    t.version = SH_HOST_VERSION
    t.log = { _, _, message in precondition(message != nil) }
    t.post = { _, name, json, length in
        precondition(name != nil && (json != nil || length == 0))
        return Int32(SH_OK)
    }
    t.app_state = { _ in 1 }
    t.store_get = { _, _, buffer, capacity, length in
        precondition(buffer != nil && capacity >= 0)
        length?.pointee = 3
        guard capacity >= 3 else { return Int32(SH_TOO_SMALL) }
        buffer!.storeBytes(of: 0x41, as: UInt8.self)
        return Int32(SH_OK)
    }
    t.store_set = { _, _, value, length in
        // HostTable's rule: NULL only with length 0, and never a negative size_t.
        guard length >= 0, value != nil || length == 0 else { return Int32(SH_INVALID) }
        _ = UnsafeRawBufferPointer(start: length == 0 ? nil : value, count: length).reduce(0, &+)
        return Int32(SH_OK)
    }
    t.store_remove = { _, _ in Int32(SH_NOT_FOUND) }
    t.store_keys = { _, each, context in
        "a.key".withCString { each?(context, $0) }
        return Int32(SH_OK)
    }
    t.get_extension = { _, _ in nil }
    t.subscribe = { _, name in name == nil ? Int32(SH_INVALID) : Int32(SH_OK) }
    t.unsubscribe = { _, name in name == nil ? Int32(SH_INVALID) : Int32(SH_OK) }
    t.register_for_remote_notifications = { _ in Int32(SH_OK) }
    return t
}()

/// The forwarder's channel: replies go to a socket nobody reads, so a reply that does not
/// fit fails with a WireError like a dead peer (never blocks: the other end is closed).
private let forwarder: HostCallForwarder = {
    var pair: [Int32] = [0, 0]
    precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
    close(pair[1])
    let forwarder = HostCallForwarder(channel: .adopting(pair[0]))
    withUnsafePointer(to: &table) { forwarder.setTable($0, for: 0) }
    return forwarder
}()

/// A host's configurationForConnecting event, whose out-struct a `result` frame's answer fills
/// (64 bytes of settings buffer); made once, like the table. libFuzzer calls the target on one
/// thread, the only one that touches it.
nonisolated(unsafe) private let configurationEvent: UnsafePointer<sh_event> = {
    let out = UnsafeMutablePointer<sh_scene_configuration>.allocate(capacity: 1)
    out.initialize(to: sh_scene_configuration())
    out.pointee.size = UInt32(MemoryLayout<sh_scene_configuration>.size)
    out.pointee.settings = UnsafeMutablePointer<CChar>.allocate(capacity: 64)
    out.pointee.settings_capacity = 64
    let connection = UnsafeMutablePointer<sh_scene_connection>.allocate(capacity: 1)
    connection.initialize(to: sh_scene_connection())
    connection.pointee.size = UInt32(MemoryLayout<sh_scene_connection>.size)
    connection.pointee.configuration = out
    let event = UnsafeMutablePointer<sh_event>.allocate(capacity: 1)
    event.initialize(to: sh_event())
    event.pointee.size = UInt32(MemoryLayout<sh_event>.size)
    event.pointee.kind = EventKind.configurationForConnecting.rawValue
    event.pointee.data = UnsafeRawPointer(connection)
    return UnsafePointer(event)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var decoder = FrameDecoder()
    decoder.append(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    let scenes = WorkerScenes()
    while true {
        let frame: Frame
        do {
            guard let next = try decoder.next() else { break }
            frame = next
        } catch { break }
        do throws(WireError) {
            switch frame.type {
            case .complete, .log, .post, .subscribe, .registerForRemoteNotifications, .call, .request:
                try forwarder.perform(frame)
            case .requestReply:
                try WorkerRequests.shared.deliver(frame)
            case .openFailed:
                var r = frame.reader
                _ = try LoadFailureCodec.decode(&r)
            case .event:
                var r = frame.reader
                let arena = EventArena()
                _ = try EventCodec.decode(&r, arena: arena, scenes: scenes)
            case .opened:
                var r = frame.reader
                _ = try IsolatedPlugin.openedServices(&r)
            case .result:
                var r = frame.reader
                _ = try r.i32("result")
                try EventCodec.readAnswer(&r, for: configurationEvent)
            default:
                var r = frame.reader
                while !r.isAtEnd { _ = try r.blob("anything") }
            }
        } catch {
            _ = error.description
        }
    }
    return 0
}
