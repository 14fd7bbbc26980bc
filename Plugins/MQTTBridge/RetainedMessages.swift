import MQTTCodec
import ServiceKit

/// The retained messages the host already took, so the copy a broker sends at every
/// subscription (every reconnection, every host start) is not delivered again: the digests of
/// the last ``capacity`` (topic, payload) pairs delivered with the retain flag, kept in the
/// service's store (`mqtt.retained`) so they survive reconnections and host restarts.
///
/// What retained means per inbound topic (Fleet.md, "Retained messages"):
/// - `push`, `url`, `post/NAME`: delivered once by digest. The publisher retained it for hosts
///   that were not there (a notice, the page a kiosk shows), so a host that first sees it
///   takes it; the same topic and payload retained again is acknowledged, not delivered
///   (`mqtt.duplicate retained=true`); a new payload is a new message.
/// - `ctl`: never acted on (`mqtt.commandRefused reason=retained`): a retained command was
///   set for whoever comes later, by anyone who could once publish there, and a host that
///   starts tomorrow must not carry out yesterday's `reload`.
///
/// MQTT 3.1.1 (3.3.1.3) sets the retain flag only on the copy sent because of a subscription;
/// a message published with retain while the host is connected arrives without it and is an
/// ordinary message.
final class RetainedMessages: Sendable {
    static let capacity = 1024
    static let storeKey = "mqtt.retained"

    // Read and written on the connection thread and the main thread.
    private let digests = Locked<[UInt64]>([])

    /// Restores the digests from the store's bytes (8 per digest); a damaged tail is ignored.
    func restore(_ bytes: [UInt8]) {
        var restored: [UInt64] = []
        var index = 0
        while index + 8 <= bytes.count {
            var digest: UInt64 = 0
            for offset in 0..<8 { digest = digest << 8 | UInt64(bytes[index + offset]) }
            restored.append(digest)
            index += 8
        }
        digests.withLock { $0 = Array(restored.suffix(Self.capacity)) }
    }

    func contains(_ digest: UInt64) -> Bool { digests.withLock { $0.contains(digest) } }

    /// The bytes to store (or hand over, ``BridgeHandOver``) for the digests held.
    var stored: [UInt8] { digests.withLock { Self.bytes($0) } }

    /// Records `digest` (as the newest) and returns the bytes to store.
    func insert(_ digest: UInt64) -> [UInt8] {
        digests.withLock { digests in
            digests.removeAll { $0 == digest }
            digests.append(digest)
            if digests.count > Self.capacity { digests.removeFirst(digests.count - Self.capacity) }
            return Self.bytes(digests)
        }
    }

    private static func bytes(_ digests: [UInt64]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digests.count * 8)
        for digest in digests {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: digest >> UInt64(shift)))
            }
        }
        return bytes
    }
}
