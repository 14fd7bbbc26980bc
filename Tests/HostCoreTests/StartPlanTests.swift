import HostCore
import Testing

/// The start order: dependencies, priorities, load order, and the errors naming the services.
@Suite struct StartPlanTests {
    /// Services found on disk, in load order: `("a", 0)` is `test.a` with metadata priority 0.
    private func found(_ services: (String, Int32)...) -> [FoundService] {
        services.map { FoundService(id: "test." + $0.0, priority: $0.1) }
    }

    private func service(
        _ name: String, enabled: Bool = true, priority: Int32? = nil, requires: [String] = [], after: [String] = []
    ) -> ServiceConfiguration {
        ServiceConfiguration(
            id: "test." + name, enabled: enabled, priority: priority,
            requires: requires.map { "test." + $0 }, after: after.map { "test." + $0 })
    }

    private func plan(
        _ found: [FoundService], _ configured: [ServiceConfiguration], onlyConfigured: Bool = false
    ) throws(StartOrderError) -> StartPlan {
        try StartPlan.compute(
            found: found, configuration: HostConfiguration(services: configured), onlyConfigured: onlyConfigured)
    }

    private func order(
        _ found: [FoundService], _ configured: [ServiceConfiguration], onlyConfigured: Bool = false
    ) throws(StartOrderError) -> [String] {
        try plan(found, configured, onlyConfigured: onlyConfigured).order.map { String($0.dropFirst("test.".count)) }
    }

    private func names(_ ids: [String]) -> [String] { ids.map { String($0.dropFirst("test.".count)) } }

    // MARK: Order

    @Test func order_withoutConfiguration_isPriorityThenLoadOrder() throws {
        #expect(try order(found(("a", 0), ("b", 5), ("c", 0), ("d", 5), ("e", -1)), []) == ["b", "d", "a", "c", "e"])
    }

    @Test func order_configuredServicesStartBeforeUnconfiguredOnes() throws {
        let services = found(("a", 50), ("b", 0), ("c", 10), ("d", 0))
        #expect(try order(services, [service("d"), service("b")]) == ["b", "d", "a", "c"])
    }

