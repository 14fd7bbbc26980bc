import ServiceABI
import ServiceJSON

/// The C structs of events that carry data, built in an arena that outlives their deliveries.
extension EventArena {
    func push(_ payload: PushPayload, action: String?, fromLaunch: Bool) -> UnsafePointer<sh_push> {
        let tape = payload.tape
        return box(
            sh_push(
                size: UInt32(MemoryLayout<sh_push>.size), version: SH_PUSH_VERSION,
                flags: fromLaunch ? UInt32(SH_FROM_LAUNCH) : 0, reserved: 0,
                json: UnsafePointer(tape.text.baseAddress), json_len: tape.textLength,
                parsed: keep(tape), action_id: action.map(string)))
    }

    func openURL(_ url: OpenURLInput, fromLaunch: Bool) -> UnsafePointer<sh_open_url> {
        openURL(url, flags: fromLaunch ? UInt32(SH_FROM_LAUNCH) : 0)
    }

    /// `flags`: SH_FROM_LAUNCH, SH_FROM_CONNECTION (a scene's connection options), or both.
    func openURL(_ url: OpenURLInput, flags: UInt32) -> UnsafePointer<sh_open_url> {
        box(
            sh_open_url(
                size: UInt32(MemoryLayout<sh_open_url>.size), version: SH_OPEN_URL_VERSION,
                flags: flags, reserved: 0,
                url: string(url.url), scheme: string(url.scheme), host: string(url.host)))
    }

    func activity(_ activity: UserActivityInput, fromLaunch: Bool) -> UnsafePointer<sh_user_activity> {
        self.activity(activity, flags: fromLaunch ? UInt32(SH_FROM_LAUNCH) : 0)
    }

    /// `flags` as in `openURL(_:flags:)`.
    func activity(_ activity: UserActivityInput, flags: UInt32) -> UnsafePointer<sh_user_activity> {
        var json: JSONTape?
        if let info = activity.userInfo { json = JSONTape(value: info, text: Array(info.serialized.utf8)) }
        return box(
            sh_user_activity(
                size: UInt32(MemoryLayout<sh_user_activity>.size), version: SH_USER_ACTIVITY_VERSION,
                flags: flags, reserved: 0,
                type: string(activity.type), webpage_url: activity.webpageURL.map { string($0.url) },
                user_info_json: json.map { UnsafePointer($0.text.baseAddress!) }, user_info_len: json?.textLength ?? 0,
                user_info: json.map(keep)))
    }

    func deviceToken(_ token: DeviceToken) -> UnsafePointer<sh_device_token> {
        box(
            sh_device_token(
                size: UInt32(MemoryLayout<sh_device_token>.size), version: SH_DEVICE_TOKEN_VERSION,
                bytes: bytes(token.bytes), length: token.bytes.count, hex: string(token.hex)))
    }

    func errorInfo(_ message: String) -> UnsafePointer<sh_error_info> {
        box(
            sh_error_info(
                size: UInt32(MemoryLayout<sh_error_info>.size), version: SH_ERROR_INFO_VERSION,
                message: string(message)))
    }

    /// `json`: the payload's text, and its tape when it is valid JSON.
    func notification(name: String, sender: String, json: [UInt8]?, tape: JSONTape?) -> UnsafePointer<sh_notification> {
        // The tape holds the text already (NUL-terminated): no second copy.
        let text = tape.map { UnsafePointer($0.text.baseAddress!) } ?? json.map { charPointer(bytes($0 + [0])) }
        return box(
            sh_notification(
                size: UInt32(MemoryLayout<sh_notification>.size), version: SH_NOTIFICATION_VERSION,
                name: string(name), sender: string(sender), json: text, json_len: json?.count ?? 0,
                parsed: tape.map(keep)))
    }

    private func charPointer(_ bytes: UnsafePointer<UInt8>) -> UnsafePointer<CChar> {
        UnsafeRawPointer(bytes).assumingMemoryBound(to: CChar.self)
    }

    func launchOptions(_ request: LaunchRequest, flags: UInt32, settings: [UInt8]?) -> UnsafePointer<sh_launch_options> {
        let json = settings.map { bytes($0 + [0]) }
        return box(
            sh_launch_options(
                size: UInt32(MemoryLayout<sh_launch_options>.size), version: SH_LAUNCH_OPTIONS_VERSION,
                flags: flags, reserved: 0,
                settings_json: json.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                settings_len: settings?.count ?? 0,
                notification: request.notification.map { push($0, action: nil, fromLaunch: true) },
                url: request.url.map { openURL($0, fromLaunch: true) },
                activity: request.activity.map { activity($0, fromLaunch: true) }))
    }

    func notificationSettings(_ settings: NotificationAuthorization.Settings) -> UnsafePointer<sh_notification_settings> {
        box(
            sh_notification_settings(
                size: UInt32(MemoryLayout<sh_notification_settings>.size), version: SH_NOTIFICATION_SETTINGS_VERSION,
                status: settings.status.rawValue, allowed: settings.allowed.rawValue))
    }

    /// The data of a `request` event; `tape` (the payload, parsed) is kept in the arena.
    func request(name: String, from: String, tape: JSONTape?) -> UnsafePointer<sh_request> {
        box(
            sh_request(
                size: UInt32(MemoryLayout<sh_request>.size), version: SH_REQUEST_VERSION,
                name: string(name), from: string(from),
                json: tape.map { UnsafePointer($0.text.baseAddress!) }, json_len: tape?.textLength ?? 0,
                parsed: tape.map(keep)))
    }
}
