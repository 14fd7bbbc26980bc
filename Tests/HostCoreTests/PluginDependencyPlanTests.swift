import HostCore
import ServiceVocabulary
import Testing

/// The start plan with the edges plugins declare (`SH_CLAIM_REQUIRES`, `SH_CLAIM_AFTER`):
/// merged with the configuration's, version ranges checked, unmet requirements leaving the
/// requiring service out.
@Suite struct PluginDependencyPlanTests {
    private func service(
        _ name: String, priority: Int32 = 0, version: String = "1.0.0", requires: [(String, String)] = [],
        after: [String] = []
    ) throws -> FoundService {
        FoundService(
            id: "test." + name, priority: priority, version: version,
            requires: try requires.map {
                ServiceRequirement(id: "test." + $0.0, range: try VersionRange(parsing: $0.1))
            },
            after: after.map { "test." + $0 })
    }

    private func plan(_ found: [FoundService], _ configured: [ServiceConfiguration] = [], onlyConfigured: Bool = false)
        throws(StartOrderError) -> StartPlan
    {
        try StartPlan.compute(
            found: found, configuration: HostConfiguration(services: configured), onlyConfigured: onlyConfigured)
    }

    private func names(_ ids: [String]) -> [String] { ids.map { String($0.dropFirst("test.".count)) } }

    @Test func pluginEdges_orderUnconfiguredServices() throws {
        // Priority alone would start a first; its plugin says after b, and b requires c.
        let found = [
            try service("a", priority: 10, after: ["b"]), try service("b", requires: [("c", "")]), try service("c"),
        ]
        let result = try plan(found)
        #expect(names(result.order) == ["c", "b", "a"])
        #expect(result.requirements == ["test.b": ["test.c"]])
    }

    @Test func pluginEdges_pullWhatAConfiguredServiceNeedsIntoTheConfiguredGroup_transitively() throws {
        let found = [
            try service("x", priority: 50), try service("a", requires: [("b", "")]), try service("b", after: ["c"]),
            try service("c"),
        ]
        let result = try plan(found, [ServiceConfiguration(id: "test.a")])
        #expect(names(result.order) == ["c", "b", "a", "x"])
    }

    @Test func pluginAndConfigurationEdges_merge() throws {
        let found = [try service("a", requires: [("b", "")]), try service("b"), try service("c")]
        let result = try plan(found, [ServiceConfiguration(id: "test.a", requires: ["test.c"])])
        #expect(names(result.order) == ["b", "c", "a"])
        #expect(result.requirements["test.a"] == ["test.c", "test.b"])
    }

    @Test func aRequirementInRange_isMet() throws {
        let found = [try service("a", requires: [("logger", ">=1.2 <2")]), try service("logger", version: "1.4.0")]
        #expect(names(try plan(found).order) == ["logger", "a"])
    }

    @Test func aRequirementOutOfRange_leavesTheRequirerOut_namingBothServicesAndVersions() throws {
        let found = [
            try service("a", requires: [("logger", ">=1.2 <2")]), try service("logger", version: "1.1.0"),
            try service("z"),
        ]
        let result = try plan(found)
        #expect(names(result.order) == ["logger", "z"])
        #expect(
            result.unmet.map(\.description) == ["test.a 1.0.0 requires test.logger >=1.2 <2, but 1.1.0 is installed"])
        #expect(result.unmet.first?.reason == .version(installed: "1.1.0"))
    }

    @Test func aMissingRequirement_leavesTheRequirerOut_andWhatRequiresIt() throws {
        let found = [try service("a", requires: [("gone", ">=1")]), try service("b"), try service("c")]
        let result = try plan(found, [ServiceConfiguration(id: "test.b", requires: ["test.a"])])
        #expect(names(result.order) == ["c"])
        #expect(
            result.unmet.map(\.description) == [
                "test.a 1.0.0 requires test.gone >=1, which no plugin provides",
                "test.b 1.0.0 requires test.a, which is not started",
            ])
    }

    @Test func aProviderVersionThatIsNotSemantic_isNamed() throws {
        let found = [try service("a", requires: [("b", ">=1")]), try service("b", version: "v1")]
        let unmet = try #require(try plan(found).unmet.first)
        #expect(
            unmet.description.hasPrefix(
                "test.a 1.0.0 requires test.b >=1, but the installed version \"v1\" is not a semantic version"))
    }

    @Test func aDisabledOrUnconfiguredRequirement_isUnmet() throws {
        let found = [try service("a", requires: [("b", "")]), try service("b")]
        let disabled = try plan(
            found, [ServiceConfiguration(id: "test.a"), ServiceConfiguration(id: "test.b", enabled: false)])
        #expect(disabled.unmet.map(\.reason) == [.disabled])
        let only = try plan(found, [ServiceConfiguration(id: "test.a")], onlyConfigured: true)
        #expect(only.unmet.map(\.reason) == [.notConfigured])
        #expect(only.order.isEmpty)
    }

    @Test func anAfterNamingNothing_isIgnored() throws {
        #expect(names(try plan([try service("a", after: ["nobody"])]).order) == ["a"])
    }

    @Test func aCycleThroughPluginEdges_namesWhereEachEdgeComesFrom() throws {
        let found = [try service("a", requires: [("b", "")]), try service("b", after: ["c"]), try service("c")]
        let configured = [ServiceConfiguration(id: "test.c", requires: ["test.a"])]
        #expect(
            throws: StartOrderError(
                .cycle(
                    ["test.a", "test.b", "test.c", "test.a"],
                    origins: [.pluginRequires, .pluginAfter, .configurationRequires]))
        ) { try plan(found, configured) }
    }

    @Test func aCycleAmongUnconfiguredServices_isStillACycle() throws {
        let found = [try service("a", after: ["b"]), try service("b", requires: [("a", "")])]
        #expect(
            throws: StartOrderError(.cycle(["test.a", "test.b", "test.a"], origins: [.pluginAfter, .pluginRequires]))
        ) { try plan(found) }
    }
}
