/// One line of the results table: our figure against a baseline from the same run.
struct Row {
    /// What a figure measures, for formatting: time in ns, size in bytes, or a plain count.
    enum Unit: String {
        case nanoseconds = "ns"
        case bytes = "bytes"
        case count = "count"
    }

    /// The row number ("1", "3", …).
    let row: String
    /// What was measured and against which baseline.
    let measured: String
    let unit: Unit
    let ours: Double?
    let baseline: Double?
    /// The target as text ("≤ 1.5×"), or "—" when the issue sets none.
    let target: String
    /// The largest ours ÷ baseline that meets the target, or nil.
    var maxRatio: Double? = nil
    /// For count targets: the largest figure that meets it (allocations: 0).
    var maxValue: Double? = nil
    /// Why the row has no figures yet, or nil.
    var pending: String? = nil

    /// ours ÷ baseline: below 1 means ours is smaller (faster, lighter).
    var ratio: Double? {
        guard let ours, let baseline, baseline > 0 else { return nil }
        return ours / baseline
    }

    /// Whether the target is met; nil when there is none (or no figure).
    var met: Bool? {
        if let maxRatio, let ratio { return ratio <= maxRatio }
        if let maxValue, let ours { return ours <= maxValue }
        return nil
    }

    /// A placeholder for a row whose feature has not landed.
    static func pending(_ row: String, _ measured: String, target: String, needs: String) -> Row {
        Row(row: row, measured: measured, unit: .count, ours: nil, baseline: nil, target: target, pending: needs)
    }
}

/// The table and the JSON file.
enum Report {
    /// The markdown table printed by scripts/bench and quoted in the README.
    static func markdown(_ rows: [Row]) -> String {
        var lines = [
            "| row | measured | ours | baseline | ratio | target | met? |",
            "| --- | --- | ---: | ---: | ---: | --- | --- |",
        ]
        for row in rows {
            let met: String
            if let pending = row.pending {
                met = "pending: \(pending)"
            } else {
                switch row.met {
                case true?: met = "yes"
                case false?: met = "**no** (\(missedBy(row)))"
                case nil: met = "—"
                }
            }
            let ratio = row.ratio.map { format($0, digits: 2) + "×" } ?? "—"
            lines.append(
                "| \(row.row) | \(row.measured) | \(show(row.ours, row.unit)) | \(show(row.baseline, row.unit)) "
                    + "| \(ratio) | \(row.target) | \(met) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// How far a missed target is: "3.1× the limit" or "+2 over".
    private static func missedBy(_ row: Row) -> String {
        if let maxRatio = row.maxRatio, let ratio = row.ratio {
            return format(ratio / maxRatio, digits: 1) + "× the limit"
        }
        if let maxValue = row.maxValue, let ours = row.ours {
            // A time limit reads in its unit ("+0.42 µs"); a count as a plain number.
            return "+"
                + (row.unit == .nanoseconds ? show(ours - maxValue, row.unit) : format(ours - maxValue, digits: 2))
        }
        return "missed"
    }

    /// A figure with its unit: "3.2 ns", "1.41 µs", "12.0 ms", "4.2 MiB", "2".
    static func show(_ value: Double?, _ unit: Row.Unit) -> String {
        guard let value else { return "—" }
        switch unit {
        case .nanoseconds:
            if abs(value) >= 1e6 { return format(value / 1e6, digits: 1) + " ms" }
            if abs(value) >= 1e3 { return format(value / 1e3, digits: 2) + " µs" }
            return format(value, digits: value < 10 ? 2 : 1) + " ns"
        case .bytes:
            if abs(value) >= 1_048_576 { return format(value / 1_048_576, digits: 1) + " MiB" }
            return format(value / 1024, digits: 1) + " KiB"
        case .count:
            return format(value, digits: value == value.rounded() ? 0 : 2)
        }
    }

    /// `value` with `digits` decimals.
    static func format(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return String(value) }
        var scale = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int((abs(value) * Double(scale)).rounded())
        let whole = String(scaled / scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return sign + whole }
        let fraction = String(scaled % scale)
        return sign + whole + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    /// bench-results.json: the machine, the mode, every row and the raw medians.
    static func json(rows: [Row], machine: [(String, String)], quick: Bool, raw: [(String, Double)]) -> String {
        func string(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case _ where scalar.value < 0x20:
                    out += "\\u00" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        func number(_ value: Double?) -> String { value.map { $0.isFinite ? String($0) : "null" } ?? "null" }
        let rowObjects = rows.map { row in
            "    {\"row\": \(string(row.row)), \"measured\": \(string(row.measured)), \"unit\": \(string(row.unit.rawValue)), "
                + "\"ours\": \(number(row.ours)), \"baseline\": \(number(row.baseline)), \"ratio\": \(number(row.ratio)), "
                + "\"target\": \(string(row.target)), \"met\": \(row.met.map(String.init) ?? "null"), "
                + "\"pending\": \(row.pending.map(string) ?? "null")}"
        }
        let machineObject = machine.map { "\(string($0.0)): \(string($0.1))" }.joined(separator: ", ")
        let rawObject = raw.map { "    \(string($0.0)): \(number($0.1))" }.joined(separator: ",\n")
        return "{\n  \"machine\": {\(machineObject)},\n  \"quick\": \(quick),\n  \"rows\": [\n"
            + rowObjects.joined(separator: ",\n") + "\n  ],\n  \"raw\": {\n" + rawObject + "\n  }\n}\n"
    }
}
