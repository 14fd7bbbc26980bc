/// An event the host delivers to services: the ABI's `sh_event_kind` (servicehost/events.h),
/// with the name, group and data that go with each kind.
///
/// This is the one table of events. The host (HostCore), the SDK (ServiceKit) and the
/// manifest checker (servicehost-metagen) all read it; `VocabularyTests` checks every row
/// against events.h. The raw values are the ABI's numbers: never reuse or renumber one.
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
    case didChangeNotificationAuthorization = 26
    case request = 27
    case didChangeSettings = 40
    case performActionForShortcutItem = 44
    case healthCheck = 45
    case dependencyWillStop = 46
    case dependencyDidStart = 47
    case willReload = 48
    case protectedDataWillBecomeUnavailable = 49
    case protectedDataDidBecomeAvailable = 50
    case significantTimeChange = 51

    /// One row of the table: what ServiceHost knows about a kind besides its number.
    public struct Entry: Sendable {
        /// The name in traces, logs, manifests and docs (the one quoted in events.h).
        public let name: String
        /// The manifest group that includes the event, or nil when only its name does.
        public let group: EventGroup?
        /// What `sh_event.data` points at.
        public let data: EventData
        /// Whether `sh_event.completion` is set: the service answers later, exactly once.
        public let needsCompletion: Bool
        /// The ServiceKit protocol a Swift service adopts to handle the event (`URLHandling`),
        /// or nil for a lifecycle event, whose method has a no-op default.
        public let capability: String?

        init(
            _ name: String, _ group: EventGroup?, _ data: EventData, completion: Bool = false,
            capability: String? = nil
        ) {
            self.name = name
            self.group = group
            self.data = data
            self.needsCompletion = completion
            self.capability = capability
        }
    }

    /// The kind's row. A new kind adds its case above and its row here; the compiler then
    /// points at every exhaustive switch (the host's, ServiceKit's dispatch) that must learn it.
    public var entry: Entry {
        switch self {
        case .willFinishLaunching: Entry("willFinishLaunching", .lifecycle, .launchOptions)
        case .didFinishLaunching: Entry("didFinishLaunching", .lifecycle, .launchOptions)
        case .didBecomeActive: Entry("didBecomeActive", .lifecycle, .none)
        case .willResignActive: Entry("willResignActive", .lifecycle, .none)
        case .didEnterBackground: Entry("didEnterBackground", .lifecycle, .none)
        case .willEnterForeground: Entry("willEnterForeground", .lifecycle, .none)
        case .willTerminate: Entry("willTerminate", .lifecycle, .none)
        case .notification: Entry("notification", nil, .notification, capability: "NotificationReceiving")
        case .didReceiveMemoryWarning: Entry("didReceiveMemoryWarning", nil, .none, capability: "MemoryWarningHandling")
        case .willPresentNotification:
            Entry("willPresentNotification", .push, .push, completion: true, capability: "PushPresenting")
        case .didReceiveNotificationResponse:
            Entry(
                "didReceiveNotificationResponse", .push, .push, completion: true,
                capability: "NotificationResponseHandling")
        case .didReceiveRemoteNotification:
            Entry("didReceiveRemoteNotification", .push, .push, completion: true, capability: "BackgroundFetching")
        case .didRegisterForRemoteNotifications:
            Entry("didRegisterForRemoteNotifications", .push, .deviceToken, capability: "DeviceTokenReceiving")
        case .didFailToRegisterForRemoteNotifications:
            Entry("didFailToRegisterForRemoteNotifications", .push, .errorInfo, capability: "DeviceTokenErrorHandling")
        case .openURL: Entry("openURL", nil, .openURL, capability: "URLHandling")
        case .continueUserActivity:
            Entry("continueUserActivity", nil, .userActivity, capability: "UserActivityHandling")
        case .configurationForConnecting:
            Entry("configurationForConnecting", .scenes, .sceneConnection, capability: "SceneConfiguring")
        case .sceneWillConnect: Entry("sceneWillConnect", .scenes, .sceneConnection)
        case .sceneWillEnterForeground: Entry("sceneWillEnterForeground", .scenes, .scene)
        case .sceneDidBecomeActive: Entry("sceneDidBecomeActive", .scenes, .scene)
        case .sceneWillResignActive: Entry("sceneWillResignActive", .scenes, .scene)
        case .sceneDidEnterBackground: Entry("sceneDidEnterBackground", .scenes, .scene)
        case .sceneDidDisconnect: Entry("sceneDidDisconnect", .scenes, .scene)
        case .sceneOpenURLContexts:
            Entry("sceneOpenURLContexts", .scenes, .sceneOpenURL, capability: "SceneURLHandling")
        case .sceneContinueUserActivity:
            Entry("sceneContinueUserActivity", .scenes, .sceneUserActivity, capability: "SceneUserActivityHandling")
        case .didChangeNotificationAuthorization:
            Entry(
                "didChangeNotificationAuthorization", .push, .notificationSettings, capability: "AuthorizationObserving"
            )
        case .request: Entry("request", nil, .request, completion: true, capability: "Answering")
        case .didChangeSettings:
            Entry("didChangeSettings", nil, .settingsChange, capability: "SettingsObserving")
        case .performActionForShortcutItem:
            Entry("performActionForShortcutItem", nil, .shortcutItem, capability: "ShortcutHandling")
        case .healthCheck: Entry("healthCheck", nil, .none, completion: true, capability: "HealthChecking")
        case .dependencyWillStop:
            Entry("dependencyWillStop", nil, .dependency, capability: "DependencyStopObserving")
        case .dependencyDidStart:
            Entry("dependencyDidStart", nil, .dependency, capability: "DependencyStartObserving")
        case .willReload: Entry("willReload", nil, .none, completion: true, capability: "StateHandingOver")
        case .protectedDataWillBecomeUnavailable:
            Entry("protectedDataWillBecomeUnavailable", nil, .none, capability: "ProtectedDataUnavailableObserving")
        case .protectedDataDidBecomeAvailable:
            Entry("protectedDataDidBecomeAvailable", nil, .none, capability: "ProtectedDataAvailableObserving")
        case .significantTimeChange:
            Entry("significantTimeChange", nil, .none, capability: "SignificantTimeChangeObserving")
        }
    }

    /// The event's name everywhere ServiceHost shows it: `didBecomeActive`.
    public var name: String { entry.name }

    /// The manifest group that includes the event (`lifecycle`, `push`, `scenes`), or nil.
    public var group: EventGroup? { entry.group }

    /// What the event's `sh_event.data` points at.
    public var data: EventData { entry.data }

    /// Whether the event carries an `sh_completion` the service must call exactly once.
    public var needsCompletion: Bool { entry.needsCompletion }

    /// The ServiceKit protocol that handles the event, or nil for a lifecycle event.
    public var capability: String? { entry.capability }

    /// Whether the event is one of a scene's (the `scenes` group, scenes.h).
    public var isSceneEvent: Bool { group == .scenes }
}

extension EventKind: NamedCase {}
