/// Which versions of a service another one accepts: comparators separated by spaces, all of
/// which must hold (`>=1.2 <2`). Each is `>=`, `>`, `<=`, `<` or `=` (or nothing, meaning
/// `=`) and a version whose `MINOR` and `PATCH` may be left out, counting as 0 (`<2` is
/// `<2.0.0`). The empty range accepts every version.
///
/// Versions compare by semantic versioning precedence (``SemanticVersion``), so `<2` also
/// accepts `2.0.0-beta`, which comes before `2.0.0`.
public struct VersionRange: Sendable, Equatable, CustomStringConvertible {
    /// How a comparator compares.
    public enum Operator: String, Sendable, CaseIterable {
        case greaterOrEqual = ">="
        case lessOrEqual = "<="
        case greater = ">"
        case less = "<"
        case equal = "="
    }

    /// One condition on the version.
    public struct Comparator: Sendable, Equatable {
        public var op: Operator
        public var version: SemanticVersion
    }

    /// The conditions, all of which must hold; none for the range that accepts everything.
    public var comparators: [Comparator]
    /// The text the range was read from, shown in messages as it was written.
    public var text: String

    /// The range of every version.
    public static let any = VersionRange(comparators: [], text: "")

    private init(comparators: [Comparator], text: String) {
        self.comparators = comparators
        self.text = text
    }

    /// Parses `text` (untrusted: a plugin's metadata); errors name the comparator and why.
    public init(parsing text: String) throws(SemanticVersion.ParseError) {
        self.text = text
        comparators = []
        for word in text.split(separator: " ") {
            let op = Operator.allCases.first { word.hasPrefix($0.rawValue) } ?? .equal
            let versionText = word.hasPrefix(op.rawValue) ? word.dropFirst(op.rawValue.count) : word[...]
            do throws(SemanticVersion.ParseError) {
                comparators.append(
                    Comparator(op: op, version: try SemanticVersion(parsing: String(versionText), partial: true)))
            } catch {
                throw SemanticVersion.ParseError(text: text, reason: "comparator \"\(word)\": \(error.reason)")
            }
        }
    }

    /// Whether `version` meets every comparator.
    public func contains(_ version: SemanticVersion) -> Bool {
        comparators.allSatisfy { comparator in
            switch comparator.op {
            case .greaterOrEqual: version >= comparator.version
            case .lessOrEqual: version <= comparator.version
            case .greater: version > comparator.version
            case .less: version < comparator.version
            case .equal: version == comparator.version
            }
        }
    }

    /// The range as written.
    public var description: String { text }
}
