// The checks the generated entry adds for each service (servicehost-metagen): for every
// capability event, the class adopts `_ManifestLists_EVENT` when servicehost.json lists the
// event and `_ManifestOmits_EVENT` when it does not. Each protocol has one requirement with two
// defaults; the compiler picks the more constrained one, and the unavailable one fails the
// build with a message naming the method and the manifest:
// - listed, but the class does not adopt the capability protocol: the method is missing or
//   misspelled, and the host would call a handler that is not there;
// - not listed, but the class adopts it: the host would never call the method.
// The generated code puts these conformances at the service's line in servicehost.json
// (#sourceLocation), so that is where the error points. Not for use by hand.

/// Generated code only: servicehost.json lists "notification"; the class must adopt ``NotificationReceiving``.
public protocol _ManifestLists_notification {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``NotificationReceiving``.
    static var _servicehostCheck_notification: Void { get }
}

extension _ManifestLists_notification {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"notification\": adopt NotificationReceiving and implement `func didReceive(_ notification: ServiceNotification)` (or remove \"notification\" from events)"
    )
    public static var _servicehostCheck_notification: Void { () }
}

extension _ManifestLists_notification where Self: NotificationReceiving {
    /// The class adopts ``NotificationReceiving``: the check passes.
    public static var _servicehostCheck_notification: Void { () }
}

/// Generated code only: servicehost.json does not list "notification"; the class must not adopt ``NotificationReceiving``.
public protocol _ManifestOmits_notification {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``NotificationReceiving``.
    static var _servicehostCheck_notification: Void { get }
}

extension _ManifestOmits_notification {
    /// The class does not adopt ``NotificationReceiving``: the check passes.
    public static var _servicehostCheck_notification: Void { () }
}

extension _ManifestOmits_notification where Self: NotificationReceiving {
    @available(
        *, unavailable,
        message:
            "the class adopts NotificationReceiving (`func didReceive(_ notification: ServiceNotification)`), but servicehost.json does not list the event \"notification\", so the host would never call it: add \"notification\" to events"
    )
    public static var _servicehostCheck_notification: Void { () }
}

/// Generated code only: servicehost.json lists "didReceiveMemoryWarning"; the class must adopt ``MemoryWarningHandling``.
public protocol _ManifestLists_didReceiveMemoryWarning {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``MemoryWarningHandling``.
    static var _servicehostCheck_didReceiveMemoryWarning: Void { get }
}

extension _ManifestLists_didReceiveMemoryWarning {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"didReceiveMemoryWarning\": adopt MemoryWarningHandling and implement `func didReceiveMemoryWarning()` (or remove \"didReceiveMemoryWarning\" from events)"
    )
    public static var _servicehostCheck_didReceiveMemoryWarning: Void { () }
}

extension _ManifestLists_didReceiveMemoryWarning where Self: MemoryWarningHandling {
    /// The class adopts ``MemoryWarningHandling``: the check passes.
    public static var _servicehostCheck_didReceiveMemoryWarning: Void { () }
}

/// Generated code only: servicehost.json does not list "didReceiveMemoryWarning"; the class must not adopt ``MemoryWarningHandling``.
public protocol _ManifestOmits_didReceiveMemoryWarning {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``MemoryWarningHandling``.
    static var _servicehostCheck_didReceiveMemoryWarning: Void { get }
}

extension _ManifestOmits_didReceiveMemoryWarning {
    /// The class does not adopt ``MemoryWarningHandling``: the check passes.
    public static var _servicehostCheck_didReceiveMemoryWarning: Void { () }
}

extension _ManifestOmits_didReceiveMemoryWarning where Self: MemoryWarningHandling {
    @available(
        *, unavailable,
        message:
            "the class adopts MemoryWarningHandling (`func didReceiveMemoryWarning()`), but servicehost.json does not list the event \"didReceiveMemoryWarning\", so the host would never call it: add \"didReceiveMemoryWarning\" to events"
    )
    public static var _servicehostCheck_didReceiveMemoryWarning: Void { () }
}

/// Generated code only: servicehost.json lists "willPresentNotification"; the class must adopt ``PushPresenting``.
public protocol _ManifestLists_willPresentNotification {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``PushPresenting``.
    static var _servicehostCheck_willPresentNotification: Void { get }
}

extension _ManifestLists_willPresentNotification {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"willPresentNotification\": adopt PushPresenting and implement `func willPresent(_ notification: PushNotification, completion: PresentationCompletion)` (or remove \"willPresentNotification\" from events)"
    )
    public static var _servicehostCheck_willPresentNotification: Void { () }
}

extension _ManifestLists_willPresentNotification where Self: PushPresenting {
    /// The class adopts ``PushPresenting``: the check passes.
    public static var _servicehostCheck_willPresentNotification: Void { () }
}

/// Generated code only: servicehost.json does not list "willPresentNotification"; the class must not adopt ``PushPresenting``.
public protocol _ManifestOmits_willPresentNotification {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``PushPresenting``.
    static var _servicehostCheck_willPresentNotification: Void { get }
}

extension _ManifestOmits_willPresentNotification {
    /// The class does not adopt ``PushPresenting``: the check passes.
    public static var _servicehostCheck_willPresentNotification: Void { () }
}

