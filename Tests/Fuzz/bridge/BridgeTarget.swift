// Fuzz target `bridge`: what MQTTBridge reads besides the broker's packets (those are the
// `mqtt` target's): its `settings` object from services.json, the broker address in it, the
// delivered-message pairs and retained digests it keeps in its store (`mqtt.delivered`,
// `mqtt.retained`, which a crash or a hand edit can leave damaged), a command's `replyTo`, and the
// state one copy hands the next across a reload with the records of its channel (issue 42).
// Compiled from the plugin's own files (Plugins/MQTTBridge/{MQTTBridgeSettings,DeliveredMessages,
// RetainedMessages,ReplyTopic,BridgeHandOver}.swift; the broker address is MQTTCodec's) by scripts/fuzz; seeds in
// Tests/Fuzz/Corpus/bridge, replayed by MQTTBridgeParserTests.
import MQTTCodec
import ServiceKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    BridgeChecks.settings(bytes)
    BridgeChecks.address(bytes)
    BridgeChecks.delivered(bytes)
    BridgeChecks.retained(bytes)
    BridgeChecks.replyTopic(bytes)
    BridgeChecks.desired(bytes)
    BridgeChecks.handOver(bytes)
    return 0
}

/// What must hold for every input; a refusal must say why, a trap is the finding.
enum BridgeChecks {
    /// The input as a restored state (``BridgeHandOver``) and as the channel's records: what is
    /// read is written back to the same bytes; a refusal says why.
    static func handOver(_ bytes: [UInt8]) {
        do throws(BridgeHandOver.Problem) {
            let state = try BridgeHandOver.parse(bytes)
            guard state.encoded == bytes else { fatalError("bridge: a hand-over does not write back") }
        } catch {
            guard !error.description.isEmpty else { fatalError("bridge: a hand-over refused without a reason") }
        }
        var buffer = bytes
        do throws(BridgeHandOver.Problem) {
            var written: [UInt8] = []
            while let record = try ChannelRecord.next(from: &buffer) { written += record.encoded }
            guard written + buffer == bytes else { fatalError("bridge: channel records do not write back") }
        } catch {
            guard !error.description.isEmpty else { fatalError("bridge: a channel record refused without a reason") }
        }
    }

    /// The input as a fleet's `<prefix>/desired` payload, and as the stored fleet record.
    static func desired(_ bytes: [UInt8]) {
        _ = FleetRecord(stored: bytes)
        do throws(FleetDesired.Problem) {
            let desired = try FleetDesired.parse(bytes)
            guard FleetDesired.isDigest(desired.digest), (1...FleetDesired.maxSize).contains(desired.size),
                (1...FleetDesired.maxChunks).contains(desired.chunks), desired.chunks <= desired.size,
                desired.source.hasPrefix(FleetDesired.bundlesPrefix)
            else { fatalError("bridge: desired state \(desired) accepted") }
            for index in [0, desired.chunks - 1] {
                let topic = desired.chunks == 1 ? desired.source : desired.source + "/\(index)"
                guard desired.chunkIndex(topic) == index else { fatalError("bridge: piece \(index) not found") }
            }
            guard desired.chunkIndex(desired.source + "/\(desired.chunks)") == nil else {
                fatalError("bridge: a piece past the last accepted")
            }
        } catch {
            guard !error.description.isEmpty else { fatalError("bridge: a refusal without a reason") }
        }
    }

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

    /// The input as the store's `mqtt.retained` value: the same round trip.
    static func retained(_ bytes: [UInt8]) {
        let restored = RetainedMessages()
        restored.restore(bytes)
        let written = restored.insert(0x0123_4567_89AB_CDEF)
        guard written.count % 8 == 0, written.count <= RetainedMessages.capacity * 8,
            restored.contains(0x0123_4567_89AB_CDEF)
        else { fatalError("bridge: \(written.count) bytes written for the retained digests") }
        let again = RetainedMessages()
        again.restore(written)
        guard again.insert(0x0123_4567_89AB_CDEF) == written else {
            fatalError("bridge: the retained digests do not read back")
        }
    }

    /// The input as a command's `replyTo`: a topic the rule allows is a valid MQTT topic name
    /// outside this host's and the fleet's inbound topics.
    static func replyTopic(_ bytes: [UInt8]) {
        guard let topic = String(validating: bytes, as: UTF8.self) else { return }
        guard let refusal = ReplyTopic.refusal(topic, prefix: "servicehost/h1") else {
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
            guard (1...ReplyTopic.maxBytes).contains(bytes.count), !bytes.contains(where: { "+#\0".utf8.contains($0) }),
                !topic.hasPrefix("$"), !levels.contains(where: \.isEmpty),
                levels.first != "servicehost" || (levels.count > 2 && levels[1] != "all" && levels[2] == "reply")
            else { fatalError("bridge: reply topic \(topic.debugDescription) allowed") }
            return
        }
        guard !refusal.isEmpty else { fatalError("bridge: a reply topic refused without a reason") }
    }
}
