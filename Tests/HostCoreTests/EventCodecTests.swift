import Foundation
@testable import HostCore
import ServiceABI
import ServiceJSON
import Testing

/// An event crosses to a worker byte for byte: every field, every string (even invalid
/// UTF-8), the JSON text and its parsed tape node for node.
@MainActor
@Suite struct EventCodecTests {
    /// Sends `data` of `kind` through the codec and compares what the worker would see.
    private func roundTrip(_ kind: EventKind, _ data: UnsafeRawPointer?, completion: UInt32 = 0) throws {
        var event = sh_event(size: UInt32(MemoryLayout<sh_event>.size), version: SH_EVENT_VERSION, kind: kind.rawValue,
                             app_state: AppState.background.rawValue, seq: 42, data: data, completion: nil)
        var writer = WireWriter()
        withUnsafePointer(to: &event) { EventCodec.encode($0, service: 3, completion: completion, into: &writer) }
        let bytes = writer.finish(.event, sequence: 9)
        var reader = WireReader(Array(bytes[Wire.headerSize...]))
        let arena = EventArena()
        let decoded = try EventCodec.decode(&reader, arena: arena)
        #expect(decoded.service == 3 && decoded.kind == kind.rawValue && decoded.seq == 42 && decoded.completion == completion)
        #expect(decoded.appState == AppState.background.rawValue)
        #expect(Self.describe(kind, decoded.data) == Self.describe(kind, data))
        if let data { #expect(decoded.data != data) }  // a copy, not the host's memory
    }

    @Test func everyKindsData_crossesUnchanged() throws {
        let arena = EventArena()
        let push = try PushPayload(parsing: Array(#"{"aps":{"alert":{"title":"Hi ✓","body":"x\u0000y"},"badge":3,"content-available":1},"n":[1.5,-2e300,true,false,null,{}],"k":"v"}"#.utf8))
        try roundTrip(.didReceiveRemoteNotification, UnsafeRawPointer(arena.push(push, action: nil, fromLaunch: false)))
        try roundTrip(.didReceiveNotificationResponse, UnsafeRawPointer(arena.push(push, action: SH_ACTION_DEFAULT, fromLaunch: true)), completion: 7)
        try roundTrip(.openURL, UnsafeRawPointer(arena.openURL(try OpenURLInput("MyApp://Item/42?q=ü"), fromLaunch: true)))
        let activity = try UserActivityInput(type: "com.example.view", webpageURL: "https://example.com/a", userInfo: ["id": 42, "tags": ["a", "b"]])
        try roundTrip(.continueUserActivity, UnsafeRawPointer(arena.activity(activity, fromLaunch: false)))
        try roundTrip(.continueUserActivity, UnsafeRawPointer(arena.activity(try UserActivityInput(type: "t"), fromLaunch: false)))
        try roundTrip(.didRegisterForRemoteNotifications, UnsafeRawPointer(arena.deviceToken(try DeviceToken(hex: "00ff10ab"))))
        try roundTrip(.didFailToRegisterForRemoteNotifications, UnsafeRawPointer(arena.errorInfo("no network")))
        try roundTrip(.notification, UnsafeRawPointer(arena.notification(name: "queue.enqueue", sender: "host", json: Array(#"{"a":1}"#.utf8))))
        try roundTrip(.notification, UnsafeRawPointer(arena.notification(name: "ping", sender: "a.b", json: nil)))
        let launch = LaunchRequest(notification: push, url: try OpenURLInput("myapp://x"), activity: activity)
        try roundTrip(.willFinishLaunching, UnsafeRawPointer(arena.launchOptions(launch, flags: 3, settings: Array(#"{"k":true}"#.utf8))))
        try roundTrip(.didFinishLaunching, UnsafeRawPointer(arena.launchOptions(LaunchRequest(), flags: 0, settings: nil)))
        for kind in [EventKind.didBecomeActive, .willResignActive, .didEnterBackground, .willEnterForeground, .willTerminate,
                     .didReceiveMemoryWarning] {
            try roundTrip(kind, nil)
        }
    }

    @Test func settingsFlagsAndInvalidUTF8_crossByteForByte() throws {
        let arena = EventArena()
        let settings = Array(#"{"verbose":true}"#.utf8)
        let options = arena.box(sh_launch_options(
            size: UInt32(MemoryLayout<sh_launch_options>.size), version: SH_LAUNCH_OPTIONS_VERSION,
            flags: UInt32(SH_LAUNCH_RESTART | SH_LAUNCH_FIRST_SERVICE_LAUNCH), reserved: 0,
            settings_json: UnsafeRawPointer(arena.bytes(settings)).assumingMemoryBound(to: CChar.self),
            settings_len: settings.count, notification: nil, url: nil, activity: nil))
        try roundTrip(.willFinishLaunching, UnsafeRawPointer(options))
        let invalid = UnsafeRawPointer(arena.bytes([0x62, 0xFF, 0xC3, 0x00])).assumingMemoryBound(to: CChar.self)
        try roundTrip(.didFailToRegisterForRemoteNotifications, UnsafeRawPointer(arena.box(sh_error_info(
            size: UInt32(MemoryLayout<sh_error_info>.size), version: SH_ERROR_INFO_VERSION, message: invalid))))
    }

    @Test func aTapeThatJumpsBackward_orDataOnALifecycleEvent_isRefused() {
        var writer = WireWriter()
        writer.u32(0); writer.u32(EventKind.didBecomeActive.rawValue); writer.i32(2); writer.u64(1); writer.u32(0)
        writer.bool(true)
        let bytes = writer.finish(.event, sequence: 1)
        var reader = WireReader(Array(bytes[Wire.headerSize...]))
        #expect(throws: WireError.self) { try EventCodec.decode(&reader, arena: EventArena()) }
    }

    // MARK: A deep description of an event's C data

    static func describe(_ kind: EventKind, _ data: UnsafeRawPointer?) -> String {
        guard let data else { return "nil" }
        switch kind {
        case .willFinishLaunching, .didFinishLaunching:
            let o = data.assumingMemoryBound(to: sh_launch_options.self).pointee
            return "launch(\(o.size),\(o.version),\(o.flags),settings:\(bytes(o.settings_json, o.settings_len)),"
                + "push:\(o.notification.map { push($0.pointee) } ?? "-"),url:\(o.url.map { url($0.pointee) } ?? "-"),"
                + "activity:\(o.activity.map { activity($0.pointee) } ?? "-"))"
        case .notification:
            let n = data.assumingMemoryBound(to: sh_notification.self).pointee
            return "note(\(n.size),\(n.version),\(string(n.name)),\(string(n.sender)),\(bytes(n.json, n.json_len)))"
        case .willPresentNotification, .didReceiveNotificationResponse, .didReceiveRemoteNotification:
            return push(data.assumingMemoryBound(to: sh_push.self).pointee)
        case .didRegisterForRemoteNotifications:
            let t = data.assumingMemoryBound(to: sh_device_token.self).pointee
            return "token(\(t.size),\(t.version),\(bytes(t.bytes, t.length)),\(string(t.hex)))"
        case .didFailToRegisterForRemoteNotifications:
            let e = data.assumingMemoryBound(to: sh_error_info.self).pointee
            return "error(\(e.size),\(e.version),\(string(e.message)))"
        case .openURL: return url(data.assumingMemoryBound(to: sh_open_url.self).pointee)
        case .continueUserActivity: return activity(data.assumingMemoryBound(to: sh_user_activity.self).pointee)
        default: return "unexpected data"
        }
    }

    private static func bytes(_ pointer: UnsafeRawPointer?, _ count: Int) -> String {
        guard let pointer else { return "NULL" }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count)).description
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "NULL" }
        return bytes(pointer, strlen(pointer) + 1)  // the NUL too
    }

    private static func push(_ p: sh_push) -> String {
        "push(\(p.size),\(p.version),\(p.flags),\(bytes(p.json, p.json_len + 1)),\(string(p.action_id)),"
            + "\(p.parsed.map { tape($0.pointee) } ?? "NULL"))"
    }

    private static func url(_ u: sh_open_url) -> String {
        "url(\(u.size),\(u.version),\(u.flags),\(string(u.url)),\(string(u.scheme)),\(string(u.host)))"
    }

    private static func activity(_ a: sh_user_activity) -> String {
        "activity(\(a.size),\(a.version),\(a.flags),\(string(a.type)),\(string(a.webpage_url)),"
            + "\(a.user_info_json.map { bytes($0, a.user_info_len + 1) } ?? "NULL"),\(a.user_info.map { tape($0.pointee) } ?? "NULL"))"
    }

    private static func tape(_ json: sh_json) -> String {
        var out = "tape(\(json.size),\(json.version),\(json.count):"
        for index in 0..<json.count {
            let node = json.nodes[index]
            out += "[\(node.type),\(node.count),\(node.next),\(node.reserved),\(node.number.bitPattern),"
                + "\(node.string.map { bytes($0, node.length + 1) } ?? "NULL"),\(node.length)]"
        }
        return out + ")"
    }
}