extension _ManifestOmits_willPresentNotification where Self: PushPresenting {
    @available(
        *, unavailable,
        message:
            "the class adopts PushPresenting (`func willPresent(_ notification: PushNotification, completion: PresentationCompletion)`), but servicehost.json does not list the event \"willPresentNotification\", so the host would never call it: add \"willPresentNotification\" to events"
    )
    public static var _servicehostCheck_willPresentNotification: Void { () }
}

/// Generated code only: servicehost.json lists "didReceiveNotificationResponse"; the class must adopt ``NotificationResponseHandling``.
public protocol _ManifestLists_didReceiveNotificationResponse {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``NotificationResponseHandling``.
    static var _servicehostCheck_didReceiveNotificationResponse: Void { get }
}

extension _ManifestLists_didReceiveNotificationResponse {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"didReceiveNotificationResponse\": adopt NotificationResponseHandling and implement `func didReceive(_ response: NotificationResponse, completion: ResponseCompletion)` (or remove \"didReceiveNotificationResponse\" from events)"
    )
    public static var _servicehostCheck_didReceiveNotificationResponse: Void { () }
}

extension _ManifestLists_didReceiveNotificationResponse where Self: NotificationResponseHandling {
    /// The class adopts ``NotificationResponseHandling``: the check passes.
    public static var _servicehostCheck_didReceiveNotificationResponse: Void { () }
}

/// Generated code only: servicehost.json does not list "didReceiveNotificationResponse"; the class must not adopt ``NotificationResponseHandling``.
public protocol _ManifestOmits_didReceiveNotificationResponse {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``NotificationResponseHandling``.
    static var _servicehostCheck_didReceiveNotificationResponse: Void { get }
}

extension _ManifestOmits_didReceiveNotificationResponse {
    /// The class does not adopt ``NotificationResponseHandling``: the check passes.
    public static var _servicehostCheck_didReceiveNotificationResponse: Void { () }
}

extension _ManifestOmits_didReceiveNotificationResponse where Self: NotificationResponseHandling {
    @available(
        *, unavailable,
        message:
            "the class adopts NotificationResponseHandling (`func didReceive(_ response: NotificationResponse, completion: ResponseCompletion)`), but servicehost.json does not list the event \"didReceiveNotificationResponse\", so the host would never call it: add \"didReceiveNotificationResponse\" to events"
    )
    public static var _servicehostCheck_didReceiveNotificationResponse: Void { () }
}

/// Generated code only: servicehost.json lists "didReceiveRemoteNotification"; the class must adopt ``BackgroundFetching``.
public protocol _ManifestLists_didReceiveRemoteNotification {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``BackgroundFetching``.
    static var _servicehostCheck_didReceiveRemoteNotification: Void { get }
}

extension _ManifestLists_didReceiveRemoteNotification {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"didReceiveRemoteNotification\": adopt BackgroundFetching and implement `func didReceiveRemoteNotification(_ notification: PushNotification, completion: FetchCompletion)` (or remove \"didReceiveRemoteNotification\" from events)"
    )
    public static var _servicehostCheck_didReceiveRemoteNotification: Void { () }
}

extension _ManifestLists_didReceiveRemoteNotification where Self: BackgroundFetching {
    /// The class adopts ``BackgroundFetching``: the check passes.
    public static var _servicehostCheck_didReceiveRemoteNotification: Void { () }
}

/// Generated code only: servicehost.json does not list "didReceiveRemoteNotification"; the class must not adopt ``BackgroundFetching``.
public protocol _ManifestOmits_didReceiveRemoteNotification {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``BackgroundFetching``.
    static var _servicehostCheck_didReceiveRemoteNotification: Void { get }
}

extension _ManifestOmits_didReceiveRemoteNotification {
    /// The class does not adopt ``BackgroundFetching``: the check passes.
    public static var _servicehostCheck_didReceiveRemoteNotification: Void { () }
}

extension _ManifestOmits_didReceiveRemoteNotification where Self: BackgroundFetching {
    @available(
        *, unavailable,
        message:
            "the class adopts BackgroundFetching (`func didReceiveRemoteNotification(_ notification: PushNotification, completion: FetchCompletion)`), but servicehost.json does not list the event \"didReceiveRemoteNotification\", so the host would never call it: add \"didReceiveRemoteNotification\" to events"
    )
    public static var _servicehostCheck_didReceiveRemoteNotification: Void { () }
}

/// Generated code only: servicehost.json lists "didRegisterForRemoteNotifications"; the class must adopt ``DeviceTokenReceiving``.
public protocol _ManifestLists_didRegisterForRemoteNotifications {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``DeviceTokenReceiving``.
    static var _servicehostCheck_didRegisterForRemoteNotifications: Void { get }
}

extension _ManifestLists_didRegisterForRemoteNotifications {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"didRegisterForRemoteNotifications\": adopt DeviceTokenReceiving and implement `func didRegisterForRemoteNotifications(deviceToken: DeviceToken)` (or remove \"didRegisterForRemoteNotifications\" from events)"
    )
    public static var _servicehostCheck_didRegisterForRemoteNotifications: Void { () }
}

extension _ManifestLists_didRegisterForRemoteNotifications where Self: DeviceTokenReceiving {
    /// The class adopts ``DeviceTokenReceiving``: the check passes.
    public static var _servicehostCheck_didRegisterForRemoteNotifications: Void { () }
}

