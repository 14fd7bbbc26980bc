import ServiceABI
import Testing

@testable import ServiceKit

/// Every struct the host hands a plugin starts with its `size`: an older host sends a shorter
/// struct, and the SDK must read only the members that size covers (and use their documented
/// defaults for the rest). Each test fills every member, then shortens `size` to end just
/// before a member and checks the SDK ignored it; the full size shows the member is read.
@Suite struct OlderStructTests {
    // MARK: - sh_launch_options

    private func launchOptions(_ memory: HostMemory, size: UInt32) -> UnsafePointer<sh_launch_options> {
        let settings = #"{"verbose":true}"#
        let state: [UInt8] = [0, 1, 2, 255]
        var push = sh_push()
        push.size = fullSize(sh_push.self)
        push.json = memory.string(#"{"aps":{}}"#)
        push.json_len = 10
        var url = sh_open_url()
        url.size = fullSize(sh_open_url.self)
        url.url = memory.string("myapp://launch")
        var activity = sh_user_activity()
        activity.size = fullSize(sh_user_activity.self)
        activity.type = memory.string("com.example.launch")
        let flags =
            UInt32(SH_LAUNCH_FIRST_HOST_LAUNCH) | UInt32(SH_LAUNCH_FIRST_SERVICE_LAUNCH) | UInt32(SH_LAUNCH_RESTART)
        return UnsafePointer(
            memory.place(
                sh_launch_options(
                    size: size, version: SH_LAUNCH_OPTIONS_VERSION, flags: flags, reserved: 0,
                    settings_json: memory.string(settings), settings_len: settings.utf8.count,
                    notification: UnsafePointer(memory.place(push)), url: UnsafePointer(memory.place(url)),
                    activity: UnsafePointer(memory.place(activity)), restored_state: memory.bytes(state),
                    restored_state_len: state.count, restored_from_id: memory.string("test.old"),
                    restored_from_version: memory.string("0.9.0"))))
    }

    @Test func launchOptions_ofTheCurrentSize_readEveryMember() {
        let memory = HostMemory()
        let options = LaunchOptions(launchOptions(memory, size: fullSize(sh_launch_options.self)))
        #expect(options.isFirstHostLaunch && options.isFirstServiceLaunch && options.isRestart)
        #expect(options.settings == ["verbose": true])
        #expect(options.notification?.json == #"{"aps":{}}"#)
        #expect(options.url?.string == "myapp://launch")
        #expect(options.userActivity?.type == "com.example.launch")
        #expect(options.restoredState == RestoredState(bytes: [0, 1, 2, 255], serviceID: "test.old", version: "0.9.0"))
    }

    @Test func launchOptions_ofVersion1_haveNoRestoredState() {
        let memory = HostMemory()
        let options = LaunchOptions(launchOptions(memory, size: SH_LAUNCH_OPTIONS_SIZE_V1))
        #expect(options.userActivity?.type == "com.example.launch")
        #expect(options.restoredState == nil)
    }

    @Test func launchOptions_fromAHostBeforeIssue3_haveNoLaunchPushURLOrActivity() {
        let memory = HostMemory()
        let options = LaunchOptions(launchOptions(memory, size: size(endingBefore: \sh_launch_options.notification)))
        #expect(options.isRestart)
        #expect(options.settings == ["verbose": true])
        #expect(options.notification == nil)
        #expect(options.url == nil)
        #expect(options.userActivity == nil)
    }

    @Test func launchOptions_endingBeforeTheActivity_readThePushAndURLOnly() {
        let memory = HostMemory()
        let options = LaunchOptions(launchOptions(memory, size: size(endingBefore: \sh_launch_options.activity)))
        #expect(options.notification != nil)
        #expect(options.url != nil)
        #expect(options.userActivity == nil)
    }

    @Test func launchOptions_endingBeforeTheSettings_keepTheFlagsOnly() {
        let memory = HostMemory()
        let options = LaunchOptions(launchOptions(memory, size: size(endingBefore: \sh_launch_options.settings_json)))
        #expect(options.isFirstHostLaunch && options.isFirstServiceLaunch && options.isRestart)
        #expect(options.settings == nil)
        #expect(options.settingsError == nil)
    }

    @Test func launchOptions_ofOnlyASizeAndVersion_areAllDefaults() {
        let memory = HostMemory()
        let options = LaunchOptions(launchOptions(memory, size: size(endingBefore: \sh_launch_options.flags)))
        #expect(options == LaunchOptions())
    }

    @Test func launchOptions_withSettingsThatAreNotJSON_sayWhy() {
        let memory = HostMemory()
        let text = "{oops"
        let raw = memory.place(sh_launch_options())
        raw.pointee.size = fullSize(sh_launch_options.self)
        raw.pointee.settings_json = memory.string(text)
        raw.pointee.settings_len = text.utf8.count
        let options = LaunchOptions(UnsafePointer(raw))
        #expect(options.settings == nil)
        #expect(options.settingsError?.offset == 1)
    }

    @Test func launchOptions_withoutAStruct_areAllDefaults() {
        #expect(LaunchOptions(nil) == LaunchOptions())
    }

    // MARK: - sh_notification

    private func notification(_ memory: HostMemory, size: UInt32) -> UnsafePointer<sh_notification> {
        let json = #"{"n":1}"#
        return UnsafePointer(
            memory.place(
                sh_notification(
                    size: size, version: SH_NOTIFICATION_VERSION, name: memory.string("queue.enqueue"),
                    sender: memory.string("dev.example.sender"), json: memory.string(json), json_len: json.utf8.count,
                    parsed: memory.tape(object: [("n", 2)]))))
    }

    /// Version 2: the text says 1 and the tape says 2, so the test sees which one was read.
    @Test func notification_ofTheCurrentSize_readsTheHostsTapeNotTheText() {
        let memory = HostMemory()
        let notification = ServiceNotification(notification(memory, size: fullSize(sh_notification.self)))
        #expect(notification.name == "queue.enqueue")
        #expect(notification.sender == "dev.example.sender")
        #expect(notification.json == #"{"n":1}"#)
        #expect(notification.payload == ["n": 2])
    }

    @Test func notification_ofVersion1_parsesTheText() {
        let memory = HostMemory()
        #expect(SH_NOTIFICATION_SIZE_V1 == size(endingBefore: \sh_notification.parsed))
        let notification = ServiceNotification(notification(memory, size: SH_NOTIFICATION_SIZE_V1))
        #expect(notification.json == #"{"n":1}"#)
        #expect(notification.payload == ["n": 1])
    }

    @Test func notification_endingBeforeItsPayload_hasNone() {
        let memory = HostMemory()
        let notification = ServiceNotification(notification(memory, size: size(endingBefore: \sh_notification.json)))
        #expect(notification.name == "queue.enqueue")
        #expect(notification.json == nil)
        #expect(notification.payload == nil)
    }

    @Test func notification_endingBeforeItsSender_readsTheNameOnly() {
        let memory = HostMemory()
        let notification = ServiceNotification(notification(memory, size: size(endingBefore: \sh_notification.sender)))
        #expect(notification.name == "queue.enqueue")
        #expect(notification.sender == "")
        #expect(notification.json == nil)
    }

    @Test func notification_endingBeforeItsName_readsNothing() {
        let memory = HostMemory()
        let notification = ServiceNotification(notification(memory, size: size(endingBefore: \sh_notification.name)))
        #expect(notification.name == "")
        #expect(notification.sender == "")
    }

    // MARK: - sh_push

    /// A push whose text says 1 and whose tape says 2, so a test sees which one was read.
    private func push(_ memory: HostMemory, size: UInt32) -> UnsafePointer<sh_push> {
        let json = #"{"n":1}"#
        return UnsafePointer(
            memory.place(
                sh_push(
                    size: size, version: SH_PUSH_VERSION, flags: UInt32(SH_FROM_LAUNCH), reserved: 0,
                    json: memory.string(json), json_len: json.utf8.count, parsed: memory.tape(object: [("n", 2)]),
                    action_id: memory.string("reply"))))
    }

    @Test func push_ofTheCurrentSize_readsTheHostsTapeNotTheText() {
        let memory = HostMemory()
        let notification = PushNotification(push(memory, size: fullSize(sh_push.self)))
        #expect(notification.json == #"{"n":1}"#)
        #expect(notification.payload == ["n": 2])
        #expect(notification.isFromLaunch)
    }

    @Test func push_endingBeforeItsTape_parsesTheText() {
        let memory = HostMemory()
        let notification = PushNotification(push(memory, size: size(endingBefore: \sh_push.parsed)))
        #expect(notification.payload == ["n": 1])
        #expect(notification.isFromLaunch)
    }

    @Test func push_endingBeforeItsText_isEmpty() {
        let memory = HostMemory()
        let notification = PushNotification(push(memory, size: size(endingBefore: \sh_push.json)))
        #expect(notification.json == "")
        #expect(notification.payload == .null)
        #expect(notification.isFromLaunch)
    }

    @Test func push_endingBeforeItsFlags_isNotFromLaunch() {
        let memory = HostMemory()
        #expect(!PushNotification(push(memory, size: size(endingBefore: \sh_push.flags))).isFromLaunch)
    }

    @Test func response_endingBeforeItsActionID_isTheDefaultAction() {
        let memory = HostMemory()
        #expect(NotificationResponse(push(memory, size: fullSize(sh_push.self))).actionIdentifier == "reply")
        let older = NotificationResponse(push(memory, size: size(endingBefore: \sh_push.action_id)))
        #expect(older.actionIdentifier == NotificationResponse.defaultActionIdentifier)
        #expect(older.isDefaultAction)
        #expect(older.notification.payload == ["n": 2])
    }

    @Test func pushKeptPastItsEvent_isCopiedOutOfHostMemory() {
        var kept: PushNotification?
        do {
            let memory = HostMemory()
            var notification = PushNotification(push(memory, size: fullSize(sh_push.self)))
            kept = notification
            notification.endEvent()
        }
        // The host memory is freed: what the service kept must be its own copy.
        #expect(kept?.json == #"{"n":1}"#)
        #expect(kept?.payload == ["n": 2])
    }

    // MARK: - sh_device_token

    @Test func deviceToken_endingBeforeItsLength_hasNoBytes() {
        let memory = HostMemory()
        let raw = memory.place(
            sh_device_token(
                size: fullSize(sh_device_token.self), version: SH_DEVICE_TOKEN_VERSION,
                bytes: memory.bytes([0xAB, 0x01]), length: 2, hex: memory.string("ab01")))
        #expect(DeviceToken(UnsafePointer(raw)).bytes == [0xAB, 0x01])
        #expect(DeviceToken(UnsafePointer(raw)).hex == "ab01")
        raw.pointee.size = size(endingBefore: \sh_device_token.length)
        #expect(DeviceToken(UnsafePointer(raw)).bytes == [])
        #expect(DeviceToken(UnsafePointer(raw)).hex == "")
    }

    // MARK: - sh_open_url

    /// A URL whose host-given scheme and host differ from its text, so a test sees which was read.
    private func openURL(_ memory: HostMemory, size: UInt32) -> UnsafePointer<sh_open_url> {
        UnsafePointer(
            memory.place(
                sh_open_url(
                    size: size, version: SH_OPEN_URL_VERSION,
                    flags: UInt32(SH_FROM_LAUNCH) | UInt32(SH_FROM_CONNECTION),
                    reserved: 0, url: memory.string("MyApp://Item/42?ref=push"), scheme: memory.string("host-scheme"),
                    host: memory.string("host-host"))))
    }

    @Test func openURL_ofTheCurrentSize_takesTheHostsSchemeAndHost() {
        let memory = HostMemory()
        let url = OpenURL(openURL(memory, size: fullSize(sh_open_url.self)))
        #expect(url.scheme == "host-scheme")
        #expect(url.host == "host-host")
        #expect(url.isFromLaunch && url.isFromConnection)
        #expect(url.pathComponents == ["42"])
    }

    @Test func openURL_endingBeforeItsHost_splitsTheTextItself() {
        let memory = HostMemory()
        let url = OpenURL(openURL(memory, size: size(endingBefore: \sh_open_url.host)))
        #expect(url.scheme == "myapp")
        #expect(url.host == "item")
        #expect(url.isFromLaunch)
        #expect(url.queryValue("ref") == "push")
    }

    @Test func openURL_endingBeforeItsFlags_isNeitherFromLaunchNorFromConnection() {
        let memory = HostMemory()
        let url = OpenURL(openURL(memory, size: size(endingBefore: \sh_open_url.flags)))
        #expect(!url.isFromLaunch)
        #expect(!url.isFromConnection)
    }

    // MARK: - sh_user_activity

    /// An activity whose userInfo text says 1 and whose tape says 2.
    private func activity(_ memory: HostMemory, size: UInt32) -> UnsafePointer<sh_user_activity> {
        let info = #"{"n":1}"#
        return UnsafePointer(
            memory.place(
                sh_user_activity(
                    size: size, version: SH_USER_ACTIVITY_VERSION, flags: UInt32(SH_FROM_LAUNCH), reserved: 0,
                    type: memory.string("com.example.view"), webpage_url: memory.string("https://example.com/x"),
                    user_info_json: memory.string(info), user_info_len: info.utf8.count,
                    user_info: memory.tape(object: [("n", 2)]))))
    }

    @Test func activity_ofTheCurrentSize_readsEveryMemberAndTheTape() {
        let memory = HostMemory()
        let activity = UserActivity(activity(memory, size: fullSize(sh_user_activity.self)))
        #expect(activity.type == "com.example.view")
        #expect(activity.webpageURL == "https://example.com/x")
        #expect(activity.isFromLaunch && !activity.isFromConnection)
        #expect(activity.userInfoJSON == #"{"n":1}"#)
        #expect(activity.userInfo == ["n": 2])
    }

    @Test func activity_endingBeforeItsTape_parsesTheText() {
        let memory = HostMemory()
        #expect(
            UserActivity(activity(memory, size: size(endingBefore: \sh_user_activity.user_info))).userInfo == ["n": 1])
    }

