import Foundation

/// `servicehost-bench --compare A.json B.json` (scripts/bench --compare): two runs'
/// bench-results.json side by side, row by row, with each ratio's spread over its repetitions
/// and how B's ratio moved against A's. A row in one run only is listed with "—" for the other.
enum Compare {
    /// One row of a results file: its ratio and the ratio's range over the repetitions.
    struct Entry {
        let ratio: Double?
        let low: Double?
        let high: Double?
        let unit: String
        let ours: Double?
    }

    /// One results file: its machine line and its rows by "row · measured", in file order.
    struct Run {
        let machine: String
        let quick: Bool
        let keys: [String]
        let entries: [String: Entry]
    }

    static func read(_ path: String) throws(BenchError) -> Run {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BenchError("--compare: cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let rows = object["rows"] as? [[String: Any]]
        else { throw BenchError("--compare: \(path) is not a bench-results.json (no \"rows\" array)") }
        let machine = (object["machine"] as? [String: Any] ?? [:]).sorted { $0.key < $1.key }
            .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        var keys: [String] = []
        var entries: [String: Entry] = [:]
        for row in rows {
            guard let number = row["row"] as? String, let measured = row["measured"] as? String else { continue }
            let key = number + " · " + measured
            if entries[key] == nil { keys.append(key) }
            entries[key] = Entry(
                ratio: row["ratio"] as? Double, low: row["ratio_min"] as? Double, high: row["ratio_max"] as? Double,
                unit: row["unit"] as? String ?? "", ours: row["ours"] as? Double)
        }
        return Run(machine: machine, quick: object["quick"] as? Bool ?? false, keys: keys, entries: entries)
    }

    /// The markdown comparison of `a` and `b`.
    static func markdown(_ a: Run, _ b: Run, names: (String, String)) -> String {
        func ratio(_ entry: Entry?) -> String {
            guard let entry, let value = entry.ratio else { return "—" }
            var text = Report.format(value, digits: 2) + "×"
            if let low = entry.low, let high = entry.high {
                text += " (" + Report.format(low, digits: 2) + "–" + Report.format(high, digits: 2) + ")"
            }
            return text
        }
        func change(_ old: Entry?, _ new: Entry?) -> String {
            guard let before = old?.ratio, let after = new?.ratio, before > 0 else { return "—" }
            let percent = (after / before - 1) * 100
            // Overlapping spreads: the move is within what the repetitions already varied by.
            var overlap = false
            if let oldLow = old?.low, let oldHigh = old?.high, let newLow = new?.low, let newHigh = new?.high {
                overlap = newLow <= oldHigh && oldLow <= newHigh
            }
            return (percent >= 0 ? "+" : "") + Report.format(percent, digits: 1) + "%"
                + (overlap ? " (within spread)" : "")
        }
        var lines = [
            "A: \(names.0): \(a.machine)\(a.quick ? " (--quick)" : "")",
            "B: \(names.1): \(b.machine)\(b.quick ? " (--quick)" : "")",
            "",
            "| row | measured | A ratio (spread) | B ratio (spread) | B vs A |",
            "| --- | --- | ---: | ---: | ---: |",
        ]
        let partners = partners(a, b)
        var keys = a.keys
        for key in b.keys where a.entries[key] == nil && !partners.values.contains(key) { keys.append(key) }
        for key in keys {
            let parts = key.split(separator: " · ", maxSplits: 1).map(String.init)
            let (old, new) = (a.entries[key], b.entries[key] ?? partners[key].flatMap { b.entries[$0] })
            lines.append(
                "| \(parts[0]) | \(parts.count > 1 ? parts[1] : "") | \(ratio(old)) | \(ratio(new)) | \(change(old, new)) |"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A's rows that B has under another label, by A's label: a label that carries its own
    /// figures ("(429 MB/s)", "(821.1 k events/s …)") differs between runs, so a row left unpaired
    /// is paired with the one row of the other run whose label is the same with every number in
    /// parentheses masked, when exactly one row of each run has that masked label.
    static func partners(_ a: Run, _ b: Run) -> [String: String] {
        // Numbers in parentheses only: "1 KiB" and "4 KiB" stay two rows.
        func masked(_ key: String) -> String {
            var text = ""
            var inNumber = false
            var depth = 0
            for character in key {
                if character == "(" { depth += 1 }
                if character == ")" { depth -= 1 }
                if depth > 0, character.isNumber || (inNumber && (character == "." || character == ",")) {
                    if !inNumber { text.append("#") }
                    inNumber = true
                } else {
                    text.append(character)
                    inNumber = false
                }
            }
            return text
        }
        let onlyA = Dictionary(grouping: a.keys.filter { b.entries[$0] == nil }, by: masked)
        let onlyB = Dictionary(grouping: b.keys.filter { a.entries[$0] == nil }, by: masked)
        var partners: [String: String] = [:]
        for (mask, keys) in onlyA where keys.count == 1 {
            if let others = onlyB[mask], others.count == 1 { partners[keys[0]] = others[0] }
        }
        return partners
    }
}