/// Generated code only: servicehost.json does not list "didRegisterForRemoteNotifications"; the class must not adopt ``DeviceTokenReceiving``.
public protocol _ManifestOmits_didRegisterForRemoteNotifications {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``DeviceTokenReceiving``.
    static var _servicehostCheck_didRegisterForRemoteNotifications: Void { get }
}

extension _ManifestOmits_didRegisterForRemoteNotifications {
    /// The class does not adopt ``DeviceTokenReceiving``: the check passes.
    public static var _servicehostCheck_didRegisterForRemoteNotifications: Void { () }
}

extension _ManifestOmits_didRegisterForRemoteNotifications where Self: DeviceTokenReceiving {
    @available(
        *, unavailable,
        message:
            "the class adopts DeviceTokenReceiving (`func didRegisterForRemoteNotifications(deviceToken: DeviceToken)`), but servicehost.json does not list the event \"didRegisterForRemoteNotifications\", so the host would never call it: add \"didRegisterForRemoteNotifications\" to events"
    )
    public static var _servicehostCheck_didRegisterForRemoteNotifications: Void { () }
}

/// Generated code only: servicehost.json lists "didFailToRegisterForRemoteNotifications"; the class must adopt ``DeviceTokenErrorHandling``.
public protocol _ManifestLists_didFailToRegisterForRemoteNotifications {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``DeviceTokenErrorHandling``.
    static var _servicehostCheck_didFailToRegisterForRemoteNotifications: Void { get }
}

extension _ManifestLists_didFailToRegisterForRemoteNotifications {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"didFailToRegisterForRemoteNotifications\": adopt DeviceTokenErrorHandling and implement `func didFailToRegisterForRemoteNotifications(error: String)` (or remove \"didFailToRegisterForRemoteNotifications\" from events)"
    )
    public static var _servicehostCheck_didFailToRegisterForRemoteNotifications: Void { () }
}

extension _ManifestLists_didFailToRegisterForRemoteNotifications where Self: DeviceTokenErrorHandling {
    /// The class adopts ``DeviceTokenErrorHandling``: the check passes.
    public static var _servicehostCheck_didFailToRegisterForRemoteNotifications: Void { () }
}

/// Generated code only: servicehost.json does not list "didFailToRegisterForRemoteNotifications"; the class must not adopt ``DeviceTokenErrorHandling``.
public protocol _ManifestOmits_didFailToRegisterForRemoteNotifications {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``DeviceTokenErrorHandling``.
    static var _servicehostCheck_didFailToRegisterForRemoteNotifications: Void { get }
}

extension _ManifestOmits_didFailToRegisterForRemoteNotifications {
    /// The class does not adopt ``DeviceTokenErrorHandling``: the check passes.
    public static var _servicehostCheck_didFailToRegisterForRemoteNotifications: Void { () }
}

extension _ManifestOmits_didFailToRegisterForRemoteNotifications where Self: DeviceTokenErrorHandling {
    @available(
        *, unavailable,
        message:
            "the class adopts DeviceTokenErrorHandling (`func didFailToRegisterForRemoteNotifications(error: String)`), but servicehost.json does not list the event \"didFailToRegisterForRemoteNotifications\", so the host would never call it: add \"didFailToRegisterForRemoteNotifications\" to events"
    )
    public static var _servicehostCheck_didFailToRegisterForRemoteNotifications: Void { () }
}

/// Generated code only: servicehost.json lists "openURL"; the class must adopt ``URLHandling``.
public protocol _ManifestLists_openURL {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``URLHandling``.
    static var _servicehostCheck_openURL: Void { get }
}

extension _ManifestLists_openURL {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"openURL\": adopt URLHandling and implement `func open(_ url: OpenURL) -> Bool` (or remove \"openURL\" from events)"
    )
    public static var _servicehostCheck_openURL: Void { () }
}

extension _ManifestLists_openURL where Self: URLHandling {
    /// The class adopts ``URLHandling``: the check passes.
    public static var _servicehostCheck_openURL: Void { () }
}

/// Generated code only: servicehost.json does not list "openURL"; the class must not adopt ``URLHandling``.
public protocol _ManifestOmits_openURL {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``URLHandling``.
    static var _servicehostCheck_openURL: Void { get }
}

extension _ManifestOmits_openURL {
    /// The class does not adopt ``URLHandling``: the check passes.
    public static var _servicehostCheck_openURL: Void { () }
}

extension _ManifestOmits_openURL where Self: URLHandling {
    @available(
        *, unavailable,
        message:
            "the class adopts URLHandling (`func open(_ url: OpenURL) -> Bool`), but servicehost.json does not list the event \"openURL\", so the host would never call it: add \"openURL\" to events"
    )
    public static var _servicehostCheck_openURL: Void { () }
}

/// Generated code only: servicehost.json lists "continueUserActivity"; the class must adopt ``UserActivityHandling``.
public protocol _ManifestLists_continueUserActivity {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``UserActivityHandling``.
    static var _servicehostCheck_continueUserActivity: Void { get }
}

extension _ManifestLists_continueUserActivity {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"continueUserActivity\": adopt UserActivityHandling and implement `func continueUserActivity(_ activity: UserActivity) -> Bool` (or remove \"continueUserActivity\" from events)"
    )
    public static var _servicehostCheck_continueUserActivity: Void { () }
}

extension _ManifestLists_continueUserActivity where Self: UserActivityHandling {
    /// The class adopts ``UserActivityHandling``: the check passes.
    public static var _servicehostCheck_continueUserActivity: Void { () }
}

