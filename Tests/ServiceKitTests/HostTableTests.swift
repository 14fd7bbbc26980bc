import ServiceABI
import Testing

@testable import ServiceKit

/// The host's offer and its `sh_host` table as the SDK checks them: an offer too short to
/// hold the ABI range, or a table shorter than version 1, is refused; members appended after
/// version 1 (subscribe, unsubscribe, registerForRemoteNotifications) are called only when the
/// table's `size` reaches them, and otherwise throw `.unsupported`.
@Suite struct HostTableTests {
    // MARK: - servicehost_entry's offer

    private func offer(_ memory: HostMemory, size: UInt32 = fullSize(sh_host_offer.self), min: UInt32, max: UInt32)
        -> UnsafeRawPointer
    {
        UnsafeRawPointer(
            memory.place(
                sh_host_offer(
                    size: size, version: SH_HOST_OFFER_VERSION, abi_min: min, abi_max: max,
                    host_version: memory.string("test 1"))))
    }

    @Test func offer_thatOverlapsTheSDK_picksTheHighestCommonVersion() throws {
        let memory = HostMemory()
        #expect(try ServicePlugin.negotiate(offer(memory, min: 0, max: 99)).get() == SH_ABI_VERSION)
        #expect(
            try ServicePlugin.negotiate(offer(memory, min: SH_ABI_VERSION_MIN, max: SH_ABI_VERSION_MIN)).get()
                == SH_ABI_VERSION_MIN)
    }

    @Test func offer_endingBeforeItsMaximum_isRefusedAsTooSmall() {
        let memory = HostMemory()
        let short = size(endingBefore: \sh_host_offer.abi_max)
        guard case .failure(let error) = ServicePlugin.negotiate(offer(memory, size: short, min: 1, max: 1)) else {
            Issue.record("a \(short)-byte offer was accepted")
            return
        }
        #expect(
            error.message == "ServiceKit \(ServicePlugin.sdkVersion): the host's offer is too small (\(short) bytes)")
    }

    @Test func offer_withoutACommonVersion_namesBothRanges() {
        let memory = HostMemory()
        guard
            case .failure(let error) = ServicePlugin.negotiate(
                offer(memory, min: SH_ABI_VERSION + 1, max: SH_ABI_VERSION + 5))
        else {
            Issue.record("a newer-only host was accepted")
            return
        }
        #expect(
            error.message
                == "ServiceKit \(ServicePlugin.sdkVersion) speaks ABI \(SH_ABI_VERSION_MIN)...\(SH_ABI_VERSION), "
                + "the host offers \(SH_ABI_VERSION + 1)...\(SH_ABI_VERSION + 5)")
    }

    @Test func missingOffer_isRefused() {
        guard case .failure(let error) = ServicePlugin.negotiate(nil) else {
            Issue.record("no offer was accepted")
            return
        }
        #expect(error.message.hasSuffix("servicehost_entry called without an offer"))
    }

    // MARK: - attach

    @Test func attach_toATableShorterThanVersion1_isRefusedAndCreatesNothing() {
        let host = FakeHost()
        var made = 0
        let slot = ServiceSlot(id: "test.short") {
            made += 1
            return RecordingService()
        }
        let versionOne = MemoryLayout<sh_host>.offset(of: \.get_extension)! + MemoryLayout<Int>.size
        host.table.pointee.size = UInt32(versionOne - 1)
        #expect(slot.attach(UnsafePointer(host.table)) == Int32(SH_ERROR))
        #expect(made == 0)
        #expect(!slot.host.isAttached)

        host.table.pointee.size = UInt32(versionOne)
        #expect(slot.attach(UnsafePointer(host.table)) == Int32(SH_OK))
        #expect(slot.attach(UnsafePointer(host.table)) == Int32(SH_OK))
        #expect(made == 1)  // created once, however often the host attaches
        #expect(slot.host.isAttached)
        #expect(slot.host.hostVersion == "fake 1.0")
    }

    @Test func attach_withoutATable_isInvalid() {
        let slot = ServiceSlot(id: "test.none") { RecordingService() }
        #expect(slot.attach(nil) == Int32(SH_INVALID))
        #expect(slot.instance == nil)
    }

    // MARK: - members appended after version 1

    @Test func versionOneTable_answersUnsupportedForEveryLaterMember() {
        let host = FakeHost()
        host.table.pointee.size = UInt32(MemoryLayout<sh_host>.offset(of: \.get_extension)! + MemoryLayout<Int>.size)
        let context = HostContext(raw: UnsafePointer(host.table), serviceID: "test.old")
        #expect(throws: HostError.unsupported) { try context.subscribe("a") }
        #expect(throws: HostError.unsupported) { try context.unsubscribe("a") }
        #expect(throws: HostError.unsupported) { try context.registerForRemoteNotifications() }
        #expect(host.calls == [])
        // Version-1 members still work.
        try? context.post("ping")
        #expect(host.calls == ["post ping"])
    }

    @Test func tableEndingInsideALaterMember_doesNotCallIt() {
        let host = FakeHost()
        host.table.pointee.size = UInt32(MemoryLayout<sh_host>.offset(of: \.unsubscribe)! + 4)
        let context = HostContext(raw: UnsafePointer(host.table), serviceID: "test.mid")
        #expect(throws: Never.self) { try context.subscribe("a") }
        #expect(throws: HostError.unsupported) { try context.unsubscribe("a") }
        #expect(host.calls == ["subscribe a"])
    }

    @Test func currentTable_callsEveryMember_andMapsTheirCodes() throws {
        let host = FakeHost()
        let context = HostContext(raw: UnsafePointer(host.table), serviceID: "test.new")
        try context.subscribe("a")
        #expect(try context.unsubscribe("a"))
        host.nextCode = Int32(SH_NOT_FOUND)
        #expect(try !context.unsubscribe("b"))
        try context.registerForRemoteNotifications()
        host.nextCode = Int32(SH_INVALID)
        #expect(throws: HostError.invalid) { try context.registerForRemoteNotifications() }
        host.nextCode = 77
        #expect(throws: HostError.failed(code: 77)) { try context.subscribe("c") }
        #expect(host.calls == ["subscribe a", "unsubscribe a", "unsubscribe b", "register", "register", "subscribe c"])
    }

    @Test func namesWithANulByte_areRefusedBeforeTheHostIsCalled() {
        let host = FakeHost()
        let context = HostContext(raw: UnsafePointer(host.table), serviceID: "test.nul")
        #expect(throws: HostError.invalid) { try context.post("a\u{0}b") }
        #expect(throws: HostError.invalid) { try context.subscribe("a\u{0}b") }
        #expect(throws: HostError.invalid) { try context.subscribe("") }
        #expect(host.calls == [])
    }

    @Test func beforeAttach_everyCallSaysSo() {
        let context = HostContext(raw: nil, serviceID: "test.detached")
        #expect(!context.isAttached)
        #expect(context.hostVersion == "")
        #expect(context.appState == .notRunning)
        #expect(context.extension(id: "x/1") == nil)
        #expect(throws: HostError.notAttached) { try context.post("a") }
        #expect(throws: HostError.notAttached) { try context.subscribe("a") }
        #expect(throws: HostError.notAttached) { try context.store.get("k") }
    }

    @Test func appStateFromANewerHost_readsAsInactive() {
        let host = FakeHost()
        let context = HostContext(raw: UnsafePointer(host.table), serviceID: "test.state")
        host.appState = 2
        #expect(context.appState == .active)
        host.appState = 9
        #expect(context.appState == .inactive)
    }
}

