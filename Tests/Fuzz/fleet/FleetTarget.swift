// Fuzz target `fleet`: what `host fleet` reads from the broker, which any client of it can
// publish (issue 41): the rollout's record retained on `servicehost/rollouts/current` (resumed
// from, its waves sliced), and a host's retained state, report and desired state as the
// fleet's view reads them (outcomes, failing services), and any topic under the hosts' root
// (`servicehost`, or `--prefix`'s). scripts/fuzz builds it.
import Glibc
import MQTTCodec
import ServiceJSON

@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    // A record that reads slices every wave, and reads back the same.
    if let record = FleetRolloutRecord(text) {
        for index in record.waves.indices { _ = record.members(index) }
        guard FleetRolloutRecord(record.json().serialized) == record else {
            fatalError("fleet: a record does not read back: \(text)")
        }
    }
    // The same bytes as each retained message of one host, then read as the status does; and
    // as a topic (any client picks its topics); under the default root and a `--prefix` one.
    for root in [FleetView.defaultRoot, "site/a"] {
        var view = FleetView([], root: root)
        view.take(MQTTPublish(topic: text, payload: Array(#"{"status":"online"}"#.utf8), retain: true))
        view.take(MQTTPublish(topic: root + "/" + text, payload: bytes, retain: true))
        for kind in ["state", "reported", "desired"] {
            view.take(MQTTPublish(topic: FleetView.topic("h1", kind, root: root), payload: bytes, retain: true))
        }
        view.take(MQTTPublish(topic: FleetRolloutRecord.topic, payload: bytes, retain: true))
        for host in view.hosts {
            _ = view.failing(host)
            _ = view.outcome(host, digest: String(repeating: "a", count: 64))
        }
        _ = FleetStatus.json(view, hosts: view.hosts).serialized
        _ = FleetStatus.text(view, hosts: view.hosts)
    }
    return 0
}