/// Generated code only: servicehost.json does not list "continueUserActivity"; the class must not adopt ``UserActivityHandling``.
public protocol _ManifestOmits_continueUserActivity {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``UserActivityHandling``.
    static var _servicehostCheck_continueUserActivity: Void { get }
}

extension _ManifestOmits_continueUserActivity {
    /// The class does not adopt ``UserActivityHandling``: the check passes.
    public static var _servicehostCheck_continueUserActivity: Void { () }
}

extension _ManifestOmits_continueUserActivity where Self: UserActivityHandling {
    @available(
        *, unavailable,
        message:
            "the class adopts UserActivityHandling (`func continueUserActivity(_ activity: UserActivity) -> Bool`), but servicehost.json does not list the event \"continueUserActivity\", so the host would never call it: add \"continueUserActivity\" to events"
    )
    public static var _servicehostCheck_continueUserActivity: Void { () }
}

/// Generated code only: servicehost.json lists "didChangeNotificationAuthorization"; the class must adopt ``AuthorizationObserving``.
public protocol _ManifestLists_didChangeNotificationAuthorization {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``AuthorizationObserving``.
    static var _servicehostCheck_didChangeNotificationAuthorization: Void { get }
}

extension _ManifestLists_didChangeNotificationAuthorization {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"didChangeNotificationAuthorization\": adopt AuthorizationObserving and implement `func didChangeNotificationAuthorization(_ settings: NotificationSettings)` (or remove \"didChangeNotificationAuthorization\" from events)"
    )
    public static var _servicehostCheck_didChangeNotificationAuthorization: Void { () }
}

extension _ManifestLists_didChangeNotificationAuthorization where Self: AuthorizationObserving {
    /// The class adopts ``AuthorizationObserving``: the check passes.
    public static var _servicehostCheck_didChangeNotificationAuthorization: Void { () }
}

/// Generated code only: servicehost.json does not list "didChangeNotificationAuthorization"; the class must not adopt ``AuthorizationObserving``.
public protocol _ManifestOmits_didChangeNotificationAuthorization {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``AuthorizationObserving``.
    static var _servicehostCheck_didChangeNotificationAuthorization: Void { get }
}

extension _ManifestOmits_didChangeNotificationAuthorization {
    /// The class does not adopt ``AuthorizationObserving``: the check passes.
    public static var _servicehostCheck_didChangeNotificationAuthorization: Void { () }
}

extension _ManifestOmits_didChangeNotificationAuthorization where Self: AuthorizationObserving {
    @available(
        *, unavailable,
        message:
            "the class adopts AuthorizationObserving (`func didChangeNotificationAuthorization(_ settings: NotificationSettings)`), but servicehost.json does not list the event \"didChangeNotificationAuthorization\", so the host would never call it: add \"didChangeNotificationAuthorization\" to events"
    )
    public static var _servicehostCheck_didChangeNotificationAuthorization: Void { () }
}

/// Generated code only: servicehost.json lists "configurationForConnecting"; the class must adopt ``SceneConfiguring``.
public protocol _ManifestLists_configurationForConnecting {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``SceneConfiguring``.
    static var _servicehostCheck_configurationForConnecting: Void { get }
}

extension _ManifestLists_configurationForConnecting {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"configurationForConnecting\": adopt SceneConfiguring and implement `func configuration(forConnecting scene: Scene, options: SceneConnectionOptions) -> SceneConfiguration?` (or remove \"configurationForConnecting\" from events)"
    )
    public static var _servicehostCheck_configurationForConnecting: Void { () }
}

extension _ManifestLists_configurationForConnecting where Self: SceneConfiguring {
    /// The class adopts ``SceneConfiguring``: the check passes.
    public static var _servicehostCheck_configurationForConnecting: Void { () }
}

/// Generated code only: servicehost.json does not list "configurationForConnecting"; the class must not adopt ``SceneConfiguring``.
public protocol _ManifestOmits_configurationForConnecting {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``SceneConfiguring``.
    static var _servicehostCheck_configurationForConnecting: Void { get }
}

extension _ManifestOmits_configurationForConnecting {
    /// The class does not adopt ``SceneConfiguring``: the check passes.
    public static var _servicehostCheck_configurationForConnecting: Void { () }
}

extension _ManifestOmits_configurationForConnecting where Self: SceneConfiguring {
    @available(
        *, unavailable,
        message:
            "the class adopts SceneConfiguring (`func configuration(forConnecting scene: Scene, options: SceneConnectionOptions) -> SceneConfiguration?`), but servicehost.json does not list the event \"configurationForConnecting\", so the host would never call it: add \"configurationForConnecting\" to events"
    )
    public static var _servicehostCheck_configurationForConnecting: Void { () }
}

/// Generated code only: servicehost.json lists "sceneOpenURLContexts"; the class must adopt ``SceneURLHandling``.
public protocol _ManifestLists_sceneOpenURLContexts {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``SceneURLHandling``.
    static var _servicehostCheck_sceneOpenURLContexts: Void { get }
}

extension _ManifestLists_sceneOpenURLContexts {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"sceneOpenURLContexts\": adopt SceneURLHandling and implement `func scene(_ scene: Scene, open url: OpenURL) -> Bool` (or remove \"sceneOpenURLContexts\" from events)"
    )
    public static var _servicehostCheck_sceneOpenURLContexts: Void { () }
}

