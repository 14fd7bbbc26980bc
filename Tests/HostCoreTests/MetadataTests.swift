import ServiceABI
import Testing

@testable import HostCore

@Suite struct MetadataTests {
    private func header(size: Int, kind: Int) -> [UInt8] {
        le32(UInt32(size)) + le32(1) + le32(SH_META_MAGIC) + le32(UInt32(kind))
    }

    private func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    private func le64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    private func field(_ text: String, _ size: Int) -> [UInt8] {
        Array(text.utf8) + [UInt8](repeating: 0, count: size - text.utf8.count)
    }

    private func pluginRecord(abi: UInt32 = 1, min: UInt32 = 1) -> [UInt8] {
        header(size: 72, kind: SH_META_KIND_PLUGIN) + le32(abi) + le32(min) + field("c", 32) + field("", 16)
    }

    private func serviceRecord(id: String, events: UInt64 = 0b110, priority: Int32 = 0) -> [UInt8] {
        header(size: 264, kind: SH_META_KIND_SERVICE) + field(id, 128) + field("Name", 64) + field("1.0", 32)
            + le64(events) + le64(0) + le32(UInt32(bitPattern: priority)) + le32(0)
    }

    @Test func decodes_recordsSeparatedByPaddingAndUnknownKinds() throws {
        let unknown = header(size: 24, kind: 99) + [UInt8](repeating: 7, count: 8)
        let bytes =
            [0, 0, 0] + serviceRecord(id: "a.b", priority: -3) + [0, 0, 0, 0, 0] + unknown
            + pluginRecord() + serviceRecord(id: "c.d")
        let metadata = try PluginMetadata.decode(bytes)
        #expect(metadata.abiVersion == 1)
        #expect(metadata.toolchain == "c")
        #expect(metadata.services.map(\.id) == ["a.b", "c.d"])
        #expect(metadata.services[0].priority == -3)
        #expect(metadata.services[0].events.knownKinds == [.willFinishLaunching, .didFinishLaunching])
    }

    private func claimRecord(service: String, kind: Int, value: String) -> [UInt8] {
        header(size: 272, kind: SH_META_KIND_CLAIM) + field(service, 128) + le32(UInt32(kind)) + le32(0)
            + field(value, 128)
    }

    /// C's SH_CLAIM_METADATA names the service by its metadata variable: the record has no id,
    /// and the claim is the file's only service's.
    @Test func aClaimWithoutAnID_isTheOnlyServicesClaim() throws {
        let bytes =
            pluginRecord() + serviceRecord(id: "a.b")
            + claimRecord(service: "", kind: SH_CLAIM_NOTIFICATION, value: "x.y")
            + claimRecord(service: "a.b", kind: SH_CLAIM_URL, value: "MyApp")
        let metadata = try PluginMetadata.decode(bytes)
        #expect(metadata.services[0].subscriptions == ["x.y"])
        #expect(metadata.services[0].urls == ["myapp"])
    }

