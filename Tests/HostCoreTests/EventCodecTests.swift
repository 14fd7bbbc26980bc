import Foundation
import ServiceABI
import ServiceJSON
import Testing

@testable import HostCore

/// An event crosses to a worker byte for byte: every field, every string (even invalid
/// UTF-8), the JSON text and its parsed tape node for node.
@MainActor
@Suite struct EventCodecTests {
    /// Keeps the host-side arenas of `answer(filling:)` alive for the whole test: the returned
    /// configuration's `settings` points into one.
    private final class Keeper { var arenas: [EventArena] = [] }
    private let keeper = Keeper()

    /// Sends `data` of `kind` through the codec and compares what the worker would see.
    /// Returns what the worker decoded, with the arena its data lives in (scenes live in `scenes`).
    @discardableResult
    private func roundTrip(
        _ kind: EventKind, _ data: UnsafeRawPointer?, completion: UInt32 = 0,
        scenes: WorkerScenes = WorkerScenes()
    ) throws -> (decoded: EventCodec.Decoded, arena: EventArena) {
        var event = sh_event(
            size: UInt32(MemoryLayout<sh_event>.size), version: SH_EVENT_VERSION, kind: kind.rawValue,
            app_state: AppState.background.rawValue, seq: 42, data: data, completion: nil)
        var writer = WireWriter()
        withUnsafePointer(to: &event) { EventCodec.encode($0, service: 3, completion: completion, into: &writer) }
        let bytes = writer.finish(.event, sequence: 9)
        var reader = WireReader(Array(bytes[Wire.headerSize...]))
        let arena = EventArena()
        let decoded = try EventCodec.decode(&reader, arena: arena, scenes: scenes)
        #expect(
            decoded.service == 3 && decoded.kind == kind.rawValue && decoded.seq == 42
                && decoded.completion == completion)
        #expect(decoded.appState == AppState.background.rawValue)
        #expect(Self.describe(kind, decoded.data) == Self.describe(kind, data))
        if let data { #expect(decoded.data != data) }  // a copy, not the host's memory
        return (decoded, arena)
    }

