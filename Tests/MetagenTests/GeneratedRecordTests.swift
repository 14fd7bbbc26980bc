import Foundation
import ServiceABI
import ServiceJSON
import TestSupport
import Testing

@testable import HostCore

/// A valid manifest's generated records, decoded back by the host's own metadata decoder
/// (the one `host inspect` and the loader use): what the manifest says is what the host reads.
@Suite(.timeLimit(.minutes(10)))
struct GeneratedRecordTests {
    private func generate(_ manifest: String) throws -> (swift: String, metadata: PluginMetadata) {
        let run = try Metagen().run(manifest)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr == "")
        let swift = try #require(run.output)
        let metadata = try PluginMetadata.decode(Metagen.recordBytes(of: swift))
        return (swift, metadata)
    }

    @Test func everyKey_isDecodedByTheHost() throws {
        let (swift, metadata) = try generate(
            """
            {
              "services": [
                { "id": "com.example.links", "type": "LinksService", "name": "Links", "version": "2.1.0",
                  "events": ["lifecycle", "openURL", "continueUserActivity", "notification"], "priority": -7,
                  "urls": ["MyApp", "https://Example.com"], "activities": ["com.example.view-item"],
                  "subscribes": ["*", "queue.enqueue"] },
                { "id": "com.example.car", "type": "Car.Display", "events": ["scenes"], "priority": 2147483647,
                  "sceneRoles": ["car", "external"] }
              ]
            }
            """)
        #expect(metadata.abiVersion == SH_ABI_VERSION)
        #expect(metadata.abiMin == SH_ABI_VERSION_MIN)
        #expect(metadata.toolchain.hasPrefix("swift 6."))
        #expect(metadata.sdkVersion == "0.1.0")
        #expect(metadata.services.count == 2)

        let links = metadata.services[0]
        #expect(links.id == "com.example.links")
        #expect(links.name == "Links")
        #expect(links.version == "2.1.0")
        #expect(links.priority == -7)
        #expect(
            links.events.knownKinds == [
                .willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willResignActive,
                .didEnterBackground, .willEnterForeground, .willTerminate, .notification,
                .openURL, .continueUserActivity,
            ])
        #expect(links.events.unknownRawKinds == [])
        #expect(links.urls == ["myapp", "https://example.com"])  // written lowercase
        #expect(links.activities == ["com.example.view-item"])
        #expect(links.subscriptions == ["*", "queue.enqueue"])
        #expect(links.sceneRoles == [])

        let car = metadata.services[1]
        #expect(car.name == "Car.Display")  // defaults to the type
        #expect(car.version == "0.0.0")
        #expect(car.priority == Int32.max)
        #expect(car.events.knownKinds == EventKind.allCases.filter(\.isSceneEvent))
        #expect(car.sceneRoles == ["car", "external"])

        // The entry creates each type; a scene service through the check that it adopts SceneService.
        #expect(swift.contains(#"private func _servicehostMake0() -> any ApplicationService { LinksService() }"#))
        #expect(
            swift.contains(
                #"private func _servicehostMake1() -> any ApplicationService { ServicePlugin.sceneService(Car.Display()) }"#
            ))
        #expect(swift.contains(#".init(id: "com.example.links", make: _servicehostMake0),"#))
        // Each class is checked against the events its manifest lists, at the manifest's line.
        #expect(swift.contains("extension LinksService: ServiceKit._ManifestLists_notification,"))
        #expect(swift.contains("ServiceKit._ManifestOmits_scenes {}"))
        #expect(swift.contains("ServiceKit._ManifestLists_sceneOpenURLContexts"))
        // Errors in the checks and in `type` point at the service's line in the manifest.
        let locations = swift.split(separator: "\n").filter { $0.hasPrefix("#sourceLocation(file:") }
        #expect(locations.map { $0.split(separator: " ").last! } == ["3)", "7)", "3)", "7)"])
        #expect(swift.contains("@c(servicehost_entry)"))
    }

    @Test func answers_areClaimsTheHostDecodes_andNeedTheRequestEvent() throws {
        let (swift, metadata) = try generate(
            #"{"services":[{"id":"a.b","type":"A","events":["lifecycle","request"],"answers":["geo.locate","queue.count"]}]}"#
        )
        #expect(metadata.services[0].answers == ["geo.locate", "queue.count"])
        #expect(metadata.services[0].events.knownKinds.contains(.request))
        #expect(swift.contains("_ManifestLists_request"))
    }

    @Test func shortcuts_areClaimsTheHostDecodes_withTitleAndIcon() throws {
        let (swift, metadata) = try generate(
            #"{"services":[{"id":"a.b","type":"A","events":["performActionForShortcutItem"],"shortcuts":["#
                + #"{"id":"compose","title":"New entry ✓","icon":"document-new"},{"id":"search"}]}]}"#
        )
        #expect(
            metadata.services[0].shortcuts == [
                Shortcut(id: "compose", title: "New entry ✓", icon: "document-new"),
                Shortcut(id: "search", title: "search"),
            ])
        #expect(swift.contains("_ManifestLists_performActionForShortcutItem"))
    }

    @Test func aSettingsSchema_isCutIntoClaims_thatTheHostPutsTogether() throws {
        // Long enough for three claims, with a two-byte character at every offset.
        let values = (0..<40).map { #""é\#($0)""# }.joined(separator: ",")
        let schema =
            #"{"type":"object","properties":{"level":{"enum":[\#(values)],"default":"é0"},"#
            + #""port":{"type":"integer","minimum":1,"maximum":65535}}}"#
        let (swift, metadata) = try generate(#"{"services":[{"id":"a.b","type":"A","settingsSchema":\#(schema)}]}"#)
        let parsed = try #require(metadata.services[0].settingsSchema)
        #expect(parsed == (try SettingsSchema(parsing: Array(schema.utf8))))
        #expect(swift.components(separatedBy: "settings schema").count - 1 >= 3, "\(swift)")
        #expect(try parsed.apply(to: ["port": 80]).get() == ["port": 80, "level": "é0"])
    }

    @Test func theAllGroup_setsEveryEventTheHostKnows() throws {
        let (_, metadata) = try generate(#"{"services":[{"id":"a.b","type":"A","events":["all"]}]}"#)
        #expect(metadata.services[0].events.knownKinds == EventKind.allCases)
        #expect(metadata.services[0].events.unknownRawKinds == [])
    }

    @Test func theSmallestManifest_getsEveryDefault() throws {
        let (swift, metadata) = try generate(#"{"services":[{"id":"a.b","type":"A"}]}"#)
        let service = try #require(metadata.services.first)
        #expect(
            service == ServiceMetadata(id: "a.b", name: "A", version: "0.0.0", events: EventMask(0, 0), priority: 0))
        #expect(!swift.contains("sh_meta_claim"))
    }

    @Test func valuesAtTheirLimits_fitTheirFields() throws {
        let id = "a." + String(repeating: "b", count: 125)  // 127 bytes
        let name = String(repeating: "n", count: 63)
        let version = String(repeating: "1", count: 31)
        let claim = String(repeating: "c", count: 119)
        let (_, metadata) = try generate(
            """
            {"services":[{"id":"\(id)","type":"A","name":"\(name)","version":"\(version)",
              "events":["notification"],"subscribes":["\(claim)"],"priority":-2147483648}]}
            """)
        let service = try #require(metadata.services.first)
        #expect(service.id == id)
        #expect(service.name == name)
        #expect(service.version == version)
        #expect(service.subscriptions == [claim])
        #expect(service.priority == Int32.min)
    }

    @Test func requiresAndAfter_areDecodedByTheHost_requirementsSortedByID() throws {
        let (_, metadata) = try generate(
            #"{"services":[{"id":"a.b","type":"A","requires":{"dev.z":"","dev.logger":">=1.2 <2"},"after":["dev.q","dev.p"]}]}"#
        )
        let service = try #require(metadata.services.first)
        #expect(service.requires.map(\.description) == ["dev.logger >=1.2 <2", "dev.z"])
        #expect(service.requires.first?.range.comparators.count == 2)
        #expect(service.after == ["dev.q", "dev.p"])
    }

    @Test func nonASCIINamesAndClaims_surviveAsUTF8() throws {
        let (_, metadata) = try generate(
            #"{"services":[{"id":"a.b","type":"A","name":"Café ☕","events":["notification"],"subscribes":["größe.änderung"]}]}"#
        )
        #expect(metadata.services[0].name == "Café ☕")
        #expect(metadata.services[0].subscriptions == ["größe.änderung"])
    }

    @Test func rerunningOnTheSameManifest_leavesTheOutputUntouched() throws {
        let metagen = try Metagen()
        let manifest = try metagen.scratch.write(
            "servicehost.json", Array(#"{"services":[{"id":"a.b","type":"A"}]}"#.utf8))
        let output = metagen.scratch.file("out.swift")
        let tool = try Repository.product("servicehost-metagen")
        #expect(try Command.run(tool, [manifest, output]).status == 0)
        // Date the file back to 1970: a rewrite would give it the current time.
        let epoch = Date(timeIntervalSince1970: 0)
        try FileManager.default.setAttributes([.modificationDate: epoch], ofItemAtPath: output)
        #expect(try Command.run(tool, [manifest, output]).status == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: output)[.modificationDate] as? Date == epoch)
        // A changed manifest rewrites it.
        try metagen.scratch.write("servicehost.json", Array(#"{"services":[{"id":"a.c","type":"A"}]}"#.utf8))
        #expect(try Command.run(tool, [manifest, output]).status == 0)
        #expect(
            try PluginMetadata.decode(Metagen.recordBytes(of: String(contentsOfFile: output, encoding: .utf8)))
                .services.map(\.id) == ["a.c"])
    }
}
