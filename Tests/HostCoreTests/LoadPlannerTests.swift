import Foundation
import TestSupport
import Testing

@testable import HostCore

/// The planner's decisions the host's load and `host check` share: which second answerers of a
/// request name are left out, and which services stay dormant, from real plugin files.
@Suite(.timeLimit(.minutes(10))) struct LoadPlannerTests {
    let scratch: Scratch
    let lib: String

    init() throws {
        scratch = try Scratch()
        lib = try scratch.folder("lib")
    }

    private static let answering = "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_REQUEST))"

    private func probe(_ name: String, _ defines: [String]) throws {
        try Command.compileC(Repository.fixture("CPlugins/probe.c"), to: lib + "/\(name).so", defines: defines)
    }

    private func answerer(_ id: String, _ name: String, priority: Int = 0, lazy: Bool = false) throws {
        try probe(
            id,
            ["PROBE_ID=\"\(id)\"", Self.answering, "PROBE_ANSWERS=\"\(name)\"", "PROBE_PRIORITY=\(priority)"]
                + (lazy ? ["PROBE_FLAGS=SH_META_SERVICE_LAZY"] : []))
    }

    @Test func theLaterAnswererInStartOrder_isLeftOut_whateverTheFileOrder() throws {
        try answerer("test.a", "geo.locate")
        try answerer("test.b", "geo.locate", priority: 10)
        try answerer("test.c", "queue.count")
        let planner = LoadPlanner(LoadSettings(directories: [lib]))
        #expect(planner.answerConflicts == [AnswerConflict(service: "test.a", name: "geo.locate", answerer: "test.b")])
        #expect(planner.startOrder == ["test.b", "test.c"])
        // The configuration's priority moves test.a first: test.b is the one left out.
        try Data(#"{"services":{"test.a":{"priority":20}}}"#.utf8).write(
            to: URL(fileURLWithPath: lib + "/services.json"))
        let configured = LoadPlanner(LoadSettings(directories: [lib]))
        #expect(configured.answerConflicts.map(\.service) == ["test.b"])
        #expect(configured.startOrder == ["test.a", "test.c"])
    }

    @Test func noAnswerers_noConflicts_theWholeOrder() throws {
        try probe("plain", ["PROBE_ID=\"test.plain\""])
        let planner = LoadPlanner(LoadSettings(directories: [lib]))
        #expect(planner.answerConflicts.isEmpty)
        #expect(planner.startOrder == ["test.plain"])
    }

    @Test func lazyServices_leaveOutTheLifecycleOnly_andTheOnesAnEagerOneRequires() throws {
        try answerer("test.woken", "geo.locate", lazy: true)
        try answerer("test.needed", "queue.count", lazy: true)
        try probe("idle", ["PROBE_ID=\"test.idle\"", "PROBE_FLAGS=SH_META_SERVICE_LAZY"])
        try probe("eager", ["PROBE_ID=\"test.eager\"", "PROBE_REQUIRES=\"test.needed\""])
        let planner = LoadPlanner(LoadSettings(directories: [lib]))
        let plan = try #require(try planner.plan?.get())
        let plugins = try planner.inspection.get().plugins
        let wanted = WantedServices(plan.order, keeping: [:], found: plugins)
        let decision = LazyServices(plan: plan, plugins: plugins, configuration: HostConfiguration(), wanted: wanted)
        #expect(decision.lazy == ["test.woken"])
        // In the order the host logs them: the lifecycle-only ones, then the required ones.
        #expect(
            decision.refusals == [
                .lifecycleOnly(service: "test.idle"), .required(service: "test.needed", requiredBy: "test.eager"),
            ])
    }
}