extension _ManifestLists_sceneOpenURLContexts where Self: SceneURLHandling {
    /// The class adopts ``SceneURLHandling``: the check passes.
    public static var _servicehostCheck_sceneOpenURLContexts: Void { () }
}

/// Generated code only: servicehost.json does not list "sceneOpenURLContexts"; the class must not adopt ``SceneURLHandling``.
public protocol _ManifestOmits_sceneOpenURLContexts {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``SceneURLHandling``.
    static var _servicehostCheck_sceneOpenURLContexts: Void { get }
}

extension _ManifestOmits_sceneOpenURLContexts {
    /// The class does not adopt ``SceneURLHandling``: the check passes.
    public static var _servicehostCheck_sceneOpenURLContexts: Void { () }
}

extension _ManifestOmits_sceneOpenURLContexts where Self: SceneURLHandling {
    @available(
        *, unavailable,
        message:
            "the class adopts SceneURLHandling (`func scene(_ scene: Scene, open url: OpenURL) -> Bool`), but servicehost.json does not list the event \"sceneOpenURLContexts\", so the host would never call it: add \"sceneOpenURLContexts\" to events"
    )
    public static var _servicehostCheck_sceneOpenURLContexts: Void { () }
}

/// Generated code only: servicehost.json lists "sceneContinueUserActivity"; the class must adopt ``SceneUserActivityHandling``.
public protocol _ManifestLists_sceneContinueUserActivity {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``SceneUserActivityHandling``.
    static var _servicehostCheck_sceneContinueUserActivity: Void { get }
}

extension _ManifestLists_sceneContinueUserActivity {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"sceneContinueUserActivity\": adopt SceneUserActivityHandling and implement `func scene(_ scene: Scene, continue activity: UserActivity) -> Bool` (or remove \"sceneContinueUserActivity\" from events)"
    )
    public static var _servicehostCheck_sceneContinueUserActivity: Void { () }
}

extension _ManifestLists_sceneContinueUserActivity where Self: SceneUserActivityHandling {
    /// The class adopts ``SceneUserActivityHandling``: the check passes.
    public static var _servicehostCheck_sceneContinueUserActivity: Void { () }
}

/// Generated code only: servicehost.json does not list "sceneContinueUserActivity"; the class must not adopt ``SceneUserActivityHandling``.
public protocol _ManifestOmits_sceneContinueUserActivity {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``SceneUserActivityHandling``.
    static var _servicehostCheck_sceneContinueUserActivity: Void { get }
}

extension _ManifestOmits_sceneContinueUserActivity {
    /// The class does not adopt ``SceneUserActivityHandling``: the check passes.
    public static var _servicehostCheck_sceneContinueUserActivity: Void { () }
}

extension _ManifestOmits_sceneContinueUserActivity where Self: SceneUserActivityHandling {
    @available(
        *, unavailable,
        message:
            "the class adopts SceneUserActivityHandling (`func scene(_ scene: Scene, continue activity: UserActivity) -> Bool`), but servicehost.json does not list the event \"sceneContinueUserActivity\", so the host would never call it: add \"sceneContinueUserActivity\" to events"
    )
    public static var _servicehostCheck_sceneContinueUserActivity: Void { () }
}

/// Generated code only: servicehost.json lists no scene event; the class must not adopt ``SceneService``.
public protocol _ManifestOmits_scenes {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``SceneService``.
    static var _servicehostCheck_scenes: Void { get }
}

extension _ManifestOmits_scenes {
    /// The class is no scene service: the check passes.
    public static var _servicehostCheck_scenes: Void { () }
}

extension _ManifestOmits_scenes where Self: SceneService {
    @available(
        *, unavailable,
        message:
            "the class adopts SceneService, but servicehost.json lists no scene event, so the host would never call its scene methods: add the events (or the group \"scenes\") to events"
    )
    public static var _servicehostCheck_scenes: Void { () }
}

/// Generated code only: servicehost.json lists "request"; the class must adopt ``Answering``.
public protocol _ManifestLists_request {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``Answering``.
    static var _servicehostCheck_request: Void { get }
}

extension _ManifestLists_request {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"request\": adopt Answering and implement `func answer(_ request: ServiceRequest, reply: ReplyCompletion)` (or remove \"request\" from events)"
    )
    public static var _servicehostCheck_request: Void { () }
}

extension _ManifestLists_request where Self: Answering {
    /// The class adopts ``Answering``: the check passes.
    public static var _servicehostCheck_request: Void { () }
}

/// Generated code only: servicehost.json does not list "request"; the class must not adopt ``Answering``.
public protocol _ManifestOmits_request {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``Answering``.
    static var _servicehostCheck_request: Void { get }
}

extension _ManifestOmits_request {
    /// The class does not adopt ``Answering``: the check passes.
    public static var _servicehostCheck_request: Void { () }
}

extension _ManifestOmits_request where Self: Answering {
    @available(
        *, unavailable,
        message:
            "the class adopts Answering (`func answer(_ request: ServiceRequest, reply: ReplyCompletion)`), but servicehost.json does not list the event \"request\", so the host would never call it: add \"request\" to events"
    )
    public static var _servicehostCheck_request: Void { () }
}

/// Generated code only: servicehost.json lists "didChangeSettings"; the class must adopt ``SettingsObserving``.
public protocol _ManifestLists_didChangeSettings {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``SettingsObserving``.
    static var _servicehostCheck_didChangeSettings: Void { get }
}

