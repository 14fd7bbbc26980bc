import TestSupport
import Testing

@testable import HostCore

/// The documentation's "Skip reasons" table against its one declaration, `SkippedEntry.Reason`:
/// every reason `host ctl list --all` can give has exactly one row, and every row is a reason.
@Suite struct SkipReasonTableTests {
    @Test func everySkipReason_hasOneRow_andEveryRowIsAReason() throws {
        let table = try Documentation.section("Skip reasons")
            .table(header: ["reason", "why the file or service was not started"])
        let documented = table.column("reason").map(Documentation.codeSpans)
        #expect(documented.allSatisfy { $0.count == 1 }, "a row names one reason: \(documented)")
        let names = documented.flatMap { $0 }
        #expect(names.count == Set(names).count, "a reason has two rows: \(names)")
        #expect(Set(names) == Set(SkippedEntry.Reason.allCases.map(\.rawValue)))
    }
}