    @Test func aClaimWithoutAnID_inAFileOfSeveralServices_isRefusedSayingWhatToUse() {
        let bytes =
            pluginRecord() + serviceRecord(id: "a.b") + serviceRecord(id: "c.d")
            + claimRecord(service: "", kind: SH_CLAIM_URL, value: "myapp")
        #expect(
            throws: LoadFailure.Reason.invalidMetadata(
                "claim record 1 names no service, and the file declares 2 (C: name it with SH_CLAIM_METADATA_ID)")
        ) { try PluginMetadata.decode(bytes) }
    }

    @Test func requiresAndAfterClaims_areDecoded() throws {
        let bytes =
            pluginRecord() + serviceRecord(id: "a.b")
            + claimRecord(service: "a.b", kind: SH_CLAIM_REQUIRES, value: "dev.logger >=1.2 <2")
            + claimRecord(service: "a.b", kind: SH_CLAIM_REQUIRES, value: "dev.any")
            + claimRecord(service: "a.b", kind: SH_CLAIM_AFTER, value: "dev.q")
        let service = try #require(try PluginMetadata.decode(bytes).services.first)
        #expect(service.requires.map(\.id) == ["dev.logger", "dev.any"])
        #expect(service.requires.map(\.range.text) == [">=1.2 <2", ""])
        #expect(service.requires[1].range.comparators.isEmpty)
        #expect(service.after == ["dev.q"])
    }

    @Test(arguments: [
        (
            SH_CLAIM_REQUIRES, "dev.logger >=1.x",
            #"service a.b requires "dev.logger >=1.x": version range ">=1.x" is not a semantic version: comparator ">=1.x": minor "x" is not a number"#
        ),
        (
            SH_CLAIM_REQUIRES, "nodots >=1",
            #"service a.b requires "nodots >=1": service id "nodots" is not reverse-DNS (expected at least two labels, like com.example.name)"#
        ),
        (SH_CLAIM_REQUIRES, "a.b", "service a.b requires itself"),
        (SH_CLAIM_AFTER, "a.b", "service a.b starts after itself"),
        (
            SH_CLAIM_AFTER, "dev.x >=1",
            #"service a.b starts after "dev.x >=1": the service id may hold only ASCII letters, digits, '-', '_' and '.'"#
        ),
    ])
    func invalidDependencyClaims_refuseTheFile_sayingWhy(claim: Int, value: String, reason: String) {
        #expect(throws: LoadFailure.Reason.invalidMetadata(reason)) {
            try PluginMetadata.decode(
                pluginRecord() + serviceRecord(id: "a.b") + claimRecord(service: "a.b", kind: claim, value: value))
        }
    }

    @Test func shortcutClaims_areDecoded_withTitleAndIcon() throws {
        let bytes =
            pluginRecord() + serviceRecord(id: "a.b")
            + claimRecord(service: "a.b", kind: SH_CLAIM_SHORTCUT, value: "compose New entry")
            + claimRecord(service: "a.b", kind: SH_CLAIM_SHORTCUT, value: "search")
            + claimRecord(service: "a.b", kind: SH_CLAIM_SHORTCUT_ICON, value: "compose /usr/share/icons/a b.png")
        let service = try #require(try PluginMetadata.decode(bytes).services.first)
        #expect(
            service.shortcuts == [
                Shortcut(id: "compose", title: "New entry", icon: "/usr/share/icons/a b.png"),
                Shortcut(id: "search", title: "search"),
            ])
    }

    @Test(arguments: [
        (
            SH_CLAIM_SHORTCUT, "a.b x",
            #"service a.b declares the quick action "a.b x": its id may hold only letters, digits and '-'"#
        ),
        (
            SH_CLAIM_SHORTCUT_ICON, "x icon",
            "service a.b gives an icon to the quick action x, which it does not declare before"
        ),
        (
            SH_CLAIM_SHORTCUT, "x \u{7}",
            "service a.b declares the quick action x with an empty title or a control character"
        ),
    ])
    func invalidShortcutClaims_refuseTheFile_sayingWhy(claim: Int, value: String, reason: String) {
        #expect(throws: LoadFailure.Reason.invalidMetadata(reason)) {
            try PluginMetadata.decode(
                pluginRecord() + serviceRecord(id: "a.b") + claimRecord(service: "a.b", kind: claim, value: value))
        }
    }

    @Test func missingPluginRecord_isNamed() {
        #expect(throws: LoadFailure.Reason.invalidMetadata("no plugin record (C: add SH_PLUGIN_METADATA)")) {
            try PluginMetadata.decode(serviceRecord(id: "a.b"))
        }
    }

    @Test func noServices_isRefused() {
        #expect(throws: LoadFailure.Reason.invalidMetadata("no service records")) {
            try PluginMetadata.decode(pluginRecord())
        }
    }

    @Test func duplicateIDsInOneFile_areRefused() {
        #expect(throws: LoadFailure.Reason.invalidMetadata("service id a.b is declared twice")) {
            try PluginMetadata.decode(pluginRecord() + serviceRecord(id: "a.b") + serviceRecord(id: "a.b"))
        }
    }

    @Test func recordRunningPastTheSection_isRefused() {
        let truncated = Array((pluginRecord() + serviceRecord(id: "a.b")).dropLast(10))
        #expect(throws: LoadFailure.Reason.self) { try PluginMetadata.decode(truncated) }
    }

    @Test func unterminatedString_isRefused() {
        var record = serviceRecord(id: "a.b")
        for i in 16..<(16 + 128) { record[i] = 0x61 }  // the id field, all 'a', no NUL
        #expect(
            throws: LoadFailure.Reason.invalidMetadata(
                "service record 1: id is not NUL-terminated within its 128 bytes")
        ) {
            try PluginMetadata.decode(pluginRecord() + record)
        }
    }

    @Test(arguments: [
        ("", "is empty"), ("logger", "is not reverse-DNS (expected at least two labels, like com.example.name)"),
        ("a..b", "has an empty label"), ("com.example/x", "may hold only ASCII letters, digits, '-', '_' and '.'"),
    ])
    func invalidServiceIDs_sayWhy(id: String, problem: String) {
        #expect(ServiceID.problem(with: id) == problem)
    }

    @Test func validServiceIDs() {
        for id in ["dev.servicehost.logger", "com.example.hello-c", "a.b_c.D9"] {
            #expect(ServiceID.problem(with: id) == nil)
        }
        #expect(ServiceID.problem(with: String(repeating: "a.", count: 64) + "b") != nil)
    }

    @Test func eventMask_readsBothWords() {
        let mask = EventMask(1 << 3, 1 << 2)
        #expect(mask.contains(.didBecomeActive))
        #expect(mask.contains(rawKind: 66))
        #expect(mask.unknownRawKinds == [66])
        #expect(!mask.contains(rawKind: 500))
    }
}