extension _ManifestLists_didChangeSettings {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"didChangeSettings\": adopt SettingsObserving and implement `func didChangeSettings(from old: JSONValue?, to new: JSONValue?)` (or remove \"didChangeSettings\" from events)"
    )
    public static var _servicehostCheck_didChangeSettings: Void { () }
}

extension _ManifestLists_didChangeSettings where Self: SettingsObserving {
    /// The class adopts ``SettingsObserving``: the check passes.
    public static var _servicehostCheck_didChangeSettings: Void { () }
}

/// Generated code only: servicehost.json does not list "didChangeSettings"; the class must not adopt ``SettingsObserving``.
public protocol _ManifestOmits_didChangeSettings {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``SettingsObserving``.
    static var _servicehostCheck_didChangeSettings: Void { get }
}

extension _ManifestOmits_didChangeSettings {
    /// The class does not adopt ``SettingsObserving``: the check passes.
    public static var _servicehostCheck_didChangeSettings: Void { () }
}

extension _ManifestOmits_didChangeSettings where Self: SettingsObserving {
    @available(
        *, unavailable,
        message:
            "the class adopts SettingsObserving (`func didChangeSettings(from old: JSONValue?, to new: JSONValue?)`), but servicehost.json does not list the event \"didChangeSettings\", so the host would never call it: add \"didChangeSettings\" to events"
    )
    public static var _servicehostCheck_didChangeSettings: Void { () }
}

/// Generated code only: servicehost.json lists "performActionForShortcutItem"; the class must adopt ``ShortcutHandling``.
public protocol _ManifestLists_performActionForShortcutItem {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``ShortcutHandling``.
    static var _servicehostCheck_performActionForShortcutItem: Void { get }
}

extension _ManifestLists_performActionForShortcutItem {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"performActionForShortcutItem\": adopt ShortcutHandling and implement `func perform(_ item: ShortcutItem) -> Bool` (or remove \"performActionForShortcutItem\" from events)"
    )
    public static var _servicehostCheck_performActionForShortcutItem: Void { () }
}

extension _ManifestLists_performActionForShortcutItem where Self: ShortcutHandling {
    /// The class adopts ``ShortcutHandling``: the check passes.
    public static var _servicehostCheck_performActionForShortcutItem: Void { () }
}

/// Generated code only: servicehost.json does not list "performActionForShortcutItem"; the class must not adopt ``ShortcutHandling``.
public protocol _ManifestOmits_performActionForShortcutItem {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``ShortcutHandling``.
    static var _servicehostCheck_performActionForShortcutItem: Void { get }
}

extension _ManifestOmits_performActionForShortcutItem {
    /// The class does not adopt ``ShortcutHandling``: the check passes.
    public static var _servicehostCheck_performActionForShortcutItem: Void { () }
}

extension _ManifestOmits_performActionForShortcutItem where Self: ShortcutHandling {
    @available(
        *, unavailable,
        message:
            "the class adopts ShortcutHandling (`func perform(_ item: ShortcutItem) -> Bool`), but servicehost.json does not list the event \"performActionForShortcutItem\", so the host would never call it: add \"performActionForShortcutItem\" to events"
    )
    public static var _servicehostCheck_performActionForShortcutItem: Void { () }
}

/// Generated code only: servicehost.json lists "healthCheck"; the class must adopt ``HealthChecking``.
public protocol _ManifestLists_healthCheck {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``HealthChecking``.
    static var _servicehostCheck_healthCheck: Void { get }
}

extension _ManifestLists_healthCheck {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"healthCheck\": adopt HealthChecking and implement `func checkHealth(completion: HealthCompletion)` (or remove \"healthCheck\" from events)"
    )
    public static var _servicehostCheck_healthCheck: Void { () }
}

extension _ManifestLists_healthCheck where Self: HealthChecking {
    /// The class adopts ``HealthChecking``: the check passes.
    public static var _servicehostCheck_healthCheck: Void { () }
}

/// Generated code only: servicehost.json does not list "healthCheck"; the class must not adopt ``HealthChecking``.
public protocol _ManifestOmits_healthCheck {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``HealthChecking``.
    static var _servicehostCheck_healthCheck: Void { get }
}

extension _ManifestOmits_healthCheck {
    /// The class does not adopt ``HealthChecking``: the check passes.
    public static var _servicehostCheck_healthCheck: Void { () }
}

extension _ManifestOmits_healthCheck where Self: HealthChecking {
    @available(
        *, unavailable,
        message:
            "the class adopts HealthChecking (`func checkHealth(completion: HealthCompletion)`), but servicehost.json does not list the event \"healthCheck\", so the host would never call it: add \"healthCheck\" to events"
    )
    public static var _servicehostCheck_healthCheck: Void { () }
}

/// Generated code only: servicehost.json lists "dependencyWillStop"; the class must adopt ``DependencyStopObserving``.
public protocol _ManifestLists_dependencyWillStop {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``DependencyStopObserving``.
    static var _servicehostCheck_dependencyWillStop: Void { get }
}

extension _ManifestLists_dependencyWillStop {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"dependencyWillStop\": adopt DependencyStopObserving and implement `func dependencyWillStop(_ id: String, version: String)` (or remove \"dependencyWillStop\" from events)"
    )
    public static var _servicehostCheck_dependencyWillStop: Void { () }
}

