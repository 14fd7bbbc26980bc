/// A scene to connect (`host ctl scene connect`, `host --launch-scene`): its name, the role
/// it asks for and its connection options, validated.
public struct SceneRequest: Sendable {
    /// The roles this host knows (`SH_SCENE_ROLE_*`): a phone window, a CarPlay screen,
    /// an external display.
    public static let roles = ["main", "car", "external"]

    /// The scene's name, unique among connected scenes.
    public let name: String
    /// The role asked for, or nil to leave it to the configuration (then `main`).
    public let role: String?
    /// The connection options' URL contexts, in order.
    public var urls: [OpenURLInput]
    /// The connection options' user activities, in order.
    public var activities: [UserActivityInput]
    /// The scene connects at launch with the launch URL and activity (`SH_FROM_LAUNCH`).
    var isFromLaunch = false

    /// Validates a request: the name and the role (one of ``roles``).
    public init(
        name: String, role: String? = nil, urls: [OpenURLInput] = [],
        activities: [UserActivityInput] = []
    ) throws(InputError) {
        try Self.check(name: name)
        if let role { try Self.check(role: role) }
        self.name = name
        self.role = role
        self.urls = urls
        self.activities = activities
    }

    /// A scene name: 1 to 63 bytes of ASCII letters, digits, `-`, `_` and `.`.
    public static func check(name: String) throws(InputError) {
        let valid =
            (1...63).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            }
        if !valid {
            throw InputError("invalid scene name \"\(name)\": use 1 to 63 letters, digits, '-', '_' or '.'")
        }
    }

    /// A role this host knows.
    public static func check(role: String) throws(InputError) {
        if !roles.contains(role) {
            throw InputError("unknown scene role \"\(role)\" (one of \(roles.joined(separator: ", ")))")
        }
    }
}

/// A move of one scene (`host ctl scene activate|resign|background|foreground|disconnect NAME`).
public enum SceneMove: String, Sendable, CaseIterable {
    /// To foregroundActive, through the states between.
    case activate
    /// foregroundActive → foregroundInactive; only a foregroundActive scene resigns.
    case resign
    /// To the background, through the states between.
    case background
    /// background → foregroundInactive; only a scene in the background comes forward.
    case foreground
    /// To unattached: the scene goes to the background if it is not, then disconnects.
    case disconnect

    /// The state the move ends in.
    var target: SceneState {
        switch self {
        case .activate: .foregroundActive
        case .resign, .foreground: .foregroundInactive
        case .background: .background
        case .disconnect: .unattached
        }
    }

    /// The states the move may start from (any other is an illegal transition).
    var sources: [SceneState] {
        switch self {
        case .resign: [.foregroundActive, .foregroundInactive]
        case .foreground: [.background, .foregroundInactive]
        case .activate, .background, .disconnect: [.foregroundInactive, .foregroundActive, .background]
        }
    }
}
