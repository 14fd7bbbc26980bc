// Fuzz target `bridge`: what MQTTBridge reads besides the broker's packets (those are the
// `mqtt` target's): its `settings` object from services.json, the broker address in it, and
// the delivered-message pairs it keeps in its store (`mqtt.delivered`, which a crash or a
// hand edit can leave damaged). Compiled from the plugin's own files
// (Plugins/MQTTBridge/{MQTTBridgeSettings,BrokerAddress,DeliveredMessages}.swift) by
// scripts/fuzz; seeds in Tests/Fuzz/Corpus/bridge, replayed by MQTTBridgeParserTests.
import MQTTCodec
import ServiceKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    BridgeChecks.settings(bytes)
    BridgeChecks.address(bytes)
    BridgeChecks.delivered(bytes)
    return 0
}

/// What must hold for every input; a refusal must say why, a trap is the finding.
enum BridgeChecks {
    /// The input as the `settings` object of MQTTBridge's entry in services.json.
    static func settings(_ bytes: [UInt8]) {
        guard var value = try? JSONValue(parsing: bytes) else { return }
        // Reading the password file is not parsing: the target names no file.
        if case .object(var members) = value {
            members["passwordFile"] = nil
            value = .object(members)
        }
        do throws(MQTTBridgeSettings.Problem) {
            guard let settings = try MQTTBridgeSettings.read(value) else { fatalError("bridge: settings read as none") }
            valid(settings.broker)
            guard !settings.hostID.isEmpty, !settings.hostID.utf8.contains(where: { "/+#".utf8.contains($0) }),
                (1...65535).contains(settings.clientID.utf8.count),
                !settings.prefix.isEmpty, !settings.prefix.utf8.contains(where: { "+#".utf8.contains($0) }),
                !settings.prefix.hasSuffix("/"),
                settings.keepAlive >= 1, settings.qos <= 1, (1024...(256 << 20)).contains(settings.maxPacket),
                settings.password == nil
            else { fatalError("bridge: settings accepted out of range: \(settings)") }
        } catch {
            guard !error.description.isEmpty else { fatalError("bridge: settings refused without a reason") }
        }
    }

    /// The input as `settings.broker`'s text.
    static func address(_ bytes: [UInt8]) {
        guard bytes.count <= 4096 else { return }
        do throws(MQTTBridgeSettings.Problem) {
            valid(try BrokerAddress.parse(String(decoding: bytes, as: UTF8.self)))
        } catch {
            guard !error.description.isEmpty else { fatalError("bridge: an address refused without a reason") }
        }
    }

    private static func valid(_ address: BrokerAddress) {
        switch address {
        case .tcp(let host, let port):
            guard !host.isEmpty, port > 0 else { fatalError("bridge: accepted \(address)") }
        case .unix(let path):
            guard path.hasPrefix("/"), path.utf8.count < 108 else { fatalError("bridge: accepted \(address)") }
        }
    }

    /// The input as the store's `mqtt.delivered` value: restored, one pair added, and what is
    /// written then restored again gives the same bytes for the same pair.
    static func delivered(_ bytes: [UInt8]) {
        let restored = DeliveredMessages()
        restored.restore(bytes)
        let key = DeliveredMessages.Key(id: 7, digest: 0x0123_4567_89AB_CDEF)
        let written = restored.insert(key)
        guard written.count % 10 == 0, written.count <= DeliveredMessages.capacity * 10, restored.contains(key) else {
            fatalError("bridge: \(written.count) bytes written for the delivered pairs")
        }
        let again = DeliveredMessages()
        again.restore(written)
        guard again.insert(key) == written else { fatalError("bridge: the delivered pairs do not read back") }
    }
}