extension _ManifestLists_dependencyWillStop where Self: DependencyStopObserving {
    /// The class adopts ``DependencyStopObserving``: the check passes.
    public static var _servicehostCheck_dependencyWillStop: Void { () }
}

/// Generated code only: servicehost.json does not list "dependencyWillStop"; the class must not adopt ``DependencyStopObserving``.
public protocol _ManifestOmits_dependencyWillStop {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``DependencyStopObserving``.
    static var _servicehostCheck_dependencyWillStop: Void { get }
}

extension _ManifestOmits_dependencyWillStop {
    /// The class does not adopt ``DependencyStopObserving``: the check passes.
    public static var _servicehostCheck_dependencyWillStop: Void { () }
}

extension _ManifestOmits_dependencyWillStop where Self: DependencyStopObserving {
    @available(
        *, unavailable,
        message:
            "the class adopts DependencyStopObserving (`func dependencyWillStop(_ id: String, version: String)`), but servicehost.json does not list the event \"dependencyWillStop\", so the host would never call it: add \"dependencyWillStop\" to events"
    )
    public static var _servicehostCheck_dependencyWillStop: Void { () }
}

/// Generated code only: servicehost.json lists "dependencyDidStart"; the class must adopt ``DependencyStartObserving``.
public protocol _ManifestLists_dependencyDidStart {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``DependencyStartObserving``.
    static var _servicehostCheck_dependencyDidStart: Void { get }
}

extension _ManifestLists_dependencyDidStart {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"dependencyDidStart\": adopt DependencyStartObserving and implement `func dependencyDidStart(_ id: String, version: String)` (or remove \"dependencyDidStart\" from events)"
    )
    public static var _servicehostCheck_dependencyDidStart: Void { () }
}

extension _ManifestLists_dependencyDidStart where Self: DependencyStartObserving {
    /// The class adopts ``DependencyStartObserving``: the check passes.
    public static var _servicehostCheck_dependencyDidStart: Void { () }
}

/// Generated code only: servicehost.json does not list "dependencyDidStart"; the class must not adopt ``DependencyStartObserving``.
public protocol _ManifestOmits_dependencyDidStart {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``DependencyStartObserving``.
    static var _servicehostCheck_dependencyDidStart: Void { get }
}

extension _ManifestOmits_dependencyDidStart {
    /// The class does not adopt ``DependencyStartObserving``: the check passes.
    public static var _servicehostCheck_dependencyDidStart: Void { () }
}

extension _ManifestOmits_dependencyDidStart where Self: DependencyStartObserving {
    @available(
        *, unavailable,
        message:
            "the class adopts DependencyStartObserving (`func dependencyDidStart(_ id: String, version: String)`), but servicehost.json does not list the event \"dependencyDidStart\", so the host would never call it: add \"dependencyDidStart\" to events"
    )
    public static var _servicehostCheck_dependencyDidStart: Void { () }
}

/// Generated code only: servicehost.json lists "protectedDataWillBecomeUnavailable"; the class must adopt ``ProtectedDataUnavailableObserving``.
public protocol _ManifestLists_protectedDataWillBecomeUnavailable {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``ProtectedDataUnavailableObserving``.
    static var _servicehostCheck_protectedDataWillBecomeUnavailable: Void { get }
}

extension _ManifestLists_protectedDataWillBecomeUnavailable {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"protectedDataWillBecomeUnavailable\": adopt ProtectedDataUnavailableObserving and implement `func protectedDataWillBecomeUnavailable()` (or remove \"protectedDataWillBecomeUnavailable\" from events)"
    )
    public static var _servicehostCheck_protectedDataWillBecomeUnavailable: Void { () }
}

extension _ManifestLists_protectedDataWillBecomeUnavailable where Self: ProtectedDataUnavailableObserving {
    /// The class adopts ``ProtectedDataUnavailableObserving``: the check passes.
    public static var _servicehostCheck_protectedDataWillBecomeUnavailable: Void { () }
}

/// Generated code only: servicehost.json does not list "protectedDataWillBecomeUnavailable"; the class must not adopt ``ProtectedDataUnavailableObserving``.
public protocol _ManifestOmits_protectedDataWillBecomeUnavailable {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``ProtectedDataUnavailableObserving``.
    static var _servicehostCheck_protectedDataWillBecomeUnavailable: Void { get }
}

extension _ManifestOmits_protectedDataWillBecomeUnavailable {
    /// The class does not adopt ``ProtectedDataUnavailableObserving``: the check passes.
    public static var _servicehostCheck_protectedDataWillBecomeUnavailable: Void { () }
}

extension _ManifestOmits_protectedDataWillBecomeUnavailable where Self: ProtectedDataUnavailableObserving {
    @available(
        *, unavailable,
        message:
            "the class adopts ProtectedDataUnavailableObserving (`func protectedDataWillBecomeUnavailable()`), but servicehost.json does not list the event \"protectedDataWillBecomeUnavailable\", so the host would never call it: add \"protectedDataWillBecomeUnavailable\" to events"
    )
    public static var _servicehostCheck_protectedDataWillBecomeUnavailable: Void { () }
}

