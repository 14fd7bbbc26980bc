import Foundation
import HostCore
import ServiceABI
import TestSupport
import Testing

/// Scenes through the real dispatcher with real C plugins, in process.
@MainActor
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct SceneHostTests {
    let scratch: Scratch
    let lib: String
    let logPath: String
    private let sceneEvents = "SH_EVENTS_LIFECYCLE|SH_EVENTS_SCENES"

    init() throws {
        scratch = try Scratch()
        lib = try scratch.folder("lib")
        logPath = scratch.file("log.txt")
    }

    private func probe(_ name: String, _ defines: [String]) throws {
        try Command.compileC(Repository.fixture("CPlugins/probe.c"), to: lib + "/" + name, defines: defines)
    }

    /// A host on `lib` logging to `logPath`, with its trace.
    private func host() throws -> (HostCore.Host, trace: String) {
        let trace = scratch.file("trace.jsonl")
        let host = Host(
            log: Log(level: .info, descriptor: open(logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)),
            trace: try TraceWriter(path: trace))
        #expect(try host.load(LoadSettings(directories: [lib])).failures.isEmpty)
        return (host, trace)
    }

    private var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// "event@scene service" for every delivery so far.
    private func deliveries(_ trace: String) throws -> [String] {
        try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return "\(object["event"]!)\((object["scene"] as? String).map { "@" + $0 } ?? "") \(object["service"]!)"
        }
    }

    @Test func theFirstValidConfigurationWins_andAnInvalidOneIsRefusedNamingItsService() throws {
        // Highest priority first: it answers a role other than the one asked for, so it is refused.
        try probe(
            "a.so",
            [
                "PROBE_ID=\"test.wrong\"", "PROBE_EVENTS=\(sceneEvents)", "PROBE_PRIORITY=20",
                "PROBE_CONFIGURATION=\"ext\"", "PROBE_CONFIGURATION_ROLE=\"external\"",
            ])
        try probe("b.so", ["PROBE_ID=\"test.passes\"", "PROBE_EVENTS=\(sceneEvents)", "PROBE_PRIORITY=10"])
        try probe(
            "c.so",
            [
                "PROBE_ID=\"test.car\"", "PROBE_EVENTS=\(sceneEvents)", "PROBE_PRIORITY=5",
                "PROBE_CONFIGURATION=\"car\"", #"PROBE_CONFIGURATION_SETTINGS="{\"template\":\"map\"}""#,
            ])
        try probe("d.so", ["PROBE_ID=\"test.never\"", "PROBE_EVENTS=\(sceneEvents)", "PROBE_CONFIGURATION=\"late\""])
        let (host, trace) = try host()
        try host.launch()
        let connection = try host.connectScene(try SceneRequest(name: "car", role: "car"))
        #expect(connection.scene.configuration == "car")
        #expect(connection.scene.configuredBy == "test.car")
        #expect(connection.scene.settings == ["template": "map"])
        #expect(connection.scene.state == .foregroundActive)
        #expect(
            try deliveries(trace).filter { $0.hasPrefix("configurationForConnecting") }
                == ["test.wrong", "test.passes", "test.car"].map { "configurationForConnecting@car \($0)" })
        #expect(
            log.contains(
                "error [test.wrong] configurationForConnecting: the configuration for scene car is refused:"
                    + " it chose role external for a scene connected as car"))
        #expect(host.services.first { $0.id == "test.wrong" }?.lastError?.contains("it chose role external") == true)
        // No role asked for: the answer's role is taken; no answer at all: "default" and main.
        #expect(try host.connectScene(try SceneRequest(name: "screen")).scene.role == "external")
    }

    @Test func roleClaims_limitWhichScenesAServiceHears() throws {
        try probe("a.so", ["PROBE_ID=\"test.car\"", "PROBE_EVENTS=\(sceneEvents)", "PROBE_SCENE_ROLE=\"car\""])
        try probe("b.so", ["PROBE_ID=\"test.all\"", "PROBE_EVENTS=\(sceneEvents)"])
        let (host, trace) = try host()
        try host.launch(LaunchRequest(scene: try SceneRequest(name: "main", role: "main")))
        _ = try host.connectScene(try SceneRequest(name: "car", role: "car"))
        try host.moveScene(named: "main", .background)
        let events = try deliveries(trace)
        #expect(!events.contains { $0.contains("@main test.car") }, "\(events)")
        #expect(events.contains("sceneWillConnect@car test.car") && events.contains("sceneWillConnect@main test.all"))
        #expect(events.contains("sceneDidEnterBackground@main test.all"))
        // A connection that leaves the role open asks every service for the configuration.
        _ = try host.connectScene(try SceneRequest(name: "open"))
        #expect(try deliveries(trace).contains("configurationForConnecting@open test.car"))
        #expect(host.scenes["open"]?.role == "main")
    }

    @Test func sceneEvents_seeTheSceneStateUIKitReports_andTheAppStateBeforeTheAppEventTheyCause() throws {
        try probe("a.so", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(sceneEvents)"])
        let (host, _) = try host()
        try host.launch(LaunchRequest(scene: try SceneRequest(name: "main")))
        try host.moveScene(named: "main", .background)
        try host.moveScene(named: "main", .disconnect)
        #expect(host.state == .background)
        // (kind, scene state in the event, app state in the event)
        let seen = log.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "event "), line.contains("scene-state=") else { return nil }
            let words = line[range.upperBound...].split(separator: " ")
            let sceneState = words.first { $0.hasPrefix("scene-state=") }!.dropFirst("scene-state=".count)
            return "\(words[0]):\(sceneState):\(words[2])"
        }
        #expect(seen == ["17:0:1", "18:0:1", "19:0:1", "20:2:1", "21:2:2", "22:3:1", "23:0:3"])
    }

    @Test func scenesRefuseWorkBeforeLaunchAndAfterTermination() throws {
        try probe("a.so", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(sceneEvents)"])
        let (host, _) = try host()
        #expect(throws: SceneError.self) { try host.connectScene(try SceneRequest(name: "main")) }
        try host.launch(LaunchRequest(scene: try SceneRequest(name: "main")))
        try host.terminate()
        #expect(host.scenes.list.isEmpty && host.state == .notRunning)
        do {
            _ = try host.connectScene(try SceneRequest(name: "main"))
            Issue.record("connected after termination")
        } catch let error as SceneError {
            #expect(error.code == .notRunning)
        }
    }
}
