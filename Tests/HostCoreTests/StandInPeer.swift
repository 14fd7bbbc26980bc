import Glibc
import ServiceABI
import Synchronization

@testable import HostCore

/// The host's end of a worker channel with stand-in host functions behind service 0, so
/// tests can feed frames to a HostCallForwarder and read the replies it sends.
final class StandInPeer {
    /// Host functions that answer fixed results and record each store_set.
    final class Functions: HostFunctions {
        struct StoreSet: Equatable {
            var key: [UInt8]
            var length: Int
        }

        /// Every store_set that reached the functions, in order.
        let storeSets = Locked<[StoreSet]>([])

        func logLine(_ level: LogLevel, _ message: String) {}
        func post(name: String, json: [UInt8]?) -> Int32 { Int32(SH_OK) }
        func appState() -> Int32 { 1 }
        func storeGet(key: [UInt8], capacity: Int) -> StoreRead { .failed(Int32(SH_NOT_FOUND)) }
        func storeSet(key: [UInt8], value: UnsafeRawBufferPointer) -> Int32 {
            storeSets.withLock { $0.append(StoreSet(key: key, length: value.count)) }
            return Int32(SH_OK)
        }
        func storeRemove(key: [UInt8]) -> Int32 { Int32(SH_NOT_FOUND) }
        func storeKeys() -> (result: Int32, keys: [[UInt8]]) { (Int32(SH_OK), []) }
        func subscribe(_ name: String) -> Int32 { Int32(SH_OK) }
        func unsubscribe(_ name: String) -> Int32 { Int32(SH_OK) }
        func registerForRemoteNotifications() -> Int32 { Int32(SH_OK) }
        func notificationSettings() -> (status: Int32, allowed: UInt32) { (0, 0) }
        func requestAuthorization(_ options: UInt32) -> Int32 { 0 }
        func setSceneRestoration(scene: UInt64, json: [UInt8]?) -> Int32 { Int32(SH_NOT_FOUND) }
        func control(_ json: [UInt8], reply: @escaping @Sendable ([UInt8]) -> Void) -> Int32 { Int32(SH_UNSUPPORTED) }
        func request(name: String, json: [UInt8]?, reply: @escaping @Sendable (RequestReply) -> Void) -> Int32 {
            Int32(SH_NOT_FOUND)
        }
        func beginBackgroundTask(name: String, expired: @escaping @MainActor @Sendable (UInt32) -> Void) -> UInt32 { 0 }
        func endBackgroundTask(_ task: UInt32) -> Int32 { Int32(SH_NOT_FOUND) }
        func reportHealth(_ status: Int32, reason: String?) -> Int32 { Int32(SH_OK) }
        func setNotificationCategories(json: [UInt8]) -> Int32 { Int32(SH_UNSUPPORTED) }
        func deploy(
            directory: String, probationMilliseconds: UInt32, done: @escaping @Sendable (RequestReply) -> Void
        ) -> Int32 { Int32(SH_UNSUPPORTED) }
    }

    let forwarder: HostCallForwarder
    let functions = Functions()
    private let worker: Int32

    init() throws {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
            throw SystemError.current("socketpair", "")
        }
        worker = pair[1]
        forwarder = HostCallForwarder(channel: .adopting(pair[0]))
        forwarder.setFunctions(functions, for: 0)
    }

    deinit { close(worker) }

    /// The next reply frame the forwarder sent, as a reader; nil when none is waiting.
    func reply() throws -> WireReader? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = recv(worker, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        guard n > 0 else { return nil }
        var decoder = FrameDecoder()
        buffer[..<n].withUnsafeBytes { decoder.append($0) }
        return try decoder.next()?.reader
    }
}
