import ServiceABI
import Testing

@testable import ServiceKit

/// The scene structs (scenes.h) from an older, shorter host: each member past `size` is
/// ignored, and a connection or answer struct too short to hold what the event needs is
/// refused with `SH_INVALID` before the service is called.
@Suite struct OlderSceneStructTests {
    /// A scene whose settings text says 1 and whose tape says 2.
    private func scene(_ memory: HostMemory, id: UInt64, name: String = "car", size: UInt32 = fullSize(sh_scene.self))
        -> UnsafeMutablePointer<sh_scene>
    {
        let settings = #"{"n":1}"#
        return memory.place(
            sh_scene(
                size: size, version: SH_SCENE_VERSION, id: id, name: memory.string(name), role: memory.string("car"),
                state: Int32(SH_SCENE_FOREGROUND_ACTIVE.rawValue), reserved: 0, configuration: memory.string("dash"),
                settings_json: memory.string(settings), settings_len: settings.utf8.count,
                settings: memory.tape(object: [("n", 2)])))
    }

    @Test func scene_ofTheCurrentSize_readsEveryMemberAndTheTape() {
        let memory = HostMemory()
        let scene = Scene(UnsafePointer(scene(memory, id: 7)))
        #expect(
            scene
                == Scene(
                    name: "car", role: .car, state: .foregroundActive, configurationName: "dash",
                    settings: ["n": 2], connectionID: 7))
    }

    @Test func scene_endingBeforeItsTape_parsesTheSettingsText() {
        let memory = HostMemory()
        #expect(
            Scene(UnsafePointer(scene(memory, id: 7, size: size(endingBefore: \sh_scene.settings)))).settings == [
                "n": 1
            ])
    }

    @Test func scene_endingBeforeItsSettings_hasNone() {
        let memory = HostMemory()
        let scene = Scene(UnsafePointer(scene(memory, id: 7, size: size(endingBefore: \sh_scene.settings_json))))
        #expect(scene.configurationName == "dash")
        #expect(scene.settings == nil)
    }

    @Test func scene_endingBeforeItsState_isUnattachedWithoutAConfiguration() {
        let memory = HostMemory()
        let scene = Scene(UnsafePointer(scene(memory, id: 7, size: size(endingBefore: \sh_scene.state))))
        #expect(scene.role == .car)
        #expect(scene.state == .unattached)
        #expect(scene.configurationName == "")
    }

    @Test func scene_endingBeforeItsID_hasNoNameRoleOrConnection() {
        let memory = HostMemory()
        let scene = Scene(UnsafePointer(scene(memory, id: 7, size: size(endingBefore: \sh_scene.id))))
        #expect(
            scene == Scene(name: "", role: .unspecified, state: .unattached, configurationName: "", connectionID: 0))
    }

    @Test func sceneStateFromANewerHost_readsAsForegroundInactive() {
        let memory = HostMemory()
        let raw = scene(memory, id: 7)
        raw.pointee.state = 42
        #expect(Scene(UnsafePointer(raw)).state == .foregroundInactive)
    }

    @Test func sceneCache_keepsAScene_byItsConnectionID() {
        let memory = HostMemory()
        let id = UInt64.random(in: 1_000_000...UInt64.max)
        let raw = scene(memory, id: id, name: "first")
        #expect(SceneCache.scene(UnsafePointer(raw), fresh: true).name == "first")
        raw.pointee.name = memory.string("renamed")
        raw.pointee.state = Int32(SH_SCENE_BACKGROUND.rawValue)
        let again = SceneCache.scene(UnsafePointer(raw))
        #expect(again.name == "first")  // built once, reused
        #expect(again.state == .background)  // with the state of this event
        SceneCache.forget(again)
        #expect(SceneCache.scene(UnsafePointer(raw)).name == "renamed")
    }

    @Test func sceneCache_withoutAConnectionID_buildsTheSceneEveryTime() {
        let memory = HostMemory()
        let raw = scene(memory, id: 0, name: "first")
        #expect(SceneCache.scene(UnsafePointer(raw), fresh: true).name == "first")
        raw.pointee.name = memory.string("renamed")
        #expect(SceneCache.scene(UnsafePointer(raw)).name == "renamed")
        // An older struct that ends inside `id` has no connection id, whatever the bytes there.
        raw.pointee.id = UInt64.random(in: 1_000_000...UInt64.max)
        raw.pointee.size = size(endingBefore: \sh_scene.id) + 4
        #expect(SceneCache.scene(UnsafePointer(raw)).connectionID == 0)
    }

    // MARK: - sh_scene_connection_options

    private func options(_ memory: HostMemory, size: UInt32) -> UnsafePointer<sh_scene_connection_options> {
        let url = UnsafePointer(
            memory.place(
                sh_open_url(
                    size: fullSize(sh_open_url.self), version: SH_OPEN_URL_VERSION, flags: 0, reserved: 0,
                    url: memory.string("myapp://a"), scheme: nil, host: nil)))
        var activity = sh_user_activity()
        activity.size = fullSize(sh_user_activity.self)
        activity.type = memory.string("com.example.view")
        let urls: [UnsafePointer<sh_open_url>?] = [url, nil]
        let activities: [UnsafePointer<sh_user_activity>?] = [UnsafePointer(memory.place(activity))]
        return UnsafePointer(
            memory.place(
                sh_scene_connection_options(
                    size: size, version: SH_SCENE_CONNECTION_OPTIONS_VERSION, flags: UInt32(SH_FROM_LAUNCH),
                    reserved: 0,
                    url_contexts: memory.array(urls), url_context_count: 2,
                    user_activities: memory.array(activities), user_activity_count: 1, restoration_activity: nil)))
    }

    @Test func connectionOptions_ofTheCurrentSize_readEveryList() {
        let memory = HostMemory()
        let options = SceneConnectionOptions(options(memory, size: fullSize(sh_scene_connection_options.self)))
        #expect(options.isFromLaunch)
        #expect(options.urlContexts.map(\.string) == ["myapp://a"])  // the NULL entry is skipped
        #expect(options.userActivities.map(\.type) == ["com.example.view"])
    }

    @Test func connectionOptions_endingBeforeTheActivities_haveURLsOnly() {
        let memory = HostMemory()
        let options = SceneConnectionOptions(
            options(memory, size: size(endingBefore: \sh_scene_connection_options.user_activities)))
        #expect(options.urlContexts.count == 1)
        #expect(options.userActivities.isEmpty)
    }

    @Test func connectionOptions_endingBeforeTheURLs_haveOnlyTheirFlag() {
        let memory = HostMemory()
        let options = SceneConnectionOptions(
            options(memory, size: size(endingBefore: \sh_scene_connection_options.url_contexts)))
        #expect(options == SceneConnectionOptions(isFromLaunch: true))
        let none = SceneConnectionOptions(
            self.options(memory, size: size(endingBefore: \sh_scene_connection_options.flags)))
        #expect(none == SceneConnectionOptions())
    }

    // MARK: - sh_scene_configuration (the service's answer)

    private func answer(_ memory: HostMemory, size: UInt32, capacity: Int = 64) -> UnsafeMutablePointer<
        sh_scene_configuration
    > {
        let raw = memory.place(sh_scene_configuration())
        raw.pointee.size = size
        raw.pointee.version = SH_SCENE_CONFIGURATION_VERSION
        raw.pointee.settings = UnsafeMutablePointer(
            mutating: UnsafePointer<CChar>(
                OpaquePointer(memory.bytes([UInt8](repeating: 0, count: capacity)))))
        raw.pointee.settings_capacity = capacity
        return raw
    }

    @Test func configurationAnswer_intoAStructOfTheCurrentSize_isWritten() throws {
        let memory = HostMemory()
        let raw = answer(memory, size: fullSize(sh_scene_configuration.self))
        let result = SceneConfiguration(name: "dash", role: .car, settings: ["n": 1]).write(to: raw)
        #expect(throws: Never.self) { try result.get() }
        #expect(
            withUnsafeBytes(of: raw.pointee.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } == "dash")
        #expect(
            withUnsafeBytes(of: raw.pointee.role) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } == "car")
        let settings = String(
            decoding: UnsafeRawBufferPointer(start: raw.pointee.settings, count: raw.pointee.settings_len),
            as: UTF8.self)
        #expect(settings == #"{"n":1}"#)
    }

    @Test func configurationAnswer_intoAStructEndingBeforeSettingsLength_isRefused() {
        let memory = HostMemory()
        let short = size(endingBefore: \sh_scene_configuration.settings_len)
        let raw = answer(memory, size: short)
        let result = SceneConfiguration(name: "dash").write(to: raw)
        guard case .failure(let error) = result else {
            Issue.record("a \(short)-byte answer struct was written")
            return
        }
        #expect(error.description == "the host's sh_scene_configuration is too small (\(short) bytes)")
        #expect(raw.pointee.name.0 == 0)  // nothing was written
    }

    @Test func configurationAnswer_thatDoesNotFit_isRefusedWithTheReason() {
        let memory = HostMemory()
        let raw = answer(memory, size: fullSize(sh_scene_configuration.self), capacity: 4)
        let long = String(repeating: "x", count: Int(SH_SCENE_CONFIGURATION_NAME_MAX))
        for (configuration, reason) in [
            (
                SceneConfiguration(name: long),
                "the name \"\(long)\" is over \(SH_SCENE_CONFIGURATION_NAME_MAX - 1) bytes"
            ),
            (SceneConfiguration(name: "a", settings: [1]), "the settings are not a JSON object"),
            (
                SceneConfiguration(name: "a", settings: ["key": "value"]),
                "the settings are 15 bytes; the host takes at most 4"
            ),
        ] {
            guard case .failure(let error) = configuration.write(to: raw) else {
                Issue.record("written: \(configuration)")
                continue
            }
            #expect(error.description == reason)
        }
    }

    // MARK: - the scene events' own structs

    @Test func configurationEvent_whoseConnectionEndsBeforeTheAnswer_isRefusedBeforeTheService() {
        let memory = HostMemory()
        let service = RecordingService()
        service.configuration = SceneConfiguration(name: "dash")
        let answer = answer(memory, size: fullSize(sh_scene_configuration.self))
        let connection = memory.place(
            sh_scene_connection(
                size: fullSize(sh_scene_connection.self), version: SH_SCENE_CONNECTION_VERSION,
                scene: UnsafePointer(scene(memory, id: 0, name: "main")),
                options: options(memory, size: fullSize(sh_scene_connection_options.self)), configuration: answer))
        let event = sceneEvent(memory, SH_EVENT_CONFIGURATION_FOR_CONNECTING, data: connection)
        #expect(ServicePlugin.dispatch(event, to: service) == Int32(SH_OK))
        #expect(service.calls == ["configuration main"])
        #expect(service.connectionOptions.last?.urlContexts.count == 1)

        connection.pointee.size = size(endingBefore: \sh_scene_connection.configuration)
        #expect(ServicePlugin.dispatch(event, to: service) == Int32(SH_INVALID))
        #expect(service.calls == ["configuration main"])
    }

    @Test func willConnect_whoseConnectionEndsBeforeTheOptions_isRefusedBeforeTheService() {
        let memory = HostMemory()
        let service = RecordingService()
        let connection = memory.place(
            sh_scene_connection(
                size: fullSize(sh_scene_connection.self), version: SH_SCENE_CONNECTION_VERSION,
                scene: UnsafePointer(scene(memory, id: 0, name: "main")), options: nil, configuration: nil))
        let event = sceneEvent(memory, SH_EVENT_SCENE_WILL_CONNECT, data: connection)
        #expect(ServicePlugin.dispatch(event, to: service) == Int32(SH_OK))
        #expect(service.calls == ["willConnect main"])
        connection.pointee.size = size(endingBefore: \sh_scene_connection.options)
        #expect(ServicePlugin.dispatch(event, to: service) == Int32(SH_INVALID))
        #expect(service.calls == ["willConnect main"])
    }

    @Test func sceneOpenURL_whoseStructEndsBeforeTheURL_isRefusedBeforeTheService() {
        let memory = HostMemory()
        let service = RecordingService()
        let url = UnsafePointer(
            memory.place(
                sh_open_url(
                    size: fullSize(sh_open_url.self), version: SH_OPEN_URL_VERSION, flags: 0, reserved: 0,
                    url: memory.string("myapp://x"), scheme: nil, host: nil)))
        let open = memory.place(
            sh_scene_open_url(
                size: fullSize(sh_scene_open_url.self), version: SH_SCENE_OPEN_URL_VERSION,
                scene: UnsafePointer(scene(memory, id: 0, name: "main")), url: url))
        let event = sceneEvent(memory, SH_EVENT_SCENE_OPEN_URL_CONTEXTS, data: open)
        #expect(ServicePlugin.dispatch(event, to: service) == Int32(SH_OK))
        open.pointee.size = size(endingBefore: \sh_scene_open_url.url)
        #expect(ServicePlugin.dispatch(event, to: service) == Int32(SH_INVALID))
        #expect(service.calls == ["open myapp://x"])
    }

    @Test func sceneEvent_toAServiceThatIsNotASceneService_isUnsupported() {
        final class Plain: ApplicationService {}
        let memory = HostMemory()
        let event = sceneEvent(memory, SH_EVENT_SCENE_DID_BECOME_ACTIVE, data: scene(memory, id: 0))
        #expect(ServicePlugin.dispatch(event, to: Plain()) == Int32(SH_UNSUPPORTED))
        let service = RecordingService()
        #expect(ServicePlugin.dispatch(event, to: service) == Int32(SH_OK))
        #expect(service.calls == ["didBecomeActive car"])
    }

    private func sceneEvent<T>(_ memory: HostMemory, _ kind: sh_event_kind, data: UnsafeMutablePointer<T>)
        -> UnsafePointer<sh_event>
    {
        UnsafePointer(
            memory.place(
                sh_event(
                    size: fullSize(sh_event.self), version: SH_EVENT_VERSION, kind: kind.rawValue,
                    app_state: Int32(SH_APP_ACTIVE.rawValue), seq: 1, data: UnsafeRawPointer(data), completion: nil)))
    }
}