    @Test func order_whenRequired_startsTheRequirementFirstWhateverItsPriority() throws {
        let services = found(("a", 0), ("b", 0))
        #expect(
            try order(services, [service("a", priority: 100, requires: ["b"]), service("b", priority: -100)]) == [
                "b", "a",
            ])
    }

    @Test func order_whenAfter_startsTheOtherFirst() throws {
        let services = found(("a", 0), ("b", 0), ("c", 0))
        #expect(try order(services, [service("a", after: ["c"]), service("b"), service("c")]) == ["b", "c", "a"])
    }

    @Test func order_whenTied_takesHigherPriorityThenLoadOrder() throws {
        // Nothing depends on anything: the priorities decide, then the load order.
        let services = found(("a", 0), ("b", 0), ("c", 0), ("d", 0))
        let configured = [service("a"), service("b", priority: 3), service("c"), service("d", priority: 3)]
        #expect(try order(services, configured) == ["b", "d", "a", "c"])
    }

    @Test func order_configPriority_overridesMetadataPriority() throws {
        let services = found(("a", 10), ("b", 5))
        #expect(try order(services, [service("a", priority: 1), service("b")]) == ["b", "a"])
        #expect(try order(services, [service("a"), service("b")]) == ["a", "b"])
    }

    @Test func order_ofADiamond_isStableByPriorityThenLoadOrder() throws {
        // d needs b and c; b and c need a; c outranks b.
        let services = found(("d", 0), ("c", 0), ("b", 0), ("a", 0))
        let configured = [
            service("d", requires: ["b", "c"]), service("c", priority: 1, requires: ["a"]),
            service("b", requires: ["a"]), service("a"),
        ]
        #expect(try order(services, configured) == ["a", "c", "b", "d"])
    }

    @Test func order_isStable_whateverOrderTheConfigurationListsServicesIn() throws {
        let services = found(("a", 0), ("b", 0), ("c", 2), ("d", 0), ("e", 0))
        var configured = [
            service("a", after: ["d"]), service("b"), service("c"), service("d"), service("e", requires: ["b"]),
        ]
        let expected = try order(services, configured)
        #expect(expected == ["c", "b", "d", "a", "e"])
        for _ in 0..<20 {
            configured.shuffle()
            #expect(try order(services, configured) == expected)
        }
    }

    @Test func order_whenAConfiguredServiceNeedsAnUnconfiguredOne_startsThatOneWithTheConfiguredGroup() throws {
        let services = found(("a", 0), ("b", 0), ("c", 0), ("d", 9))
        // b is not configured but a requires it, and a starts after c: both join the configured group.
        #expect(try order(services, [service("a", requires: ["b"], after: ["c"])]) == ["b", "c", "a", "d"])
    }

    // MARK: Ignored and refused dependencies

    @Test func order_whenAfterNamesAMissingOrDisabledService_ignoresIt() throws {
        let services = found(("a", 0), ("b", 5), ("c", 0))
        let plan = try plan(services, [service("a", after: ["zzz", "b"]), service("b", enabled: false), service("c")])
        #expect(names(plan.order) == ["a", "c"])
        #expect(names(plan.disabled) == ["b"])
    }

    @Test func order_whenRequiresIsMissing_namesBoth() {
        #expect(throws: StartOrderError(.requirementMissing(service: "test.a", requirement: "test.zzz"))) {
            try plan(found(("a", 0)), [service("a", requires: ["zzz"])])
        }
        #expect(
            StartOrderError(.requirementMissing(service: "test.a", requirement: "test.zzz")).description
                == "test.a requires test.zzz, which no plugin provides")
    }

    @Test func order_whenRequiresIsDisabled_namesBoth() {
        #expect(throws: StartOrderError(.requirementDisabled(service: "test.a", requirement: "test.b"))) {
            try plan(found(("a", 0), ("b", 0)), [service("a", requires: ["b"]), service("b", enabled: false)])
        }
        // Disabled and not installed either: "disabled" is what the user wrote, so say that.
        #expect(throws: StartOrderError(.requirementDisabled(service: "test.a", requirement: "test.b"))) {
            try plan(found(("a", 0)), [service("a", requires: ["b"]), service("b", enabled: false)])
        }
        #expect(
            StartOrderError(.requirementDisabled(service: "test.a", requirement: "test.b")).description
                == "test.a requires test.b, which is disabled in the configuration")
    }

    @Test func order_whenRequiresIsUnconfiguredUnderOnlyConfigured_namesBoth() {
        #expect(throws: StartOrderError(.requirementNotConfigured(service: "test.a", requirement: "test.b"))) {
            try plan(found(("a", 0), ("b", 0)), [service("a", requires: ["b"])], onlyConfigured: true)
        }
    }

    @Test func order_whenADisabledServiceRequiresAMissingOne_isFine() throws {
        let plan = try plan(found(("a", 0), ("b", 0)), [service("a", enabled: false, requires: ["zzz"])])
        #expect(names(plan.order) == ["b"])
        #expect(names(plan.disabled) == ["a"])
    }

    @Test func order_reportsTheFirstProblemInLoadOrder() {
        let configured = [service("b", requires: ["y"]), service("a", requires: ["x"])]
        #expect(throws: StartOrderError(.requirementMissing(service: "test.a", requirement: "test.x"))) {
            try plan(found(("a", 0), ("b", 0)), configured)
        }
    }

    // MARK: Cycles

    @Test func order_withACycle_namesEveryServiceInItInOrder() {
        let services = found(("a", 0), ("b", 0), ("c", 0), ("x", 0))
        let configured = [
            service("a", requires: ["b"]), service("b", after: ["c"]), service("c", requires: ["a"]), service("x"),
        ]
        #expect(
            throws: StartOrderError(
                .cycle(
                    ["test.a", "test.b", "test.c", "test.a"],
                    origins: [.configurationRequires, .configurationAfter, .configurationRequires]))
        ) { try plan(services, configured) }
        #expect(
            StartOrderError(
                .cycle(["a", "b", "c", "a"], origins: [.configurationRequires, .pluginAfter, .pluginRequires])
            ).description
                == "dependency cycle: a → b → c → a (each must start after the next; a → b: requires in the configuration,"
                + " b → c: after declared by its plugin, c → a: requires declared by its plugin)")
    }

    @Test func order_withACycle_startsItAtItsEarliestLoadedService_andLeavesOutServicesWaitingOnIt() {
        // w waits on the cycle without being in it; the cycle is c → b → c.
        let services = found(("w", 0), ("b", 0), ("c", 0))
        let configured = [service("w", requires: ["c"]), service("c", after: ["b"]), service("b", requires: ["c"])]
        #expect(
            throws: StartOrderError(
                .cycle(["test.b", "test.c", "test.b"], origins: [.configurationRequires, .configurationAfter]))
        ) {
            try plan(services, configured)
        }
    }

    @Test func order_aCycleThroughADisabledAfter_isNoCycle() throws {
        let services = found(("a", 0), ("b", 0))
        #expect(try order(services, [service("a", after: ["b"]), service("b", enabled: false, after: ["a"])]) == ["a"])
    }

    // MARK: What is left out

    @Test func plan_reportsDisabledMissingAndLeftOutServices() throws {
        let services = found(("a", 0), ("b", 0), ("c", 0), ("d", 0))
        let configured = [service("a"), service("b", enabled: false), service("zzz"), service("yyy", enabled: false)]
        let all = try plan(services, configured)
        #expect(names(all.order) == ["a", "c", "d"])
        #expect(names(all.disabled) == ["b"])
        #expect(names(all.missing) == ["zzz"])
        #expect(all.notConfigured.isEmpty)

        let only = try plan(services, configured, onlyConfigured: true)
        #expect(names(only.order) == ["a"])
        #expect(names(only.notConfigured) == ["c", "d"])
        #expect(names(only.disabled) == ["b"])
    }

    @Test func plan_underOnlyConfigured_ignoresAnAfterOnAnUnconfiguredService() throws {
        let only = try plan(found(("a", 0), ("b", 0)), [service("a", after: ["b"])], onlyConfigured: true)
        #expect(names(only.order) == ["a"])
        #expect(names(only.notConfigured) == ["b"])
    }

    @Test func plan_ofNothing_isEmpty() throws {
        #expect(try plan([], []) == StartPlan())
    }
}
