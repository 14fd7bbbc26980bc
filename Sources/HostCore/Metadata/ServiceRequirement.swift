import ServiceVocabulary

/// A service another one requires (`SH_CLAIM_REQUIRES`, the manifest's `requires`): its id and
/// the versions accepted.
public struct ServiceRequirement: Sendable, Equatable, CustomStringConvertible {
    /// The id of the service required.
    public var id: String
    /// The versions accepted; ``VersionRange/any`` when the claim names none.
    public var range: VersionRange

    /// A requirement of `id` in `range`.
    public init(id: String, range: VersionRange = .any) {
        self.id = id
        self.range = range
    }

    /// Reads a claim value, `ID` or `ID RANGE` (`dev.servicehost.logger >=1.2 <2`); the reason
    /// when it is not one.
    init(claim value: String) throws(RequirementError) {
        let id = String(value.prefix { $0 != " " })
        if let problem = ServiceID.problem(with: id) {
            throw RequirementError(reason: "service id \"\(id)\" \(problem)")
        }
        let rangeText = value.dropFirst(id.count).drop { $0 == " " }
        do throws(SemanticVersion.ParseError) {
            self.init(id: id, range: rangeText.isEmpty ? .any : try VersionRange(parsing: String(rangeText)))
        } catch {
            throw RequirementError(reason: "version range \(error)")
        }
    }

    /// `ID` or `ID RANGE`, as the claim writes it.
    public var description: String { range.text.isEmpty ? id : "\(id) \(range.text)" }
}

/// Why a requires claim's value is not `ID [RANGE]`.
struct RequirementError: Error {
    let reason: String
}
