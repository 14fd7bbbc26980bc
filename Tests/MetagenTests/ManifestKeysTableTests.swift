import TestSupport
import Testing

/// The documentation's manifest keys table (ServiceKit.docc/Manifest.md) against the one list
/// of keys `servicehost-metagen` accepts: a manifest with an unknown key is refused with that
/// list, and every key of it has exactly one row, and every row is a key.
@Suite struct ManifestKeysTableTests {
    @Test func everyManifestKey_hasOneRow_andEveryRowIsAKey() throws {
        let run = try Metagen().run(#"{"services":[{"id":"com.example.a","type":"A","colour":"red"}]}"#)
        let error = try #require(Metagen.error(of: run), "\(run.stderr)")
        let marker = "(expected one of: "
        let list = try #require(error.reason.range(of: marker).map { error.reason[$0.upperBound...].dropLast() })
        let accepted = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(accepted.contains("id") && accepted.contains("answers"), "\(accepted)")

        let table = try Documentation.section("The manifest: servicehost.json")
            .table(header: ["key", "required", "meaning"])
        let documented = table.column("key").map(Documentation.codeSpans)
        #expect(documented.allSatisfy { $0.count == 1 }, "a row names one key: \(documented)")
        let keys = documented.flatMap { $0 }
        #expect(keys.count == Set(keys).count, "a key has two rows: \(keys)")
        #expect(Set(keys) == Set(accepted))
    }
}