    @Test func everyKindsData_crossesUnchanged() throws {
        let arena = EventArena()
        let push = try PushPayload(
            parsing: Array(
                #"{"aps":{"alert":{"title":"Hi ✓","body":"x\u0000y"},"badge":3,"content-available":1},"n":[1.5,-2e300,true,false,null,{}],"k":"v"}"#
                    .utf8))
        try roundTrip(.didReceiveRemoteNotification, UnsafeRawPointer(arena.push(push, action: nil, fromLaunch: false)))
        try roundTrip(
            .didReceiveNotificationResponse,
            UnsafeRawPointer(arena.push(push, action: SH_ACTION_DEFAULT, fromLaunch: true)), completion: 7)
        try roundTrip(
            .openURL, UnsafeRawPointer(arena.openURL(try OpenURLInput("MyApp://Item/42?q=ü"), fromLaunch: true)))
        let activity = try UserActivityInput(
            type: "com.example.view", webpageURL: "https://example.com/a", userInfo: ["id": 42, "tags": ["a", "b"]])
        try roundTrip(.continueUserActivity, UnsafeRawPointer(arena.activity(activity, fromLaunch: false)))
        try roundTrip(
            .continueUserActivity, UnsafeRawPointer(arena.activity(try UserActivityInput(type: "t"), fromLaunch: false))
        )
        try roundTrip(
            .didRegisterForRemoteNotifications, UnsafeRawPointer(arena.deviceToken(try DeviceToken(hex: "00ff10ab"))))
        try roundTrip(.didFailToRegisterForRemoteNotifications, UnsafeRawPointer(arena.errorInfo("no network")))
        try roundTrip(
            .notification,
            UnsafeRawPointer(
                arena.notification(
                    name: "queue.enqueue", sender: "host", json: Array(#"{"a":1}"#.utf8),
                    tape: try JSONTape(parsing: Array(#"{"a":1}"#.utf8)))))
        try roundTrip(
            .notification, UnsafeRawPointer(arena.notification(name: "ping", sender: "a.b", json: nil, tape: nil)))
        let launch = LaunchRequest(notification: push, url: try OpenURLInput("myapp://x"), activity: activity)
        try roundTrip(
            .willFinishLaunching,
            UnsafeRawPointer(arena.launchOptions(launch, flags: 3, settings: Array(#"{"k":true}"#.utf8))))
        try roundTrip(
            .didFinishLaunching, UnsafeRawPointer(arena.launchOptions(LaunchRequest(), flags: 0, settings: nil)))
        try roundTrip(
            .didChangeSettings,
            UnsafeRawPointer(arena.settingsChange(old: Array(#"{"n":1}"#.utf8), new: Array(#"{"n":2}"#.utf8))))
        try roundTrip(.didChangeSettings, UnsafeRawPointer(arena.settingsChange(old: nil, new: Array("{}".utf8))))
        try roundTrip(.dependencyWillStop, UnsafeRawPointer(arena.dependency(id: "dev.a", version: "1.2.0")))
        try roundTrip(.dependencyDidStart, UnsafeRawPointer(arena.dependency(id: "dev.b", version: "")))
        for kind in [
            EventKind.didBecomeActive, .willResignActive, .didEnterBackground, .willEnterForeground, .willTerminate,
            .didReceiveMemoryWarning,
        ] {
            try roundTrip(kind, nil)
        }
    }

    /// The host's table from the vocabulary to the payload declarations names the struct the
    /// vocabulary names (EventData.cStruct, which VocabularyTests holds against the header),
    /// and each declaration's `empty` carries that struct's size and header version.
    @Test func everyPayloadDeclaration_isTheStructTheVocabularyNames() {
        var declared: [String] = []
        for data in EventData.allCases {
            guard let payload = data.payload else { continue }
            #expect(String(describing: payload) == data.cStruct, "\(data)")
            declared.append(String(describing: payload))
        }
        #expect(declared.count == 12)
        #expect(
            sh_open_url.empty.size == UInt32(MemoryLayout<sh_open_url>.size)
                && sh_open_url.empty.version == SH_OPEN_URL_VERSION)
        #expect(sh_launch_options.empty.version == SH_LAUNCH_OPTIONS_VERSION && sh_launch_options.empty.url == nil)
    }

    @Test func settingsFlagsAndInvalidUTF8_crossByteForByte() throws {
        let arena = EventArena()
        let settings = Array(#"{"verbose":true}"#.utf8)
        let options = arena.box(
            sh_launch_options(
                size: UInt32(MemoryLayout<sh_launch_options>.size), version: SH_LAUNCH_OPTIONS_VERSION,
                flags: UInt32(SH_LAUNCH_RESTART | SH_LAUNCH_FIRST_SERVICE_LAUNCH), reserved: 0,
                settings_json: UnsafeRawPointer(arena.bytes(settings)).assumingMemoryBound(to: CChar.self),
                settings_len: settings.count, notification: nil, url: nil, activity: nil,
                restored_state: arena.bytes([0, 1, 0xFF]), restored_state_len: 3,
                restored_from_id: arena.string("test.old"), restored_from_version: arena.string("0.9.0")))
        try roundTrip(.willFinishLaunching, UnsafeRawPointer(options))
        let invalid = UnsafeRawPointer(arena.bytes([0x62, 0xFF, 0xC3, 0x00])).assumingMemoryBound(to: CChar.self)
        try roundTrip(
            .didFailToRegisterForRemoteNotifications,
            UnsafeRawPointer(
                arena.box(
                    sh_error_info(
                        size: UInt32(MemoryLayout<sh_error_info>.size), version: SH_ERROR_INFO_VERSION, message: invalid
                    ))))
    }

    @Test func aTapeThatJumpsBackward_orDataOnALifecycleEvent_isRefused() {
        var writer = WireWriter()
        writer.u32(0)
        writer.u32(EventKind.didBecomeActive.rawValue)
        writer.i32(2)
        writer.u64(1)
        writer.u32(0)
        writer.bool(true)
        let bytes = writer.finish(.event, sequence: 1)
        var reader = WireReader(Array(bytes[Wire.headerSize...]))
        #expect(throws: WireError.self) { try EventCodec.decode(&reader, arena: EventArena(), scenes: WorkerScenes()) }
    }

    // MARK: Scenes

    /// A configured scene as the host holds it, with settings (text and tape).
    private func configuredScene(id: UInt64, name: String, role: String) throws -> SceneRecord {
        let scene = SceneRecord(id: id, name: name, role: "")
        let text = Array(#"{"theme":"dark","n":[1,2.5,null]}"#.utf8)
        scene.configure(
            SceneConfigurationChoice(
                name: "phone ✓", role: role, settings: (try JSONValue(parsing: text), text),
                service: "a"))
        return scene
    }

    /// A host-side out-struct of configurationForConnecting, emptied as the host empties it.
    private func emptyConfiguration(_ arena: EventArena, capacity: Int = EventRouter.sceneSettingsCapacity)
        -> UnsafeMutablePointer<sh_scene_configuration>
    {
        var empty = sh_scene_configuration()
        empty.size = UInt32(MemoryLayout<sh_scene_configuration>.size)
        empty.version = SH_SCENE_CONFIGURATION_VERSION
        empty.settings = UnsafeMutableRawPointer(mutating: arena.bytes([UInt8](repeating: 0, count: capacity)))
            .assumingMemoryBound(to: CChar.self)
        empty.settings_capacity = capacity
        return UnsafeMutablePointer(mutating: arena.box(empty))
    }

    @Test func everySceneKindsData_crossesUnchanged() throws {
        let arena = EventArena()
        var request = try SceneRequest(
            name: "car", role: "car", urls: [try OpenURLInput("MyApp://Item/42?q=ü"), try OpenURLInput("myapp://b")],
            activities: [
                try UserActivityInput(
                    type: "com.example.view", webpageURL: "https://example.com/a",
                    userInfo: ["id": 42])
            ])
        request.isFromLaunch = true
        let options = arena.sceneConnectionOptions(request)
        let connecting = SceneRecord(id: 7, name: "car", role: "")
        try roundTrip(
            .configurationForConnecting,
            UnsafeRawPointer(
                arena.sceneConnection(connecting.raw, options.options, configuration: emptyConfiguration(arena))))
        let scene = try configuredScene(id: 7, name: "car", role: "car")
        try roundTrip(
            .sceneWillConnect, UnsafeRawPointer(arena.sceneConnection(scene.raw, options.options, configuration: nil)))
        let bare = arena.sceneConnectionOptions(try SceneRequest(name: "x"))
        let plain = SceneRecord(id: 8, name: "x", role: "main")
        _ = try withExtendedLifetime(plain) {
            try roundTrip(
                .sceneWillConnect, UnsafeRawPointer(arena.sceneConnection(plain.raw, bare.options, configuration: nil)))
        }
        for (kind, state) in [
            (EventKind.sceneWillEnterForeground, SceneState.unattached), (.sceneDidBecomeActive, .foregroundActive),
            (.sceneWillResignActive, .foregroundActive), (.sceneDidEnterBackground, .background),
            (.sceneDidDisconnect, .unattached),
        ] {
            scene.setState(state)
            try roundTrip(kind, UnsafeRawPointer(scene.raw))
        }
        try roundTrip(.sceneOpenURLContexts, UnsafeRawPointer(arena.sceneOpenURL(scene, options.urls[1])))
        try roundTrip(.sceneContinueUserActivity, UnsafeRawPointer(arena.sceneActivity(scene, options.activities[0])))
    }

    @Test func aScene_isOneStructPerConnectionInTheWorker_updatedInPlace_andRetiredAfterItsDisconnect() throws {
        let arena = EventArena()
        let scenes = WorkerScenes()
        let options = arena.sceneConnectionOptions(
            try SceneRequest(name: "main", urls: [try OpenURLInput("myapp://x")]))
        let main = SceneRecord(id: 1, name: "main", role: "")
        var (first, keep) = try roundTrip(
            .configurationForConnecting,
            UnsafeRawPointer(
                arena.sceneConnection(main.raw, options.options, configuration: emptyConfiguration(arena))),
            scenes: scenes)
        let pointer = try #require(first.data?.assumingMemoryBound(to: sh_scene_connection.self).pointee.scene)
        #expect(pointer.pointee.configuration == nil && String(cString: pointer.pointee.role) == "")
        main.configure(SceneConfigurationChoice(name: "phone", role: "main", settings: nil, service: nil))
        var seen: [UnsafePointer<sh_scene>] = []
        (first, keep) = try roundTrip(
            .sceneWillConnect, UnsafeRawPointer(arena.sceneConnection(main.raw, options.options, configuration: nil)),
            scenes: scenes)
        seen.append(first.data!.assumingMemoryBound(to: sh_scene_connection.self).pointee.scene)
        main.setState(.foregroundInactive)
        seen.append(
            try roundTrip(.sceneWillEnterForeground, UnsafeRawPointer(main.raw), scenes: scenes).decoded.data!
                .assumingMemoryBound(to: sh_scene.self))
        #expect(seen.last!.pointee.state == SceneState.foregroundInactive.rawValue)
        #expect(
            String(cString: seen.last!.pointee.configuration) == "phone"
                && String(cString: seen.last!.pointee.role) == "main")
        (first, keep) = try roundTrip(
            .sceneOpenURLContexts, UnsafeRawPointer(arena.sceneOpenURL(main, options.urls[0])),
            scenes: scenes)
        seen.append(first.data!.assumingMemoryBound(to: sh_scene_open_url.self).pointee.scene)
        // A second scene gets its own struct.
        let car = try configuredScene(id: 2, name: "car", role: "car")
        let carPointer = try roundTrip(.sceneDidBecomeActive, UnsafeRawPointer(car.raw), scenes: scenes).decoded.data!
        #expect(carPointer != UnsafeRawPointer(pointer))
        #expect(scenes.count == 2)
        // Disconnected: the same struct for every service that receives sceneDidDisconnect,
        // freed at the next other event.
        main.setState(.unattached)
        for _ in 0..<2 {
            seen.append(
                try roundTrip(.sceneDidDisconnect, UnsafeRawPointer(main.raw), scenes: scenes).decoded.data!
                    .assumingMemoryBound(to: sh_scene.self))
            #expect(scenes.count == 2)
        }
        #expect(seen.allSatisfy { $0 == pointer })
        #expect(seen.last!.pointee.state == SceneState.unattached.rawValue)
        try roundTrip(.didEnterBackground, nil, scenes: scenes)
        #expect(scenes.count == 1)
        try roundTrip(.sceneWillResignActive, UnsafeRawPointer(car.raw), scenes: scenes)
        #expect(scenes.count == 1)
        _ = keep
    }

    /// The configuration a service fills in a worker, back in the host's out-struct.
    private func answer(
        filling: (inout sh_scene_configuration, UnsafeMutablePointer<CChar>) -> Void,
        hostSize: Int = MemoryLayout<sh_scene_configuration>.size
    ) throws -> sh_scene_configuration {
        let arena = EventArena()
        keeper.arenas.append(arena)
        let scene = SceneRecord(id: 3, name: "car", role: "car")
        let options = arena.sceneConnectionOptions(try SceneRequest(name: "car", role: "car"))
        let out = emptyConfiguration(arena)
        out.pointee.size = UInt32(hostSize)
        let connection = arena.sceneConnection(scene.raw, options.options, configuration: out)
        var event = sh_event(
            size: UInt32(MemoryLayout<sh_event>.size), version: SH_EVENT_VERSION,
            kind: EventKind.configurationForConnecting.rawValue, app_state: AppState.inactive.rawValue,
            seq: 5, data: UnsafeRawPointer(connection), completion: nil)
        return try withExtendedLifetime(scene) {
            try withUnsafePointer(to: &event) { event in
                var writer = WireWriter()
                EventCodec.encode(event, service: 0, completion: 0, into: &writer)
                let sent = writer.finish(.event, sequence: 1)
                var reader = WireReader(Array(sent[Wire.headerSize...]))
                let workerArena = EventArena()
                let decoded = try EventCodec.decode(&reader, arena: workerArena, scenes: WorkerScenes())
                let asked = try #require(
                    decoded.data?.assumingMemoryBound(to: sh_scene_connection.self).pointee.configuration)
                #expect(asked != out)
                if hostSize == MemoryLayout<sh_scene_configuration>.size {
                    #expect(Self.configuration(asked.pointee) == Self.configuration(out.pointee))
                }
                filling(&asked.pointee, asked.pointee.settings)
                var result = WireWriter()
                result.i32(Int32(SH_OK))
                EventCodec.writeAnswer(decoded, into: &result)
                let back = result.finish(.result, sequence: 1)
                var answer = WireReader(Array(back[Wire.headerSize...]))
                #expect(try answer.i32("result") == Int32(SH_OK))
                try EventCodec.readAnswer(&answer, for: event)
                try answer.finish("result")
                #expect(out.pointee.settings_capacity == EventRouter.sceneSettingsCapacity)
                return out.pointee
            }
        }
    }

    private static func text<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    @Test func theConfigurationAServiceFills_isCopiedIntoTheHostsOutStruct() throws {
        let settings = Array(#"{"theme":"dark"}"#.utf8)
        let filled = try answer { c, buffer in
            withUnsafeMutableBytes(of: &c.name) { $0.copyBytes(from: Array("car ✓".utf8) + [0]) }
            withUnsafeMutableBytes(of: &c.role) { $0.copyBytes(from: Array("car".utf8) + [0]) }
            UnsafeMutableRawPointer(buffer).copyMemory(from: settings, byteCount: settings.count)
            c.settings_len = settings.count
            c.settings = nil  // a service that moved the pointer: the worker still reads its buffer
        }
        #expect(Self.text(filled.name) == "car ✓" && Self.text(filled.role) == "car")
        #expect(filled.settings_len == settings.count)
        #expect(Array(UnsafeRawBufferPointer(start: filled.settings, count: filled.settings_len)) == settings)
        let choice = try EventRouter.read(filled, settings: filled.settings, requestedRole: "car")
        #expect(choice.name == "car ✓" && choice.role == "car" && choice.settings?.text == settings)

        // Byte for byte, even an answer the host refuses: a name without its NUL, settings_len beyond the buffer.
        let bad = try answer { c, _ in
            _ = withUnsafeMutableBytes(of: &c.name) { $0.initializeMemory(as: UInt8.self, repeating: 0x41) }
            c.settings_len = EventRouter.sceneSettingsCapacity + 1
        }
        #expect(withUnsafeBytes(of: bad.name) { $0.allSatisfy { $0 == 0x41 } })
        #expect(bad.settings_len == EventRouter.sceneSettingsCapacity + 1)
        #expect(throws: InputError.self) { try EventRouter.read(bad, settings: bad.settings, requestedRole: "car") }

        // A host whose struct ends before role: only the name is copied.
        let short = try answer(
            filling: { c, _ in
                withUnsafeMutableBytes(of: &c.name) { $0.copyBytes(from: Array("n".utf8) + [0]) }
                withUnsafeMutableBytes(of: &c.role) { $0.copyBytes(from: Array("car".utf8) + [0]) }
                c.settings_len = 3
            }, hostSize: MemoryLayout<sh_scene_configuration>.offset(of: \sh_scene_configuration.role)!)
        #expect(Self.text(short.name) == "n" && Self.text(short.role) == "" && short.settings_len == 0)
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
            return "note(\(n.size),\(n.version),\(string(n.name)),\(string(n.sender)),\(bytes(n.json, n.json_len)),"
                + "\(n.parsed.map { tape($0.pointee) } ?? "NULL"))"
        case .willPresentNotification, .didReceiveNotificationResponse, .didReceiveRemoteNotification:
            return push(data.assumingMemoryBound(to: sh_push.self).pointee)
        case .didRegisterForRemoteNotifications:
            let t = data.assumingMemoryBound(to: sh_device_token.self).pointee
            return "token(\(t.size),\(t.version),\(bytes(t.bytes, t.length)),\(string(t.hex)))"
        case .didFailToRegisterForRemoteNotifications:
            let e = data.assumingMemoryBound(to: sh_error_info.self).pointee
            return "error(\(e.size),\(e.version),\(string(e.message)))"
        case .didChangeSettings:
            let c = data.assumingMemoryBound(to: sh_settings_change.self).pointee
            return "settings(\(c.size),\(c.version),\(bytes(c.old_json, c.old_len)),\(bytes(c.new_json, c.new_len)))"
        case .dependencyWillStop, .dependencyDidStart:
            let d = data.assumingMemoryBound(to: sh_dependency.self).pointee
            return "dependency(\(d.size),\(d.version),\(string(d.id)),\(string(d.service_version)))"
        case .openURL: return url(data.assumingMemoryBound(to: sh_open_url.self).pointee)
        case .continueUserActivity: return activity(data.assumingMemoryBound(to: sh_user_activity.self).pointee)
        case .configurationForConnecting, .sceneWillConnect:
            let c = data.assumingMemoryBound(to: sh_scene_connection.self).pointee
            return "connection(\(c.size),\(c.version),\(scene(c.scene.pointee)),\(options(c.options.pointee)),"
                + "\(c.configuration.map { configuration($0.pointee) } ?? "NULL"))"
        case .sceneOpenURLContexts:
            let u = data.assumingMemoryBound(to: sh_scene_open_url.self).pointee
            return "sceneURL(\(u.size),\(u.version),\(scene(u.scene.pointee)),\(url(u.url.pointee)))"
        case .sceneContinueUserActivity:
            let a = data.assumingMemoryBound(to: sh_scene_user_activity.self).pointee
            return "sceneActivity(\(a.size),\(a.version),\(scene(a.scene.pointee)),\(activity(a.activity.pointee)))"
        case .sceneWillEnterForeground, .sceneDidBecomeActive, .sceneWillResignActive, .sceneDidEnterBackground,
            .sceneDidDisconnect:
            return scene(data.assumingMemoryBound(to: sh_scene.self).pointee)
        default: return "unexpected data"
        }
    }

    private static func scene(_ s: sh_scene) -> String {
        "scene(\(s.size),\(s.version),\(s.id),\(string(s.name)),\(string(s.role)),\(s.state),\(s.reserved),"
            + "\(string(s.configuration)),\(s.settings_json.map { bytes($0, s.settings_len + 1) } ?? "NULL"),"
            + "\(s.settings.map { tape($0.pointee) } ?? "NULL"))"
    }

    private static func options(_ o: sh_scene_connection_options) -> String {
        let urls = (0..<o.url_context_count).map { url(o.url_contexts[$0]!.pointee) }
        let activities = (0..<o.user_activity_count).map { activity(o.user_activities[$0]!.pointee) }
        return "options(\(o.size),\(o.version),\(o.flags),\(o.reserved),\(urls),\(activities),"
            + "\(o.url_contexts == nil),\(o.user_activities == nil))"
    }

    static func configuration(_ c: sh_scene_configuration) -> String {
        let name = withUnsafeBytes(of: c.name) { Array($0) }
        let role = withUnsafeBytes(of: c.role) { Array($0) }
        return "configuration(\(c.size),\(c.version),\(name),\(role),\(c.settings_capacity),\(c.settings_len),"
            + "\(bytes(c.settings, min(c.settings_len, c.settings_capacity))))"
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
            out +=
                "[\(node.type),\(node.count),\(node.next),\(node.reserved),\(node.number.bitPattern),"
                + "\(node.string.map { bytes($0, node.length + 1) } ?? "NULL"),\(node.length)]"
        }
        return out + ")"
    }
}
