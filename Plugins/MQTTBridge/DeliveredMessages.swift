import MQTTCodec
import ServiceKit

/// Which QoS 1 messages the host already took, so a redelivery is acknowledged without being
/// delivered twice: the last ``capacity`` (packet id, digest of topic and payload) pairs,
/// kept in the service's store (`mqtt.delivered`) so they survive a kill -9.
///
/// A broker redelivers only messages still in flight (unacknowledged), and reuses a packet
/// id only after its PUBACK, so the recent pairs are enough; the digest keeps a reused id
/// with another message from being mistaken for a duplicate.
final class DeliveredMessages: Sendable {
    struct Key: Hashable, Sendable {
        let id: UInt16
        let digest: UInt64

        init(id: UInt16, digest: UInt64) {
            self.id = id
            self.digest = digest
        }

        init(_ message: MQTTPublish) { self.init(id: message.id ?? 0, digest: Self.digest(message)) }

        /// FNV-1a over the topic, a NUL and the payload.
        static func digest(_ message: MQTTPublish) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in message.topic.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            hash = (hash ^ 0) &* 0x100_0000_01b3
            for byte in message.payload { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return hash
        }
    }

    static let capacity = 1024
    static let storeKey = "mqtt.delivered"

    // Read on the connection thread, written on the main thread.
    private let recent = Locked<[Key]>([])

    /// Restores the pairs from the store's bytes (10 per pair); a damaged tail is ignored.
    func restore(_ bytes: [UInt8]) {
        var keys: [Key] = []
        var index = 0
        while index + 10 <= bytes.count {
            let id = UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
            var digest: UInt64 = 0
            for offset in 2..<10 { digest = digest << 8 | UInt64(bytes[index + offset]) }
            keys.append(Key(id: id, digest: digest))
            index += 10
        }
        recent.withLock { $0 = Array(keys.suffix(Self.capacity)) }
    }

    func contains(_ key: Key) -> Bool { recent.withLock { $0.contains(key) } }

    /// The bytes to store (or hand over, ``BridgeHandOver``) for the pairs held.
    var stored: [UInt8] { recent.withLock { Self.bytes($0) } }

    /// Records `key` and returns the bytes to store.
    func insert(_ key: Key) -> [UInt8] {
        recent.withLock { keys in
            keys.removeAll { $0.id == key.id }  // an id names one message at a time
            keys.append(key)
            if keys.count > Self.capacity { keys.removeFirst(keys.count - Self.capacity) }
            return Self.bytes(keys)
        }
    }

    private static func bytes(_ keys: [Key]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(keys.count * 10)
        for key in keys {
            bytes.append(UInt8(key.id >> 8))
            bytes.append(UInt8(key.id & 0xFF))
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: key.digest >> UInt64(shift)))
            }
        }
        return bytes
    }
}

/// PUBACKs go out in the order the messages arrived (MQTT 3.1.1, 4.6), even when the host
/// answers a later message first; a redelivered copy of a message still with the host waits
/// for that message's answer instead of being delivered again.
final class AckOrder: Sendable {
    private struct Entry {
        let ticket: UInt64
        let id: UInt16
        var done = false
        /// A place held for PUBACKs sent by someone else (``hold()``): nothing is sent for it.
        var silent = false
    }

    private struct State {
        var entries: [Entry] = []
        var next: UInt64 = 0
        /// Messages with the host, and the tickets waiting for each one's answer.
        var withHost: [DeliveredMessages.Key: [UInt64]] = [:]
    }

    private let state = Locked(State())

    /// A place in the order for the message with packet id `id`. `key` non-nil: whether the
    /// same message is already with the host (then this ticket completes with it).
    func enqueue(id: UInt16, key: DeliveredMessages.Key?) -> (ticket: UInt64, alreadyWithHost: Bool) {
        state.withLock { state in
            state.next += 1
            state.entries.append(Entry(ticket: state.next, id: id))
            guard let key else { return (state.next, false) }
            if state.withHost[key] != nil {
                state.withHost[key]!.append(state.next)
                return (state.next, true)
            }
            state.withHost[key] = [state.next]
            return (state.next, false)
        }
    }

    /// Marks `ticket` (and, for `key`, every copy waiting on it) answered; returns the packet
    /// ids now due, in order. Call ``send(_:)`` with them while holding nothing else.
    func complete(_ ticket: UInt64, key: DeliveredMessages.Key?, send: (UInt16) -> Void) {
        state.withLock { state in
            var tickets: Set<UInt64> = [ticket]
            if let key, let waiting = state.withHost.removeValue(forKey: key) { tickets.formUnion(waiting) }
            for index in state.entries.indices where tickets.contains(state.entries[index].ticket) {
                state.entries[index].done = true
            }
            while let first = state.entries.first, first.done {
                if !first.silent { send(first.id) }
                state.entries.removeFirst()
            }
        }
    }

    /// A place for the PUBACKs the copy this one replaced still sends (issue 42's hand-over):
    /// every later one waits until ``complete(_:key:send:)`` is called with the ticket.
    func hold() -> UInt64 {
        state.withLock { state in
            state.next += 1
            state.entries.append(Entry(ticket: state.next, id: 0, silent: true))
            return state.next
        }
    }

    /// A new connection: the broker redelivers whatever was not acknowledged on the old one,
    /// so its places are dropped (messages still with the host stay known).
    func reset() {
        state.withLock { $0.entries.removeAll() }
    }
}
