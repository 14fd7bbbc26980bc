/// Where the reply to a `<prefix>/ctl` command may be published: its `replyTo`, checked by
/// this rule before the command is carried out. A command whose `replyTo` breaks it is
/// refused (`mqtt.commandRefused reason=replyTopic`), acknowledged and recorded, and nothing is
/// published; with `"commands": false` nothing is ever published in reply.
///
/// The bridge publishes under its broker identity, so a reply must not become input for this
/// host or another one, nor something the broker disconnects it for. A reply topic is:
/// - 1 to ``maxBytes`` bytes of UTF-8, without U+0000 or another control character;
/// - a topic name, not a filter: no `+` or `#` (the broker would drop the connection);
/// - not the broker's (`$SYS/…`, anything starting with `$`);
/// - without an empty level (no leading or trailing `/`, no `//`);
/// - in the fleet's namespace (`servicehost/…`) only `servicehost/<hostId>/reply` or below it
///   (never under `servicehost/all`), and under this host's own `<prefix>` only
///   `<prefix>/reply` or below it: every inbound topic (`push`, `url`, `post/NAME`, `ctl`) and
///   every host's `state` are in those namespaces and outside `reply`.
///
/// A custom `prefix` of another host outside `servicehost/` is not known here: the broker's ACL
/// is the boundary (write access to `<prefix>/state` and `<prefix>/reply/#` only).
enum ReplyTopic {
    /// The longest reply topic, in bytes of UTF-8.
    static let maxBytes = 256

    /// Why `topic` may not take a reply from the host whose topics are under `prefix`, or nil
    /// when it may.
    static func refusal(_ topic: String, prefix: String) -> String? {
        let bytes = topic.utf8
        guard !bytes.isEmpty else { return "the reply topic is empty" }
        guard bytes.count <= maxBytes else {
            return "the reply topic is \(bytes.count) bytes, over the limit of \(maxBytes)"
        }
        if bytes.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }) {
            return "the reply topic has a wildcard (+ or #): a topic filter, not a topic name"
        }
        if topic.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return "the reply topic has a control character"
        }
        if topic.hasPrefix("$") { return "the reply topic starts with $ (the broker's own topics)" }
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        if levels.contains(where: \.isEmpty) { return "the reply topic has an empty level" }
        let own = prefix.split(separator: "/", omittingEmptySubsequences: false)
        if levels.starts(with: own) {
            guard levels.count > own.count, levels[own.count] == "reply" else {
                return "the reply topic is one of this host's topics; replies go to \(prefix)/reply or below it"
            }
            return nil
        }
        let fleet = MQTTBridgeSettings.fleetPrefix.split(separator: "/")
        if levels.first == fleet.first {
            guard levels.count > 2, levels[1] != fleet.last, levels[2] == "reply" else {
                return
                    "the reply topic is in the fleet's topics; there replies go to servicehost/HOSTID/reply or below it"
            }
        }
        return nil
    }
}
