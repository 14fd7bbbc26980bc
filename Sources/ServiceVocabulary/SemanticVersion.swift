/// A version as Semantic Versioning 2.0.0 (https://semver.org) writes it:
/// `MAJOR.MINOR.PATCH`, then an optional `-pre.release` and an optional `+build` part.
///
/// Comparison is the specification's precedence: numbers, then a version with a pre-release
/// before the same version without one, identifier by identifier (numbers numerically and
/// before words, words in ASCII order, a shorter list first). Build metadata is kept but
/// never compared, so `==` ignores it. The parser reads untrusted bytes (a plugin's metadata):
/// it is linear, checks every number for overflow and says what is wrong.
public struct SemanticVersion: Sendable, Comparable, CustomStringConvertible {
    /// One dot-separated pre-release identifier.
    public enum Identifier: Sendable, Hashable {
        case number(UInt64)
        case word(String)

        var description: String {
            switch self {
            case .number(let number): "\(number)"
            case .word(let word): word
            }
        }
    }

    /// Why text is not a semantic version.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The text that was read.
        public var text: String
        /// What is wrong with it.
        public var reason: String

        /// The error for `text`, wrong for `reason`.
        public init(text: String, reason: String) {
            self.text = text
            self.reason = reason
        }

        public var description: String { "\"\(text)\" is not a semantic version: \(reason)" }
    }

    public var major: UInt64
    public var minor: UInt64
    public var patch: UInt64
    /// The pre-release identifiers; empty for a release.
    public var prerelease: [Identifier]
    /// The build metadata identifiers, which precedence ignores.
    public var build: [String]

    /// A version from its parts.
    public init(_ major: UInt64, _ minor: UInt64, _ patch: UInt64, prerelease: [Identifier] = [], build: [String] = [])
    {
        (self.major, self.minor, self.patch) = (major, minor, patch)
        self.prerelease = prerelease
        self.build = build
    }

    /// Parses `text`, all of it. With `partial`, `MINOR` and `PATCH` may be left out
    /// (`1`, `1.2`) and count as 0; such a version has no pre-release or build part.
    public init(parsing text: String, partial: Bool = false) throws(ParseError) {
        let bytes = Array(text.utf8)
        func fail(_ reason: String) -> ParseError { ParseError(text: text, reason: reason) }
        // The core ends at the first '-' or '+'.
        let coreEnd = bytes.firstIndex { $0 == 0x2D || $0 == 0x2B } ?? bytes.count
        let parts = bytes[..<coreEnd].split(separator: 0x2E, omittingEmptySubsequences: false)
        let names = ["major", "minor", "patch"]
        guard parts.count <= 3, parts.count == 3 || (partial && coreEnd == bytes.count) else {
            throw fail(partial ? "expected MAJOR[.MINOR[.PATCH]]" : "expected MAJOR.MINOR.PATCH")
        }
        var numbers: [UInt64] = [0, 0, 0]
        for (index, part) in parts.enumerated() {
            guard let number = Self.number(part) else {
                throw fail("\(names[index]) \"\(String(decoding: part, as: UTF8.self))\" is not a number")
            }
            switch number {
            case .success(let value): numbers[index] = value
            case .failure(let failure): throw fail("\(names[index]) \(failure.reason)")
            }
        }
        (major, minor, patch) = (numbers[0], numbers[1], numbers[2])
        prerelease = []
        build = []
        var rest = bytes[coreEnd...]
        if rest.first == 0x2D {
            let end = rest.firstIndex(of: 0x2B) ?? rest.endIndex
            for identifier in try Self.identifiers(rest[(rest.startIndex + 1)..<end], "pre-release", fail) {
                if identifier.allSatisfy(Self.isDigit) {
                    switch Self.number(identifier) {
                    case .success(let value)?: prerelease.append(.number(value))
                    case .failure(let failure)?: throw fail("pre-release identifier \(failure.reason)")
                    case nil: break  // not reached: digits only
                    }
                } else {
                    prerelease.append(.word(String(decoding: identifier, as: UTF8.self)))
                }
            }
            rest = rest[end...]
        }
        if rest.first == 0x2B {
            build = try Self.identifiers(rest.dropFirst(), "build", fail).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// `MAJOR.MINOR.PATCH[-PRE][+BUILD]`.
    public var description: String {
        var text = "\(major).\(minor).\(patch)"
        if !prerelease.isEmpty {
            text += "-" + prerelease.map(\.description).joined(separator: ".")
        }
        if !build.isEmpty { text += "+" + build.joined(separator: ".") }
        return text
    }

    /// Equal precedence: build metadata is not compared.
    public static func == (a: SemanticVersion, b: SemanticVersion) -> Bool {
        (a.major, a.minor, a.patch) == (b.major, b.minor, b.patch) && a.prerelease == b.prerelease
    }

    public static func < (a: SemanticVersion, b: SemanticVersion) -> Bool {
        if (a.major, a.minor, a.patch) != (b.major, b.minor, b.patch) {
            return (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch)
        }
        // A pre-release comes before its release.
        if a.prerelease.isEmpty || b.prerelease.isEmpty { return !a.prerelease.isEmpty && b.prerelease.isEmpty }
        for (x, y) in zip(a.prerelease, b.prerelease) where x != y {
            switch (x, y) {
            case (.number(let m), .number(let n)): return m < n
            case (.number, .word): return true
            case (.word, .number): return false
            case (.word(let v), .word(let w)): return Array(v.utf8).lexicographicallyPrecedes(w.utf8)
            }
        }
        return a.prerelease.count < b.prerelease.count
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// A numeric identifier: nil when `digits` is empty or holds a non-digit; a failure for a
    /// leading zero or a value past `UInt64.max`.
    private static func number(_ digits: ArraySlice<UInt8>) -> Result<UInt64, ParseFailure>? {
        guard !digits.isEmpty, digits.allSatisfy(isDigit) else { return nil }
        if digits.count > 1 && digits.first == 0x30 {
            return .failure(ParseFailure("\"\(String(decoding: digits, as: UTF8.self))\" has a leading zero"))
        }
        var value: UInt64 = 0
        for digit in digits {
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(digit - 0x30))
            if o1 || o2 {
                return .failure(ParseFailure("\(String(decoding: digits, as: UTF8.self)) is larger than \(UInt64.max)"))
            }
            value = sum
        }
        return .success(value)
    }

    /// The dot-separated identifiers of a pre-release or build part: each non-empty, of ASCII
    /// letters, digits and '-'.
    private static func identifiers(
        _ bytes: ArraySlice<UInt8>, _ what: String, _ fail: (String) -> ParseError
    ) throws(ParseError) -> [ArraySlice<UInt8>] {
        let identifiers = bytes.split(separator: 0x2E, omittingEmptySubsequences: false)
        for identifier in identifiers {
            guard !identifier.isEmpty else { throw fail("an empty \(what) identifier") }
            let allowed = { (c: UInt8) in isDigit(c) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A) || c == 0x2D }
            guard identifier.allSatisfy(allowed) else {
                throw fail("\(what) identifiers hold only ASCII letters, digits and '-'")
            }
        }
        return identifiers
    }
}

/// A reason without the text, which ``SemanticVersion/ParseError`` adds.
private struct ParseFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
