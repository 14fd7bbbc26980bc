import ServiceABI

/// A user activity to continue, the data of `continueUserActivity(_:)` (as
/// NSUserActivity; a copy of `sh_user_activity`).
///
/// ```swift
/// func continueUserActivity(_ activity: UserActivity) -> Bool {
///     guard activity.type == "com.example.view-item",
///           let item = activity.userInfo?["item"]?.intValue else { return false }
///     host.log(.info, "show item \(item)")
///     return true
/// }
/// ```
///
/// ``userInfo`` is built from the tape the host parsed once, on first access. Keeping an
/// activity past its event is fine: the SDK copies what it still needs first.
public struct UserActivity: Sendable, Equatable {
    /// The activity type: "com.example.view-item".
    public var type: String
    /// The activity's web page URL, or `nil`.
    public var webpageURL: String?
    /// The activity launched the app (`SH_FROM_LAUNCH`): this is its one delivery after
    /// the app became active (it was also in the launch options).
    public var isFromLaunch: Bool
    /// The activity came with a scene's connection options (`SH_FROM_CONNECTION`): this is
    /// its one delivery after the scene became active.
    public var isFromConnection: Bool
    /// userInfo's storage, or nil when there is none; `var` so the SDK can tell whether
    /// the service kept a copy.
    var storage: EventJSON?

    /// The activity's userInfo (usually an object), or `nil` when it has none.
    public var userInfo: JSONValue? { storage?.value }

    /// userInfo as JSON text, exactly as the host received it, or `nil`.
    public var userInfoJSON: String? { storage?.text }

    /// Creates an activity; for tests and previews.
    public init(
        type: String, webpageURL: String? = nil, userInfo: JSONValue? = nil, isFromLaunch: Bool = false,
        isFromConnection: Bool = false
    ) {
        self.type = type
        self.webpageURL = webpageURL
        self.isFromLaunch = isFromLaunch
        self.isFromConnection = isFromConnection
        storage = userInfo.map { EventJSON(value: $0, text: $0.serialized) }
    }

    /// Points at the host's `sh_user_activity` (valid only during the event; see
    /// ``endEvent()``).
    init(_ raw: UnsafePointer<sh_user_activity>) {
        let activity = raw.copyWithinDeclaredSize()
        let size = Int(activity.size)
        func covers<T>(_ member: KeyPath<sh_user_activity, T>) -> Bool {
            size >= MemoryLayout<sh_user_activity>.offset(of: member)! + MemoryLayout<T>.size
        }
        type = covers(\.type) ? activity.type.map { String(cString: $0) } ?? "" : ""
        webpageURL = covers(\.webpage_url) ? activity.webpage_url.map { String(cString: $0) } : nil
        isFromLaunch = covers(\.flags) && activity.flags & UInt32(SH_FROM_LAUNCH) != 0
        isFromConnection = covers(\.flags) && activity.flags & UInt32(SH_FROM_CONNECTION) != 0
        let text =
            covers(\.user_info_len)
            ? activity.user_info_json.map { UnsafeRawBufferPointer(start: $0, count: activity.user_info_len) } : nil
        let tape = covers(\.user_info) ? activity.user_info : nil
        storage = text == nil && tape == nil ? nil : EventJSON(tape: tape, text: text)
    }

    /// Called when the event returns: if the service kept a copy, copy userInfo out of
    /// the host's memory now.
    mutating func endEvent() {
        if storage != nil, !isKnownUniquelyReferenced(&storage) { storage?.endEvent() }
    }

    /// Equal when type, web page URL, flags and userInfo are equal.
    public static func == (lhs: UserActivity, rhs: UserActivity) -> Bool {
        lhs.type == rhs.type && lhs.webpageURL == rhs.webpageURL && lhs.isFromLaunch == rhs.isFromLaunch
            && lhs.isFromConnection == rhs.isFromConnection && lhs.userInfo == rhs.userInfo
    }
}
