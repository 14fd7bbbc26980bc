import Foundation
import ServiceABI
import TestSupport
import Testing

@testable import ServiceKit

/// An older host's struct can end right at the end of its memory. Each case places a struct
/// shortened to end just before a member at the very end of a mapping, followed by a page that
/// cannot be read, and hands it to the SDK in a child process: reading any byte past `size`
/// kills the child with SIGSEGV instead of passing unnoticed.
@Suite(.timeLimit(.minutes(10)))
struct GuardPageTests {
    static let childVariable = "SERVICEKIT_GUARD_PAGE_CASE"

    /// Every reader of a host struct that is given a shortened one.
    static let cases = [
        "launchOptions", "notification", "push", "response", "deviceToken", "openURL", "userActivity",
        "tape", "scene", "connectionOptions", "event",
    ]

    @Test(arguments: cases)
    func olderStructEndingAtAnUnreadablePage_isReadOnlyUpToItsSize(_ name: String) throws {
        let child = try ChildProcess.rerunningThisTestBinary(
            test: "GuardPageTests/guardPageChild()", environment: [Self.childVariable: name])
        #expect(eventually { child.hasExited })
        let result = child.kill9AndWait()
        #expect(result.status == 0, "\(name): the child ended with \(result.status)\n\(result.stderr)")
    }

    /// Runs only in the child process: reads the case its variable names from a guarded struct.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childVariable] != nil))
    func guardPageChild() throws {
        let name = ProcessInfo.processInfo.environment[Self.childVariable]!
        let memory = HostMemory()
        let guarded = try GuardedMemory()
        switch name {
        case "launchOptions":
            var raw = sh_launch_options()
            raw.flags = UInt32(SH_LAUNCH_RESTART)
            let options = LaunchOptions(guarded.place(raw, endingBefore: \.notification))
            #expect(options.isRestart)
        case "notification":
            var raw = sh_notification()
            raw.name = memory.string("n")
            raw.sender = memory.string("s")
            #expect(ServiceNotification(guarded.place(raw, endingBefore: \.json)).name == "n")
        case "push":
            var raw = sh_push()
            raw.json = memory.string("[1]")
            raw.json_len = 3
            #expect(PushNotification(guarded.place(raw, endingBefore: \.parsed)).payload == [1])
        case "response":
            var raw = sh_push()
            raw.json = memory.string("[1]")
            raw.json_len = 3
            #expect(NotificationResponse(guarded.place(raw, endingBefore: \.action_id)).isDefaultAction)
        case "deviceToken":
            var raw = sh_device_token()
            raw.bytes = memory.bytes([1])
            raw.length = 1
            #expect(DeviceToken(guarded.place(raw, endingBefore: \.hex)).bytes == [1])
        case "openURL":
            var raw = sh_open_url()
            raw.url = memory.string("myapp://item")
            #expect(OpenURL(guarded.place(raw, endingBefore: \.scheme)).host == "item")
        case "userActivity":
            var raw = sh_user_activity()
            raw.type = memory.string("t")
            #expect(UserActivity(guarded.place(raw, endingBefore: \.user_info)).type == "t")
        case "tape":
            #expect(JSONValue(tape: guarded.place(sh_json(), endingBefore: \.count)) == .null)
        case "scene":
            var raw = sh_scene()
            raw.name = memory.string("main")
            raw.role = memory.string("main")
            #expect(Scene(guarded.place(raw, endingBefore: \.configuration)).name == "main")
        case "connectionOptions":
            var raw = sh_scene_connection_options()
            raw.flags = UInt32(SH_FROM_LAUNCH)
            #expect(SceneConnectionOptions(guarded.place(raw, endingBefore: \.url_contexts)).isFromLaunch)
        case "event":
            var raw = sh_event()
            raw.kind = SH_EVENT_DID_BECOME_ACTIVE.rawValue
            #expect(
                ServicePlugin.dispatch(guarded.place(raw, endingBefore: \.data), to: RecordingService()) == Int32(SH_OK)
            )
        default:
            Issue.record("unknown case \(name)")
        }
    }
}

/// A readable page followed by one that cannot be read; a struct placed here ends at the border.
final class GuardedMemory {
    private let base: UnsafeMutableRawPointer
    private let page: Int

    init() throws {
        page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard let mapped = mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            mapped != MAP_FAILED
        else { throw TestFailure("mmap failed: errno \(errno)") }
        base = mapped
        guard mprotect(base + page, page, PROT_NONE) == 0 else { throw TestFailure("mprotect failed: errno \(errno)") }
    }

    deinit { munmap(base, 2 * page) }

    /// The first bytes of `value`, up to `member`, with `size` set to that many, ending at the
    /// unreadable page.
    func place<S, T>(_ value: S, endingBefore member: KeyPath<S, T>) -> UnsafePointer<S> {
        let size = MemoryLayout<S>.offset(of: member)!
        precondition(size % 8 == 0, "the struct must stay 8-byte aligned")
        let start = base + page - size
        withUnsafeBytes(of: value) { bytes in start.copyMemory(from: bytes.baseAddress!, byteCount: size) }
        start.storeBytes(of: UInt32(size), as: UInt32.self)
        return UnsafePointer(start.assumingMemoryBound(to: S.self))
    }
}
