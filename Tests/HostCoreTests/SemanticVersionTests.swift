import ServiceVocabulary
import Testing

/// Semantic Versioning 2.0.0 parsing and precedence, and version ranges.
@Suite struct SemanticVersionTests {
    private func version(_ text: String) throws -> SemanticVersion { try SemanticVersion(parsing: text) }

    @Test func precedence_isTheSpecificationsExample() throws {
        // semver.org §11: 1.0.0-alpha < 1.0.0-alpha.1 < … < 1.0.0 < 2.0.0 < 2.1.0 < 2.1.1.
        let ordered = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0", "2.0.0", "2.1.0", "2.1.1",
        ]
        let versions = try ordered.map(version)
        for (a, b) in zip(versions, versions.dropFirst()) {
            #expect(a < b, "\(a) < \(b)")
            #expect(!(b < a))
        }
        #expect(try version("1.0.0+build.5") == version("1.0.0"))
        #expect(try version("1.2.3-rc.1+exp.sha.5114f85").description == "1.2.3-rc.1+exp.sha.5114f85")
    }

    @Test(arguments: [
        ("1.2", "expected MAJOR.MINOR.PATCH"),
        ("1.2.3.4", "expected MAJOR.MINOR.PATCH"),
        ("01.2.3", "major \"01\" has a leading zero"),
        ("1.x.3", "minor \"x\" is not a number"),
        ("1.2.3-", "an empty pre-release identifier"),
        ("1.2.3-a..b", "an empty pre-release identifier"),
        ("1.2.3-01", "pre-release identifier \"01\" has a leading zero"),
        ("1.2.3+", "an empty build identifier"),
        ("1.2.3-a_b", "pre-release identifiers hold only ASCII letters, digits and '-'"),
        ("18446744073709551616.0.0", "major 18446744073709551616 is larger than 18446744073709551615"),
        ("", "expected MAJOR.MINOR.PATCH"),
    ])
    func invalidVersions_sayWhy(text: String, reason: String) {
        #expect(throws: SemanticVersion.ParseError(text: text, reason: reason)) { try SemanticVersion(parsing: text) }
    }

    @Test func partialVersions_countMissingPartsAsZero() throws {
        #expect(try SemanticVersion(parsing: "2", partial: true) == version("2.0.0"))
        #expect(try SemanticVersion(parsing: "1.2", partial: true) == version("1.2.0"))
        #expect(throws: SemanticVersion.ParseError.self) { try SemanticVersion(parsing: "1.2-beta", partial: true) }
    }

    @Test func ranges_holdWhenEveryComparatorDoes() throws {
        let range = try VersionRange(parsing: ">=1.2 <2")
        #expect(try range.contains(version("1.2.0")))
        #expect(try range.contains(version("1.9.9")))
        #expect(try !range.contains(version("1.1.9")))
        #expect(try !range.contains(version("2.0.0")))
        // Plain precedence: a pre-release of 2.0.0 comes before it.
        #expect(try range.contains(version("2.0.0-beta")))
        #expect(try VersionRange(parsing: "1.4.2").contains(version("1.4.2")))
        #expect(try VersionRange(parsing: "=1.4.2 >1 <=1.4.2").contains(version("1.4.2")))
        #expect(try !VersionRange(parsing: ">1.4.2").contains(version("1.4.2")))
        #expect(try VersionRange(parsing: "").contains(version("0.0.1")))
        #expect(range.description == ">=1.2 <2")
    }

    @Test func invalidRanges_nameTheComparator() {
        #expect(
            throws: SemanticVersion.ParseError(
                text: ">=1.2 <x", reason: "comparator \"<x\": major \"x\" is not a number")
        ) {
            try VersionRange(parsing: ">=1.2 <x")
        }
        #expect(throws: SemanticVersion.ParseError.self) { try VersionRange(parsing: ">=") }
        #expect(throws: SemanticVersion.ParseError.self) { try VersionRange(parsing: "~1.2") }
    }
}
