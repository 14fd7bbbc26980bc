import ServiceABI

/// Whether the app may present notifications, as UNAuthorizationStatus
/// (`sh_authorization_status`).
public enum AuthorizationStatus: Int32, CaseIterable, NamedCase {
    /// Never asked: nothing is presented (`SH_AUTHORIZATION_NOT_DETERMINED`).
    case notDetermined = 0
    /// The user refused: no banner, sound or badge (`SH_AUTHORIZATION_DENIED`).
    case denied = 1
    /// The user allowed notifications (`SH_AUTHORIZATION_AUTHORIZED`).
    case authorized = 2
    /// Allowed quietly: the notification list only (`SH_AUTHORIZATION_PROVISIONAL`).
    case provisional = 3

    /// The status's name in `host ctl authorization`, replies and logs.
    public var name: String {
        switch self {
        case .notDetermined: "notDetermined"
        case .denied: "denied"
        case .authorized: "authorized"
        case .provisional: "provisional"
        }
    }

    /// The presentation options a push may be shown with under this status: everything
    /// when authorized, the list alone when provisional, nothing otherwise.
    public var allowedPresentation: PresentationOptions {
        switch self {
        case .authorized: .all
        case .provisional: .list
        case .notDetermined, .denied: []
        }
    }
}

/// What a service asks for in `requestAuthorization` (as UNAuthorizationOptions,
/// `SH_AUTHORIZE_*`).
public struct AuthorizationOptions: OptionSet, Sendable, Hashable {
    /// The `SH_AUTHORIZE_*` bits.
    public let rawValue: UInt32

    /// Creates options from `SH_AUTHORIZE_*` bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Update the app's badge (`SH_AUTHORIZE_BADGE`).
    public static let badge = AuthorizationOptions(rawValue: UInt32(SH_AUTHORIZE_BADGE))
    /// Play sounds (`SH_AUTHORIZE_SOUND`).
    public static let sound = AuthorizationOptions(rawValue: UInt32(SH_AUTHORIZE_SOUND))
    /// Show alerts (`SH_AUTHORIZE_ALERT`).
    public static let alert = AuthorizationOptions(rawValue: UInt32(SH_AUTHORIZE_ALERT))
    /// Provisional authorization: granted at once, quietly (`SH_AUTHORIZE_PROVISIONAL`).
    public static let provisional = AuthorizationOptions(rawValue: UInt32(SH_AUTHORIZE_PROVISIONAL))

    /// Every option and its name, in bit order.
    public static let named: [(option: AuthorizationOptions, name: String)] = [
        (.badge, "badge"), (.sound, "sound"), (.alert, "alert"), (.provisional, "provisional"),
    ]

    /// The presentation options a grant of these allows: alerts are banners and the list.
    public var presentation: PresentationOptions {
        var options: PresentationOptions = []
        if contains(.alert) { options.formUnion([.banner, .list]) }
        if contains(.sound) { options.insert(.sound) }
        if contains(.badge) { options.insert(.badge) }
        if contains(.provisional) { options.insert(.list) }
        return options
    }
}
