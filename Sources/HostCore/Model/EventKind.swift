import ServiceABI

/// An event the host delivers to services, with the name used in traces, logs and docs.
///
/// The raw values are the ABI's `sh_event_kind` numbers.
public enum EventKind: UInt32, CaseIterable, Sendable {
    case willFinishLaunching = 1
    case didFinishLaunching = 2
    case didBecomeActive = 3
    case willResignActive = 4
    case didEnterBackground = 5
    case willEnterForeground = 6
    case willTerminate = 7
    case notification = 8
    case didReceiveMemoryWarning = 9
    case willPresentNotification = 10
    case didReceiveNotificationResponse = 11
    case didReceiveRemoteNotification = 12
    case didRegisterForRemoteNotifications = 13
    case didFailToRegisterForRemoteNotifications = 14
    case openURL = 15
    case continueUserActivity = 16
    // Scenes (scenes.h).
    case configurationForConnecting = 17
    case sceneWillConnect = 18
    case sceneWillEnterForeground = 19
    case sceneDidBecomeActive = 20
    case sceneWillResignActive = 21
    case sceneDidEnterBackground = 22
    case sceneDidDisconnect = 23
    case sceneOpenURLContexts = 24
    case sceneContinueUserActivity = 25

    /// The event's name everywhere ServiceHost shows it: `didBecomeActive`.
    public var name: String {
        switch self {
        case .willFinishLaunching: "willFinishLaunching"
        case .didFinishLaunching: "didFinishLaunching"
        case .didBecomeActive: "didBecomeActive"
        case .willResignActive: "willResignActive"
        case .didEnterBackground: "didEnterBackground"
        case .willEnterForeground: "willEnterForeground"
        case .willTerminate: "willTerminate"
        case .notification: "notification"
        case .didReceiveMemoryWarning: "didReceiveMemoryWarning"
        case .willPresentNotification: "willPresentNotification"
        case .didReceiveNotificationResponse: "didReceiveNotificationResponse"
        case .didReceiveRemoteNotification: "didReceiveRemoteNotification"
        case .didRegisterForRemoteNotifications: "didRegisterForRemoteNotifications"
        case .didFailToRegisterForRemoteNotifications: "didFailToRegisterForRemoteNotifications"
        case .openURL: "openURL"
        case .continueUserActivity: "continueUserActivity"
        case .configurationForConnecting: "configurationForConnecting"
        case .sceneWillConnect: "sceneWillConnect"
        case .sceneWillEnterForeground: "sceneWillEnterForeground"
        case .sceneDidBecomeActive: "sceneDidBecomeActive"
        case .sceneWillResignActive: "sceneWillResignActive"
        case .sceneDidEnterBackground: "sceneDidEnterBackground"
        case .sceneDidDisconnect: "sceneDidDisconnect"
        case .sceneOpenURLContexts: "sceneOpenURLContexts"
        case .sceneContinueUserActivity: "sceneContinueUserActivity"
        }
    }

    /// Whether the event is one of a scene's (17–25).
    public var isSceneEvent: Bool { rawValue >= Self.configurationForConnecting.rawValue && rawValue <= Self.sceneContinueUserActivity.rawValue }

    /// Whether the event carries an `sh_completion` the service must call exactly once.
    public var needsCompletion: Bool {
        switch self {
        case .willPresentNotification, .didReceiveNotificationResponse, .didReceiveRemoteNotification: true
        default: false
        }
    }

    /// The app state an event leaves the app in, for lifecycle events.
    public var stateAfter: AppState? {
        switch self {
        case .willFinishLaunching, .didFinishLaunching, .willResignActive, .willEnterForeground: .inactive
        case .didBecomeActive: .active
        case .didEnterBackground: .background
        case .willTerminate: .notRunning
        default: nil
        }
    }

    /// Whether the app (or for scene events, the scene) is already in the event's new state
    /// while services handle it, as `UIApplication.applicationState` reads: did-events and
    /// launch events see the new state (didBecomeActive: active), will-events the old one
    /// (willResignActive: active).
    public var isDeliveredInNewState: Bool {
        switch self {
        case .willFinishLaunching, .didFinishLaunching, .didBecomeActive, .didEnterBackground: true
        case .sceneDidBecomeActive, .sceneDidEnterBackground, .sceneDidDisconnect: true
        default: false
        }
    }

    /// Whether the event takes the app down a step; those run in reverse service order,
    /// as a graceful shutdown stops services in the reverse of their start order.
    public var isTearDown: Bool {
        switch self {
        case .willResignActive, .didEnterBackground, .willTerminate: true
        case .sceneWillResignActive, .sceneDidEnterBackground, .sceneDidDisconnect: true
        default: false
        }
    }
}

/// The set of event kinds a service handles: the ABI's two-word mask.
public struct EventMask: Equatable, Sendable {
    /// The mask words as in `sh_meta_service.events`.
    public var words: (UInt64, UInt64)

    /// A mask from the metadata's two words.
    public init(_ word0: UInt64, _ word1: UInt64) { words = (word0, word1) }

    /// Whether the mask holds a kind number (known to this host or not).
    public func contains(rawKind: UInt32) -> Bool {
        guard rawKind < SH_EVENT_KIND_LIMIT else { return false }
        let word = rawKind < 64 ? words.0 : words.1
        return word & (1 << UInt64(rawKind % 64)) != 0
    }

    /// Whether the mask holds `kind`.
    public func contains(_ kind: EventKind) -> Bool { contains(rawKind: kind.rawValue) }

    /// The kinds this host knows, in kind order.
    public var knownKinds: [EventKind] { EventKind.allCases.filter(contains) }

    /// Kind numbers set in the mask that this host does not know (from a newer SDK).
    public var unknownRawKinds: [UInt32] {
        (0..<SH_EVENT_KIND_LIMIT).filter { contains(rawKind: $0) && EventKind(rawValue: $0) == nil }
    }

    public static func == (a: EventMask, b: EventMask) -> Bool { a.words == b.words }
}
