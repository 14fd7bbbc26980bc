// Fuzz target `mqtt`: bytes from a broker through MQTTBridge's frame reader (issue 17). Checks
// what must hold for every packet the reader accepts: it encodes to bytes that decode to the
// same packet; a PUBLISH over the limit is read past without being held; an MQTT 5 property
// list read from the input encodes back to the same list. The first byte's bit 6 picks the
// version (MQTT 5: reason codes and properties in every packet, issue 41). A refusal must be an
// MQTTError (a trap or an overflow is the finding).
//
// Built and run by scripts/fuzz (`scripts/fuzz mqtt`), with the MQTTCodec module compiled
// from Plugins/MQTTBridge/Codec; seeds in Tests/Fuzz/Corpus/mqtt, replayed by MQTTCodecTests.
import MQTTCodec

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    properties(bytes.dropFirst())
    // The first byte picks how the input is cut into reads, so split packets are covered too.
    let step = max(1, Int(bytes.first ?? 0) % 17)
    // Its high bit picks a small limit, so oversized messages are read past too (issue 36).
    var reader = MQTTFrameReader(
        maxPacket: (bytes.first ?? 0) >= 128 ? 64 : 1 << 16, version: (bytes.first ?? 0) & 0x40 != 0 ? .v5 : .v3_1_1)
    var offset = 1
    while offset < bytes.count {
        reader.append(bytes[offset..<min(offset + step, bytes.count)])
        offset += step
        do {
            while let frame = try reader.nextFrame() {
                // A message read past: only its variable header (at most 65 539 bytes) and one
                // read were ever held.
                guard case .packet(let packet) = frame else {
                    guard reader.pending <= 65539 + step else { fatalError("\(reader.pending) bytes held") }
                    continue
                }
                var again = MQTTFrameReader(maxPacket: 1 << 17, version: reader.version)
                again.append(packet.encoded(version: reader.version))
                guard let decoded = try? again.next(), decoded == packet else {
                    fatalError("\(packet.name) does not survive encode and decode: \(packet)")
                }
            }
        } catch {
            return 0
        }
    }
    return 0
}

/// The input as an MQTT 5 property list (issue 41): one that is read encodes to bytes that read
/// back as the same list, with nothing left over.
func properties(_ bytes: ArraySlice<UInt8>) {
    guard let read = try? MQTTProperties.read(bytes, packet: "PUBLISH") else { return }
    let again = read.properties.encoded()
    guard let back = try? MQTTProperties.read(again[...], packet: "PUBLISH"), back.properties == read.properties,
        back.rest.isEmpty
    else { fatalError("properties do not survive encode and read: \(read.properties)") }
}