/// Generated code only: servicehost.json lists "protectedDataDidBecomeAvailable"; the class must adopt ``ProtectedDataAvailableObserving``.
public protocol _ManifestLists_protectedDataDidBecomeAvailable {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``ProtectedDataAvailableObserving``.
    static var _servicehostCheck_protectedDataDidBecomeAvailable: Void { get }
}

extension _ManifestLists_protectedDataDidBecomeAvailable {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"protectedDataDidBecomeAvailable\": adopt ProtectedDataAvailableObserving and implement `func protectedDataDidBecomeAvailable()` (or remove \"protectedDataDidBecomeAvailable\" from events)"
    )
    public static var _servicehostCheck_protectedDataDidBecomeAvailable: Void { () }
}

extension _ManifestLists_protectedDataDidBecomeAvailable where Self: ProtectedDataAvailableObserving {
    /// The class adopts ``ProtectedDataAvailableObserving``: the check passes.
    public static var _servicehostCheck_protectedDataDidBecomeAvailable: Void { () }
}

/// Generated code only: servicehost.json does not list "protectedDataDidBecomeAvailable"; the class must not adopt ``ProtectedDataAvailableObserving``.
public protocol _ManifestOmits_protectedDataDidBecomeAvailable {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``ProtectedDataAvailableObserving``.
    static var _servicehostCheck_protectedDataDidBecomeAvailable: Void { get }
}

extension _ManifestOmits_protectedDataDidBecomeAvailable {
    /// The class does not adopt ``ProtectedDataAvailableObserving``: the check passes.
    public static var _servicehostCheck_protectedDataDidBecomeAvailable: Void { () }
}

extension _ManifestOmits_protectedDataDidBecomeAvailable where Self: ProtectedDataAvailableObserving {
    @available(
        *, unavailable,
        message:
            "the class adopts ProtectedDataAvailableObserving (`func protectedDataDidBecomeAvailable()`), but servicehost.json does not list the event \"protectedDataDidBecomeAvailable\", so the host would never call it: add \"protectedDataDidBecomeAvailable\" to events"
    )
    public static var _servicehostCheck_protectedDataDidBecomeAvailable: Void { () }
}

/// Generated code only: servicehost.json lists "significantTimeChange"; the class must adopt ``SignificantTimeChangeObserving``.
public protocol _ManifestLists_significantTimeChange {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``SignificantTimeChangeObserving``.
    static var _servicehostCheck_significantTimeChange: Void { get }
}

extension _ManifestLists_significantTimeChange {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"significantTimeChange\": adopt SignificantTimeChangeObserving and implement `func significantTimeChange()` (or remove \"significantTimeChange\" from events)"
    )
    public static var _servicehostCheck_significantTimeChange: Void { () }
}

extension _ManifestLists_significantTimeChange where Self: SignificantTimeChangeObserving {
    /// The class adopts ``SignificantTimeChangeObserving``: the check passes.
    public static var _servicehostCheck_significantTimeChange: Void { () }
}

/// Generated code only: servicehost.json does not list "significantTimeChange"; the class must not adopt ``SignificantTimeChangeObserving``.
public protocol _ManifestOmits_significantTimeChange {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``SignificantTimeChangeObserving``.
    static var _servicehostCheck_significantTimeChange: Void { get }
}

extension _ManifestOmits_significantTimeChange {
    /// The class does not adopt ``SignificantTimeChangeObserving``: the check passes.
    public static var _servicehostCheck_significantTimeChange: Void { () }
}

extension _ManifestOmits_significantTimeChange where Self: SignificantTimeChangeObserving {
    @available(
        *, unavailable,
        message:
            "the class adopts SignificantTimeChangeObserving (`func significantTimeChange()`), but servicehost.json does not list the event \"significantTimeChange\", so the host would never call it: add \"significantTimeChange\" to events"
    )
    public static var _servicehostCheck_significantTimeChange: Void { () }
}

/// Generated code only: servicehost.json lists "willReload"; the class must adopt ``StateHandingOver``.
public protocol _ManifestLists_willReload {
    /// Resolves to an unavailable default, and fails the build, unless the class adopts ``StateHandingOver``.
    static var _servicehostCheck_willReload: Void { get }
}

extension _ManifestLists_willReload {
    @available(
        *, unavailable,
        message:
            "servicehost.json lists the event \"willReload\": adopt StateHandingOver and implement `func willReload() -> [UInt8]?` (or remove \"willReload\" from events)"
    )
    public static var _servicehostCheck_willReload: Void { () }
}

extension _ManifestLists_willReload where Self: StateHandingOver {
    /// The class adopts ``StateHandingOver``: the check passes.
    public static var _servicehostCheck_willReload: Void { () }
}

/// Generated code only: servicehost.json does not list "willReload"; the class must not adopt ``StateHandingOver``.
public protocol _ManifestOmits_willReload {
    /// Resolves to an unavailable default, and fails the build, when the class adopts ``StateHandingOver``.
    static var _servicehostCheck_willReload: Void { get }
}

extension _ManifestOmits_willReload {
    /// The class does not adopt ``StateHandingOver``: the check passes.
    public static var _servicehostCheck_willReload: Void { () }
}

extension _ManifestOmits_willReload where Self: StateHandingOver {
    @available(
        *, unavailable,
        message:
            "the class adopts StateHandingOver (`func willReload() -> [UInt8]?`), but servicehost.json does not list the event \"willReload\", so the host would never call it: add \"willReload\" to events"
    )
    public static var _servicehostCheck_willReload: Void { () }
}