/// An `sh_host` table whose functions record their calls; `size` is the current layout's
/// until a test shortens it.
final class FakeHost {
    let table: UnsafeMutablePointer<sh_host>
    var calls: [String] = []
    var nextCode = Int32(SH_OK)
    var appState: Int32 = 1
    private let version = strdup("fake 1.0")!

    init() {
        table = .allocate(capacity: 1)
        var host = sh_host()
        host.size = fullSize(sh_host.self)
        host.version = SH_HOST_VERSION
        host.host_version = UnsafePointer(version)
        host.post = { raw, name, _, _ in FakeHost.of(raw).record("post \(String(cString: name!))") }
        host.app_state = { raw in FakeHost.of(raw).appState }
        host.subscribe = { raw, name in FakeHost.of(raw).record("subscribe \(String(cString: name!))") }
        host.unsubscribe = { raw, name in FakeHost.of(raw).record("unsubscribe \(String(cString: name!))") }
        host.register_for_remote_notifications = { raw in FakeHost.of(raw).record("register") }
        table.initialize(to: host)
        table.pointee.host_data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        table.deallocate()
        free(version)
    }

    private func record(_ call: String) -> Int32 {
        calls.append(call)
        defer { nextCode = Int32(SH_OK) }
        return nextCode
    }

    private static func of(_ raw: UnsafePointer<sh_host>?) -> FakeHost {
        Unmanaged<FakeHost>.fromOpaque(raw!.pointee.host_data).takeUnretainedValue()
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
