/// The values options take, parsed and range-checked where they are read, so a bad value is a
/// usage error naming the valid range, never a trap later. The option table puts the option's
/// name in front of the message.
enum OptionValue {
    /// The longest timeout any option takes: a day. Longer ones are mistakes, and time
    /// arithmetic in nanoseconds stays far from overflow.
    static let maxSeconds: Double = 86_400

    /// The largest control payload: 16 MiB, the largest frame a worker process accepts.
    public static let maxPayload = 16 << 20

    /// A number of seconds, more than 0 and at most `maxSeconds`.
    static func seconds(_ text: String) throws(UsageError) -> Double {
        guard let value = Double(text), !value.isNaN, value > 0 else {
            throw UsageError("'\(text)' is not a positive number of seconds")
        }
        guard value <= maxSeconds else {
            throw UsageError(
                "'\(text)' is out of range: SECS must be more than 0 and at most \(Int(maxSeconds)) (a day)")
        }
        return value
    }

    /// `seconds` as messages write it: 5, or 0.25.
    static func secondsText(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// A whole number in `range`, of `unit`s.
    static func integer(_ text: String, in range: ClosedRange<Int>, _ unit: String) throws(UsageError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("'\(text)' is not a number of \(unit) from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// One of a fixed set of words (every case of `T`, as `word` spells it), or an error naming
    /// the option, the words it takes and the nearest one.
    static func choice<T: CaseIterable>(
        _ text: String, _ what: String,
        _ word: (T) -> String
    ) throws(UsageError) -> T {
        let words = T.allCases.map(word)
        guard let value = T.allCases.first(where: { word($0) == text }) else {
            let allowed = words.dropLast().joined(separator: ", ") + " or " + words.last!
            throw UsageError("unknown \(what) '\(text)' (use \(allowed))" + Suggestion.didYouMean(text, among: words))
        }
        return value
    }
}
