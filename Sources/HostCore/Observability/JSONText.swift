/// Minimal JSON text building for traces and `inspect --json`: the host writes JSON but
/// never needs a general encoder on these paths.
enum JSONText {
    /// `text` as a JSON string literal, quotes included.
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A JSON object from already-encoded values, keys in the given order.
    static func object(_ members: KeyValuePairs<String, String>) -> String {
        "{" + members.map { string($0.key) + ":" + $0.value }.joined(separator: ",") + "}"
    }

    /// A JSON array from already-encoded values.
    static func array(_ items: [String]) -> String { "[" + items.joined(separator: ",") + "]" }
}
