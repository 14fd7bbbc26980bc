// Fuzz target `frame`: bytes a worker (or the host) could write on the worker channel,
// through FrameDecoder and then each frame's payload decoder: the host's HostCallForwarder
// (with stand-in host functions, so store calls are decoded and carried out), the load
// failure codec, the worker's event decoder, and the host's readers of a worker's answers
// (an `opened` frame's service ids; a `result` frame's configuration answer, copied into a
// stand-in configurationForConnecting event's out-struct as into the real one). Any WireError is the peer breaking the
// protocol (the host kills that worker); nothing may trap.
import Glibc
import ServiceABI
import ServiceVocabulary

@testable import HostCore

/// Stand-in host functions: each checks what HostAdapter promises an implementation (the
/// real ones trust it), so a frame that slips an argument past the forwarder's checks traps.
private final class StandIn: HostFunctions {
    func logLine(_ level: LogLevel, _ message: String) { precondition((0...3).contains(level.rawValue)) }
    func post(name: String, json: [UInt8]?) -> Int32 {
        precondition(!name.isEmpty)
        return Int32(SH_OK)
    }
    func appState() -> Int32 { 1 }
    func storeGet(key: [UInt8], capacity: Int) -> StoreRead {
        precondition(capacity >= 0)
        return StoreRead(result: Int32(SH_OK), length: 3, value: [0x41, 0x42, 0x43])
    }
    func storeSet(key: [UInt8], value: UnsafeRawBufferPointer) -> Int32 {
        _ = value.reduce(0, &+)
        return Int32(SH_OK)
    }
    func storeRemove(key: [UInt8]) -> Int32 { Int32(SH_NOT_FOUND) }
    func storeKeys() -> (result: Int32, keys: [[UInt8]]) { (Int32(SH_OK), [Array("a.key".utf8)]) }
    func subscribe(_ name: String) -> Int32 {
        precondition(!name.isEmpty)
        return Int32(SH_OK)
    }
    func unsubscribe(_ name: String) -> Int32 { Int32(SH_OK) }
    func registerForRemoteNotifications() -> Int32 { Int32(SH_OK) }
    func notificationSettings() -> (status: Int32, allowed: UInt32) { (0, 0) }
    func requestAuthorization(_ options: UInt32) -> Int32 { 0 }
    func setSceneRestoration(scene: UInt64, json: [UInt8]?) -> Int32 { Int32(SH_NOT_FOUND) }
    func control(_ json: [UInt8], reply: @escaping @Sendable ([UInt8]) -> Void) -> Int32 { Int32(SH_UNSUPPORTED) }
    func beginBackgroundTask(name: String, expired: @escaping @MainActor @Sendable (UInt32) -> Void) -> UInt32 { 0 }
    func endBackgroundTask(_ task: UInt32) -> Int32 { Int32(SH_NOT_FOUND) }
    func reportHealth(_ status: Int32, reason: String?) -> Int32 {
        precondition(HealthStatus(rawValue: status) != nil)
        return Int32(SH_OK)
    }
    func setNotificationCategories(json: [UInt8]) -> Int32 { json.count <= 65536 ? Int32(SH_OK) : Int32(SH_INVALID) }
    func request(name: String, json: [UInt8]?, reply: @escaping @Sendable (RequestReply) -> Void) -> Int32 {
        precondition(!name.isEmpty)
        return Int32(SH_NOT_FOUND)
    }
    func deploy(directory: String, probationMilliseconds: UInt32, done: @escaping @Sendable (RequestReply) -> Void)
        -> Int32
    {
        precondition(directory.hasPrefix("/") && probationMilliseconds <= 86_400_000)
        return Int32(SH_UNSUPPORTED)
    }
}

/// The forwarder's channel: replies go to a socket nobody reads, so a reply that does not
/// fit fails with a WireError like a dead peer (never blocks: the other end is closed).
private let forwarder: HostCallForwarder = {
    var pair: [Int32] = [0, 0]
    precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
    close(pair[1])
    let forwarder = HostCallForwarder(channel: .adopting(pair[0]))
    forwarder.setFunctions(StandIn(), for: 0)
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
            case .complete, .log, .post, .subscribe, .registerForRemoteNotifications, .call, .request, .deploy:
                try forwarder.perform(frame)
            case .requestReply:
                // libFuzzer calls this function on the process's main thread, where a worker
                // delivers replies (its main loop).
                try MainActor.assumeIsolated {
                    Result { () throws(WireError) in try WorkerRequests.shared.deliver(frame) }
                }.get()
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
