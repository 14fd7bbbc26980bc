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
    /// Our figure in each repetition, and the baseline measured in the same repetition (the
    /// same index), when the row is built from repetitions (``paired(row:measured:unit:ours:baseline:target:maxRatio:maxValue:)``);
    /// empty for a row of single figures.
    var oursSamples: [Double] = []
    var baselineSamples: [Double] = []

    /// ours ÷ baseline in each repetition: the floor is re-measured in every repetition, so a
    /// slow floor in one repetition moves one ratio, not the row's.
    var ratioSamples: [Double] {
        guard !oursSamples.isEmpty, oursSamples.count == baselineSamples.count else { return [] }
        return zip(oursSamples, baselineSamples).compactMap { $1 > 0 ? $0 / $1 : nil }
    }

    /// ours ÷ baseline: below 1 means ours is smaller (faster, lighter). The median of the
    /// repetitions' ratios when the row has them, else the ratio of the two figures.
    var ratio: Double? {
        let samples = ratioSamples
        if !samples.isEmpty { return median(samples) }
        guard let ours, let baseline, baseline > 0 else { return nil }
        return ours / baseline
    }

    /// The smallest and largest of the repetitions' ratios, or nil without repetitions.
    var ratioSpread: ClosedRange<Double>? {
        let samples = ratioSamples
        guard let low = samples.min(), let high = samples.max() else { return nil }
        return low...high
    }

    /// The smallest and largest of our figure over the repetitions, or nil without repetitions.
    var oursSpread: ClosedRange<Double>? {
        guard let low = oursSamples.min(), let high = oursSamples.max() else { return nil }
        return low...high
    }

    /// A row from paired repetitions: `ours[i]` and `baseline[i]` were measured in the same
    /// repetition. The figures are the medians; the ratio is the median of the ratios.
    static func paired(
        row: String, measured: String, unit: Unit, ours: [Double], baseline: [Double], target: String,
        maxRatio: Double? = nil, maxValue: Double? = nil
    ) -> Row {
        let count = min(ours.count, baseline.count)
        var made = Row(
            row: row, measured: measured, unit: unit, ours: ours.isEmpty ? nil : median(ours),
            baseline: baseline.isEmpty ? nil : median(baseline), target: target, maxRatio: maxRatio,
            maxValue: maxValue)
        made.oursSamples = Array(ours.prefix(count))
        made.baselineSamples = Array(baseline.prefix(count))
        return made
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
            "| row | measured | ours | baseline | ratio | spread | target | met? |",
            "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |",
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
                    + "| \(ratio) | \(spread(row)) | \(row.target) | \(met) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The range over the repetitions: of the ratio ("1.41–1.52×", n = 11) when the row has
    /// one, else of our figure; "—" for a row of single figures.
    static func spread(_ row: Row) -> String {
        if let range = row.ratioSpread {
            return format(range.lowerBound, digits: 2) + "–" + format(range.upperBound, digits: 2)
                + "× (n = \(row.ratioSamples.count))"
        }
        if let range = row.oursSpread {
            return show(range.lowerBound, row.unit) + "–" + show(range.upperBound, row.unit)
                + " (n = \(row.oursSamples.count))"
        }
        return "—"
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
        func numbers(_ values: [Double]) -> String { "[" + values.map(number).joined(separator: ", ") + "]" }
        let rowObjects = rows.map { row in
            "    {\"row\": \(string(row.row)), \"measured\": \(string(row.measured)), \"unit\": \(string(row.unit.rawValue)), "
                + "\"ours\": \(number(row.ours)), \"baseline\": \(number(row.baseline)), \"ratio\": \(number(row.ratio)), "
                + "\"ratio_min\": \(number(row.ratioSpread?.lowerBound)), \"ratio_max\": \(number(row.ratioSpread?.upperBound)), "
                + "\"ours_samples\": \(numbers(row.oursSamples)), \"baseline_samples\": \(numbers(row.baselineSamples)), "
                + "\"target\": \(string(row.target)), \"met\": \(row.met.map(String.init) ?? "null"), "
                + "\"pending\": \(row.pending.map(string) ?? "null")}"
        }
        let machineObject = machine.map { "\(string($0.0)): \(string($0.1))" }.joined(separator: ", ")
        let rawObject = raw.map { "    \(string($0.0)): \(number($0.1))" }.joined(separator: ",\n")
        return "{\n  \"machine\": {\(machineObject)},\n  \"quick\": \(quick),\n  \"rows\": [\n"
            + rowObjects.joined(separator: ",\n") + "\n  ],\n  \"raw\": {\n" + rawObject + "\n  }\n}\n"
    }
}
