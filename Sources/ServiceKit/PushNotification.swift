import ServiceABI

/// A push notification: an APNs-shaped JSON payload (a copy of `sh_push`).
///
/// ```swift
/// func willPresent(_ notification: PushNotification, completion: PresentationCompletion) {
///     host.log(.info, "\(notification.aps.title ?? ""): \(notification.aps.body ?? "")")
///     let route = notification["route"]?.stringValue ?? "home"
///     completion([.banner, .sound])
/// }
/// ```
///
/// ``payload`` is built from the tape the host parsed once for every service, on first
/// access (never by parsing ``json`` again). Keeping a notification past its event (to
/// act on it later, or on another thread) is fine: the SDK copies what it still needs
/// before the host's memory goes away. Safe to use from any thread.
public struct PushNotification: Sendable, Equatable {
    /// The payload's storage; `var` so the SDK can tell whether the service kept a copy.
    var storage: EventJSON

    /// This delivery is the one that follows the launch options (`SH_FROM_LAUNCH`): the
    /// push that launched the app, delivered again once the app is active.
    public var isFromLaunch: Bool

    /// Creates a notification with `payload`; for tests and previews.
    public init(payload: JSONValue, isFromLaunch: Bool = false) {
        storage = EventJSON(value: payload, text: payload.serialized)
        self.isFromLaunch = isFromLaunch
    }

    /// Creates a notification from JSON text; for tests and previews.
    /// - Throws: ``JSONParseError`` when `json` is not valid JSON.
    public init(json: String, isFromLaunch: Bool = false) throws(JSONParseError) {
        storage = EventJSON(value: try JSONValue(parsing: json), text: json)
        self.isFromLaunch = isFromLaunch
    }

    /// Points at the host's `sh_push` (valid only during the event; see ``endEvent()``).
    init(_ raw: UnsafePointer<sh_push>) {
        let push = raw.copyWithinDeclaredSize()
        let size = Int(push.size)
        var text: UnsafeRawBufferPointer?
        if size >= MemoryLayout<sh_push>.offset(of: \.json_len)! + MemoryLayout<Int>.size, let json = push.json {
            text = UnsafeRawBufferPointer(start: json, count: push.json_len)
        }
        var tape: UnsafePointer<sh_json>?
        if size >= MemoryLayout<sh_push>.offset(of: \.parsed)! + MemoryLayout<Int>.size {
            tape = push.parsed
        }
        storage = EventJSON(tape: tape, text: text)
        isFromLaunch =
            size >= MemoryLayout<sh_push>.offset(of: \.flags)! + 4
            && push.flags & UInt32(SH_FROM_LAUNCH) != 0
    }

    /// Called when the event returns: if the service kept a copy, copy the payload out of
    /// the host's memory now.
    mutating func endEvent() {
        if !isKnownUniquelyReferenced(&storage) { storage.endEvent() }
    }

    /// The payload as JSON text, exactly as the host received it.
    public var json: String { storage.text ?? "" }

    /// The payload, usually an object with an `aps` member and custom keys.
    public var payload: JSONValue { storage.value ?? .null }

    /// The payload's member `key` (a custom key such as `"route"`, or `"aps"`), or `nil`.
    public subscript(key: String) -> JSONValue? { payload[key] }

    /// The `aps` dictionary's standard members.
    public var aps: APS { APS(payload["aps"]) }

    /// Equal when both payloads have the same text and the same launch flag.
    public static func == (lhs: PushNotification, rhs: PushNotification) -> Bool {
        lhs.isFromLaunch == rhs.isFromLaunch && (lhs.storage === rhs.storage || lhs.json == rhs.json)
    }

    /// The standard members of a payload's `aps` dictionary (Apple's "Generating a remote
    /// notification"); each is `nil` when absent or of another type.
    public struct APS: Sendable, Equatable {
        /// `aps.alert.title` (an alert given as a plain string has no title).
        public var title: String?
        /// `aps.alert.subtitle`.
        public var subtitle: String?
        /// `aps.alert.body`, or `aps.alert` itself when it is a string.
        public var body: String?
        /// `aps.badge`, an integer.
        public var badge: Int?
        /// `aps.sound`: the string, or the `name` of a critical-alert sound dictionary.
        public var sound: String?
        /// `aps.category`: the notification's category (its actions).
        public var category: String?
        /// `aps.thread-id`.
        public var threadID: String?
        /// `aps.content-available` is 1: a background fetch (didReceiveRemoteNotification).
        public var contentAvailable: Bool

        /// Reads an `aps` value (`nil` or not an object: every member absent).
        public init(_ aps: JSONValue?) {
            let alert = aps?["alert"]
            if let text = alert?.stringValue {
                body = text
            } else {
                title = alert?["title"]?.stringValue
                subtitle = alert?["subtitle"]?.stringValue
                body = alert?["body"]?.stringValue
            }
            badge = aps?["badge"]?.intValue
            sound = aps?["sound"]?.stringValue ?? aps?["sound"]?["name"]?.stringValue
            category = aps?["category"]?.stringValue
            threadID = aps?["thread-id"]?.stringValue
            contentAvailable = aps?["content-available"]?.intValue == 1
        }
    }
}

/// The user's answer to a notification: tapped it, dismissed it or chose an action
/// (as UNNotificationResponse), received by `ApplicationService.didReceive(_:completion:)`.
public struct NotificationResponse: Sendable, Equatable {
    /// The action id for tapping the notification itself (`SH_ACTION_DEFAULT`).
    public static let defaultActionIdentifier = SH_ACTION_DEFAULT
    /// The action id for dismissing it (`SH_ACTION_DISMISS`).
    public static let dismissActionIdentifier = SH_ACTION_DISMISS

    /// The action the user chose: ``defaultActionIdentifier``,
    /// ``dismissActionIdentifier`` or a custom id from the notification's category.
    public var actionIdentifier: String
    /// The notification the user acted on. Its ``PushNotification/isFromLaunch`` is true
    /// when it launched the app and this is its delivery after the app became active.
    public var notification: PushNotification

    /// The user tapped the notification.
    public var isDefaultAction: Bool { actionIdentifier == Self.defaultActionIdentifier }
    /// The user dismissed the notification.
    public var isDismissAction: Bool { actionIdentifier == Self.dismissActionIdentifier }

    /// Creates a response; for tests and previews.
    public init(
        actionIdentifier: String = NotificationResponse.defaultActionIdentifier,
        notification: PushNotification
    ) {
        self.actionIdentifier = actionIdentifier
        self.notification = notification
    }

    /// Points at the host's `sh_push` (valid only during the event).
    init(_ raw: UnsafePointer<sh_push>) {
        notification = PushNotification(raw)
        let size = Int(raw.pointee.size)
        if size >= MemoryLayout<sh_push>.offset(of: \.action_id)! + MemoryLayout<Int>.size,
            let action = raw.pointee.action_id
        {
            actionIdentifier = String(cString: action)
        } else {
            actionIdentifier = Self.defaultActionIdentifier
        }
    }
}
