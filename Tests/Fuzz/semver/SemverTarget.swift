// Fuzz target `semver`: a requires claim's value ("ID RANGE", from a plugin's metadata) through
// the version range parser, and the text as one version through SemanticVersion.
import ServiceVocabulary

@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    if let version = try? SemanticVersion(parsing: text) {
        // A version reads back as itself and is in the range of exactly itself.
        guard let again = try? SemanticVersion(parsing: version.description), again == version else {
            fatalError("\(version) does not read back")
        }
        guard (try? VersionRange(parsing: "=" + version.description))?.contains(version) == true else {
            fatalError("\(version) is not in =\(version)")
        }
        guard !(version < version) else { fatalError("\(version) < itself") }
    }
    if let range = try? VersionRange(parsing: text) {
        // Every version a comparator names is compared without trapping.
        for comparator in range.comparators { _ = range.contains(comparator.version) }
    }
    do {
        let requirement = try ServiceRequirement(claim: text)
        guard ServiceID.problem(with: requirement.id) == nil else { fatalError("accepted id \(requirement.id)") }
    } catch {
        guard !error.reason.isEmpty else { fatalError("an error without a reason") }
    }
    return 0
}
