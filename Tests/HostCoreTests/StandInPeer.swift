import Glibc
import ServiceABI
import Synchronization

@testable import HostCore

/// The host's end of a worker channel with a stand-in `sh_host` table behind service 0, so
/// tests can feed frames to a HostCallForwarder and read the replies it sends.
final class StandInPeer {
    struct StoreSet: Equatable {
        var valueIsNull: Bool
        var length: Int
    }

    /// The last store_set with a NULL value the stand-in table received (tests run in parallel:
    /// only that case is recorded, and every test that causes it causes the same call).
    static let lastStoreSet = Locked<StoreSet?>(nil)

    let forwarder: HostCallForwarder
    private let worker: Int32
    private let table: UnsafeMutablePointer<sh_host>

    init() throws {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw SystemError.current("socketpair", "") }
        worker = pair[1]
        forwarder = HostCallForwarder(channel: .adopting(pair[0]))
        table = .allocate(capacity: 1)
        table.initialize(to: sh_host())
        table.pointee.size = UInt32(MemoryLayout<sh_host>.size)
        table.pointee.version = SH_HOST_VERSION
        table.pointee.log = { _, _, _ in }
        table.pointee.post = { _, _, _, _ in Int32(SH_OK) }
        table.pointee.app_state = { _ in 1 }
        table.pointee.subscribe = { _, _ in Int32(SH_OK) }
        table.pointee.unsubscribe = { _, _ in Int32(SH_OK) }
        table.pointee.store_get = { _, _, _, _, length in
            length?.pointee = 0
            return Int32(SH_NOT_FOUND)
        }
        table.pointee.store_set = { _, _, value, length in
            // What HostTable answers (Runtime/HostTable.swift): NULL only with a length of 0.
            if value == nil { StandInPeer.lastStoreSet.withLock { $0 = StoreSet(valueIsNull: true, length: length) } }
            return value == nil && length != 0 ? Int32(SH_INVALID) : Int32(SH_OK)
        }
        table.pointee.store_remove = { _, _ in Int32(SH_NOT_FOUND) }
        table.pointee.store_keys = { _, _, _ in Int32(SH_OK) }
        table.pointee.register_for_remote_notifications = { _ in Int32(SH_OK) }
        forwarder.setTable(table, for: 0)
    }

    deinit {
        close(worker)
        table.deallocate()
    }

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
