/// What the host does with each event kind, beyond the shared table (ServiceVocabulary):
/// the app state it leads to and the order services hear it in.
extension EventKind {
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