    @Test func activity_endingBeforeItsUserInfo_hasNone() {
        let memory = HostMemory()
        let activity = UserActivity(activity(memory, size: size(endingBefore: \sh_user_activity.user_info_json)))
        #expect(activity.webpageURL == "https://example.com/x")
        #expect(activity.userInfo == nil)
        #expect(activity.userInfoJSON == nil)
    }

    @Test func activity_endingBeforeItsType_hasOnlyItsFlags() {
        let memory = HostMemory()
        let activity = UserActivity(activity(memory, size: size(endingBefore: \sh_user_activity.type)))
        #expect(activity.type == "")
        #expect(activity.webpageURL == nil)
        #expect(activity.isFromLaunch)
        #expect(
            UserActivity(self.activity(memory, size: size(endingBefore: \sh_user_activity.flags))).isFromLaunch == false
        )
    }

    // MARK: - sh_json

    @Test func tape_endingBeforeItsCount_readsAsNull() {
        let memory = HostMemory()
        let node = sh_json_node(
            type: SH_JSON_TRUE.rawValue, count: 0, next: 1, reserved: 0, string: nil, length: 0, number: 0)
        #expect(JSONValue(tape: memory.tape([node])) == true)
        #expect(JSONValue(tape: memory.tape([node], size: size(endingBefore: \sh_json.count))) == .null)
    }

    @Test func tape_whoseContainersClaimMoreNodesThanItHas_readsWhatIsThere() {
        let memory = HostMemory()
        // An array of 5 elements with only one node after it: a host bug must not crash the service.
        let nodes = [
            sh_json_node(
                type: SH_JSON_ARRAY.rawValue, count: 5, next: 2, reserved: 0, string: nil, length: 0, number: 0),
            sh_json_node(
                type: SH_JSON_NUMBER.rawValue, count: 0, next: 2, reserved: 0, string: nil, length: 0, number: 7),
        ]
        #expect(JSONValue(tape: memory.tape(nodes)) == [7])
    }

    @Test func tape_withANodeTypeThisSDKDoesNotKnow_readsItAsNullAndSkipsItsChildren() {
        let memory = HostMemory()
        let nodes = [
            sh_json_node(
                type: SH_JSON_ARRAY.rawValue, count: 2, next: 4, reserved: 0, string: nil, length: 0, number: 0),
            sh_json_node(type: 99, count: 1, next: 3, reserved: 0, string: nil, length: 0, number: 0),
            sh_json_node(
                type: SH_JSON_TRUE.rawValue, count: 0, next: 3, reserved: 0, string: nil, length: 0, number: 0),
            sh_json_node(
                type: SH_JSON_FALSE.rawValue, count: 0, next: 4, reserved: 0, string: nil, length: 0, number: 0),
        ]
        #expect(JSONValue(tape: memory.tape(nodes)) == [.null, false])
    }

    @Test func tape_withANonFiniteNumber_readsItAsNull() {
        let memory = HostMemory()
        let node = sh_json_node(
            type: SH_JSON_NUMBER.rawValue, count: 0, next: 1, reserved: 0, string: nil, length: 0,
            number: .infinity)
        #expect(JSONValue(tape: memory.tape([node])) == .null)
    }

    // MARK: - sh_error_info, sh_completion, sh_event

    @Test func completion_endingBeforeItsFunction_isNeverCalled() {
        let box = CompletionBox()
        let memory = HostMemory()
        let raw = memory.place(box.completion(size: fullSize(sh_completion.self)))
        CompletionHandle(raw: UnsafePointer(raw)).complete(7)
        #expect(box.results == [7])
        raw.pointee.size = size(endingBefore: \sh_completion.complete)
        CompletionHandle(raw: UnsafePointer(raw)).complete(8)
        #expect(box.results == [7])
    }

    @Test func event_endingBeforeItsData_isRefusedWhereDataIsRequired() {
        let memory = HostMemory()
        let service = RecordingService()
        var push = sh_push()
        push.size = fullSize(sh_push.self)
        let box = CompletionBox()
        let completion = UnsafePointer(memory.place(box.completion(size: fullSize(sh_completion.self))))
        let event = memory.place(
            sh_event(
                size: fullSize(sh_event.self), version: SH_EVENT_VERSION,
                kind: SH_EVENT_WILL_PRESENT_NOTIFICATION.rawValue,
                app_state: Int32(SH_APP_ACTIVE.rawValue), seq: 1, data: UnsafeRawPointer(memory.place(push)),
                completion: completion))
        #expect(ServicePlugin.dispatch(UnsafePointer(event), to: service) == Int32(SH_OK))
        #expect(service.calls == ["willPresent"])
        #expect(box.results == [0])  // the default answer: present nothing

        event.pointee.size = size(endingBefore: \sh_event.data)
        #expect(ServicePlugin.dispatch(UnsafePointer(event), to: service) == Int32(SH_INVALID))
        #expect(service.calls == ["willPresent"])
    }

    @Test func event_endingBeforeItsCompletion_isHandledWithoutOne() {
        let memory = HostMemory()
        let service = RecordingService()
        var push = sh_push()
        push.size = fullSize(sh_push.self)
        let box = CompletionBox()
        let event = memory.place(
            sh_event(
                size: size(endingBefore: \sh_event.completion), version: SH_EVENT_VERSION,
                kind: SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION.rawValue, app_state: Int32(SH_APP_ACTIVE.rawValue),
                seq: 1,
                data: UnsafeRawPointer(memory.place(push)),
                completion: UnsafePointer(memory.place(box.completion(size: fullSize(sh_completion.self))))))
        #expect(ServicePlugin.dispatch(UnsafePointer(event), to: service) == Int32(SH_OK))
        #expect(service.calls == ["didReceiveRemoteNotification"])
        #expect(box.results == [])
    }

    @Test func launchEvent_endingBeforeItsData_getsDefaultOptions() {
        let memory = HostMemory()
        let service = RecordingService()
        let options = launchOptions(memory, size: fullSize(sh_launch_options.self))
        let event = memory.place(
            sh_event(
                size: fullSize(sh_event.self), version: SH_EVENT_VERSION, kind: SH_EVENT_WILL_FINISH_LAUNCHING.rawValue,
                app_state: Int32(SH_APP_INACTIVE.rawValue), seq: 1, data: UnsafeRawPointer(options), completion: nil))
        #expect(ServicePlugin.dispatch(UnsafePointer(event), to: service) == Int32(SH_OK))
        #expect(service.launchOptions.last?.isRestart == true)
        event.pointee.size = size(endingBefore: \sh_event.data)
        #expect(ServicePlugin.dispatch(UnsafePointer(event), to: service) == Int32(SH_OK))
        #expect(service.launchOptions.last == LaunchOptions())
    }

    @Test func registrationError_endingBeforeItsMessage_isEmpty() {
        let memory = HostMemory()
        let service = RecordingService()
        let info = memory.place(
            sh_error_info(
                size: fullSize(sh_error_info.self), version: SH_ERROR_INFO_VERSION, message: memory.string("no network")
            ))
        let event = memory.place(
            sh_event(
                size: fullSize(sh_event.self), version: SH_EVENT_VERSION,
                kind: SH_EVENT_DID_FAIL_TO_REGISTER_FOR_REMOTE_NOTIFICATIONS.rawValue,
                app_state: Int32(SH_APP_ACTIVE.rawValue), seq: 1, data: UnsafeRawPointer(info), completion: nil))
        _ = ServicePlugin.dispatch(UnsafePointer(event), to: service)
        info.pointee.size = size(endingBefore: \sh_error_info.message)
        _ = ServicePlugin.dispatch(UnsafePointer(event), to: service)
        #expect(service.registrationErrors == ["no network", ""])
    }

    @Test func eventOfAKindThisSDKDoesNotKnow_isUnsupported() {
        let memory = HostMemory()
        let event = memory.place(
            sh_event(
                size: fullSize(sh_event.self), version: SH_EVENT_VERSION, kind: 120,
                app_state: Int32(SH_APP_ACTIVE.rawValue), seq: 1, data: UnsafeRawPointer(memory.place(0)),
                completion: nil))
        #expect(ServicePlugin.dispatch(UnsafePointer(event), to: RecordingService()) == Int32(SH_UNSUPPORTED))
    }
}
