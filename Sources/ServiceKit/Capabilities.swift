// The capability protocols: one per event that is not part of the lifecycle. None has a
// usable default, so a misspelled handler is a compile error, not a method nobody calls.
//
// Each protocol's extension holds an *unavailable* implementation of its requirement. It is
// never called: when a conforming class lacks the method (a typo, a wrong signature), the
// compiler picks it as the witness and prints its message, which names the method and the
// manifest entry. The generated entry checks the other direction (ManifestChecks.swift).

/// Handles `notification`: notifications posted by other services or `host ctl post`.
///
/// List `"notification"` in `servicehost.json`'s `events` and the names under `subscribes`.
public protocol NotificationReceiving: ApplicationService {
    /// Another service (or the host) posted a notification this service subscribes to.
    /// Main thread, after the event during which it was posted.
    func didReceive(_ notification: ServiceNotification)
}

extension NotificationReceiving {
    @available(
        *, unavailable,
        message:
            "NotificationReceiving needs `func didReceive(_ notification: ServiceNotification)` (event \"notification\" in servicehost.json)"
    )
    public func didReceive(_ notification: ServiceNotification) {}
}

/// Handles `didReceiveMemoryWarning`.
public protocol MemoryWarningHandling: ApplicationService {
    /// The system is low on memory: free what you can (caches, buffers). Main thread.
    func didReceiveMemoryWarning()
}

extension MemoryWarningHandling {
    @available(
        *, unavailable,
        message:
            "MemoryWarningHandling needs `func didReceiveMemoryWarning()` (event \"didReceiveMemoryWarning\" in servicehost.json)"
    )
    public func didReceiveMemoryWarning() {}
}

/// Handles `willPresentNotification`: a push while the app is active.
public protocol PushPresenting: ApplicationService {
    /// A push arrived while the app is active: call `completion` exactly once, from any
    /// thread, with how to show it (`[]`: not at all). The host shows the union of every
    /// service's answer, within the notification authorization. Main thread.
    func willPresent(_ notification: PushNotification, completion: PresentationCompletion)
}

extension PushPresenting {
    @available(
        *, unavailable,
        message:
            "PushPresenting needs `func willPresent(_ notification: PushNotification, completion: PresentationCompletion)` (event \"willPresentNotification\" in servicehost.json)"
    )
    public func willPresent(_ notification: PushNotification, completion: PresentationCompletion) {}
}

/// Handles `didReceiveNotificationResponse`: the user acted on a notification.
public protocol NotificationResponseHandling: ApplicationService {
    /// The user tapped, dismissed or chose an action on a notification; also the one
    /// delivery of the push that launched the app (``PushNotification/isFromLaunch``). Call
    /// `completion` exactly once, from any thread, when done. Main thread.
    func didReceive(_ response: NotificationResponse, completion: ResponseCompletion)
}

extension NotificationResponseHandling {
    @available(
        *, unavailable,
        message:
            "NotificationResponseHandling needs `func didReceive(_ response: NotificationResponse, completion: ResponseCompletion)` (event \"didReceiveNotificationResponse\" in servicehost.json)"
    )
    public func didReceive(_ response: NotificationResponse, completion: ResponseCompletion) {}
}

/// Handles `didReceiveRemoteNotification`: a push with `content-available: 1`.
public protocol BackgroundFetching: ApplicationService {
    /// A background fetch: call `completion` exactly once, from any thread, with its
    /// result; the host merges every service's (newData > noData > failed). Main thread.
    func didReceiveRemoteNotification(_ notification: PushNotification, completion: FetchCompletion)
}

extension BackgroundFetching {
    @available(
        *, unavailable,
        message:
            "BackgroundFetching needs `func didReceiveRemoteNotification(_ notification: PushNotification, completion: FetchCompletion)` (event \"didReceiveRemoteNotification\" in servicehost.json)"
    )
    public func didReceiveRemoteNotification(_ notification: PushNotification, completion: FetchCompletion) {}
}

/// Handles `didRegisterForRemoteNotifications`.
public protocol DeviceTokenReceiving: ApplicationService {
    /// The device token arrived (after ``HostContext/registerForRemoteNotifications()``, or
    /// when the host learns one). Main thread.
    func didRegisterForRemoteNotifications(deviceToken: DeviceToken)
}

extension DeviceTokenReceiving {
    @available(
        *, unavailable,
        message:
            "DeviceTokenReceiving needs `func didRegisterForRemoteNotifications(deviceToken: DeviceToken)` (event \"didRegisterForRemoteNotifications\" in servicehost.json)"
    )
    public func didRegisterForRemoteNotifications(deviceToken: DeviceToken) {}
}

/// Handles `didFailToRegisterForRemoteNotifications`.
public protocol DeviceTokenErrorHandling: ApplicationService {
    /// Registering for remote notifications failed; `error` says why. Main thread.
    func didFailToRegisterForRemoteNotifications(error: String)
}

extension DeviceTokenErrorHandling {
    @available(
        *, unavailable,
        message:
            "DeviceTokenErrorHandling needs `func didFailToRegisterForRemoteNotifications(error: String)` (event \"didFailToRegisterForRemoteNotifications\" in servicehost.json)"
    )
    public func didFailToRegisterForRemoteNotifications(error: String) {}
}

/// Handles `openURL`; list the schemes it owns under `urls` to be the only one asked.
public protocol URLHandling: ApplicationService {
    /// Open `url`: return `true` if this service handled it (no later service is asked),
    /// `false` to pass. A URL that launched the app arrives here once more, with
    /// ``OpenURL/isFromLaunch`` set, once the app is active. Main thread.
    func open(_ url: OpenURL) -> Bool
}

extension URLHandling {
    @available(
        *, unavailable,
        message: "URLHandling needs `func open(_ url: OpenURL) -> Bool` (event \"openURL\" in servicehost.json)"
    )
    public func open(_ url: OpenURL) -> Bool { false }
}

/// Handles `performActionForShortcutItem`: a quick action the user chose (UIKit's
/// `application(_:performActionFor:completionHandler:)`); declare the actions under `shortcuts`.
public protocol ShortcutHandling: ApplicationService {
    /// Perform `item`: return `true` if this service handled it (no later service is asked),
    /// `false` if not. Only the services that declare the item's id are asked. An action that
    /// launched the app arrives here once the app is active, with
    /// ``ShortcutItem/isFromLaunch`` set. Main thread.
    func perform(_ item: ShortcutItem) -> Bool
}

extension ShortcutHandling {
    @available(
        *, unavailable,
        message:
            "ShortcutHandling needs `func perform(_ item: ShortcutItem) -> Bool` (event \"performActionForShortcutItem\" in servicehost.json)"
    )
    public func perform(_ item: ShortcutItem) -> Bool { false }
}

/// Handles `continueUserActivity`; list the types it owns under `activities`.
public protocol UserActivityHandling: ApplicationService {
    /// Continue `activity`: return `true` if this service handled it (no later service is
    /// asked), `false` to pass. Main thread.
    func continueUserActivity(_ activity: UserActivity) -> Bool
}

extension UserActivityHandling {
    @available(
        *, unavailable,
        message:
            "UserActivityHandling needs `func continueUserActivity(_ activity: UserActivity) -> Bool` (event \"continueUserActivity\" in servicehost.json)"
    )
    public func continueUserActivity(_ activity: UserActivity) -> Bool { false }
}

/// Handles `didChangeNotificationAuthorization`.
public protocol AuthorizationObserving: ApplicationService {
    /// The notification authorization changed (the user decided, or a
    /// ``HostContext/requestAuthorization(_:)`` was answered): `settings` is the new one.
    /// Main thread.
    func didChangeNotificationAuthorization(_ settings: NotificationSettings)
}

extension AuthorizationObserving {
    @available(
        *, unavailable,
        message:
            "AuthorizationObserving needs `func didChangeNotificationAuthorization(_ settings: NotificationSettings)` (event \"didChangeNotificationAuthorization\" in servicehost.json)"
    )
    public func didChangeNotificationAuthorization(_ settings: NotificationSettings) {}
}

/// Handles `didChangeSettings`: takes a settings change while running, instead of a restart.
public protocol SettingsObserving: ApplicationService {
    /// The service's `settings` in the configuration file changed (a reload picked the edit
    /// up): `old` and `new` are the objects before and after (nil: none, or not valid JSON).
    /// The service keeps running; apply what changed. Main thread.
    func didChangeSettings(from old: JSONValue?, to new: JSONValue?)
}

extension SettingsObserving {
    @available(
        *, unavailable,
        message:
            "SettingsObserving needs `func didChangeSettings(from old: JSONValue?, to new: JSONValue?)` (event \"didChangeSettings\" in servicehost.json)"
    )
    public func didChangeSettings(from old: JSONValue?, to new: JSONValue?) {}
}

/// Handles `configurationForConnecting`: chooses a connecting scene's configuration.
public protocol SceneConfiguring: SceneService {
    /// A scene is connecting: choose its configuration, or return `nil` to let the next
    /// service choose. The first answer in service order wins; without any the scene gets
    /// "default" and the role it asked for (else main). `scene.role` is
    /// ``SceneRole/unspecified`` when the connection asked for none. Main thread.
    func configuration(forConnecting scene: Scene, options: SceneConnectionOptions) -> SceneConfiguration?
}

extension SceneConfiguring {
    @available(
        *, unavailable,
        message:
            "SceneConfiguring needs `func configuration(forConnecting scene: Scene, options: SceneConnectionOptions) -> SceneConfiguration?` (event \"configurationForConnecting\" in servicehost.json)"
    )
    public func configuration(forConnecting scene: Scene, options: SceneConnectionOptions) -> SceneConfiguration? {
        nil
    }
}

/// Handles `sceneOpenURLContexts`: a URL opened in a scene.
public protocol SceneURLHandling: SceneService {
    /// Open `url` in `scene`: return `true` if this service handled it, `false` to pass (an
    /// unclaimed URL falls back to ``URLHandling/open(_:)``). Main thread.
    func scene(_ scene: Scene, open url: OpenURL) -> Bool
}

extension SceneURLHandling {
    @available(
        *, unavailable,
        message:
            "SceneURLHandling needs `func scene(_ scene: Scene, open url: OpenURL) -> Bool` (event \"sceneOpenURLContexts\" in servicehost.json)"
    )
    public func scene(_ scene: Scene, open url: OpenURL) -> Bool { false }
}

/// Handles `sceneContinueUserActivity`: a user activity continued in a scene.
public protocol SceneUserActivityHandling: SceneService {
    /// Continue `activity` in `scene`: return `true` if this service handled it (an
    /// unclaimed one falls back to ``UserActivityHandling/continueUserActivity(_:)``).
    /// Main thread.
    func scene(_ scene: Scene, continue activity: UserActivity) -> Bool
}

extension SceneUserActivityHandling {
    @available(
        *, unavailable,
        message:
            "SceneUserActivityHandling needs `func scene(_ scene: Scene, continue activity: UserActivity) -> Bool` (event \"sceneContinueUserActivity\" in servicehost.json)"
    )
    public func scene(_ scene: Scene, continue activity: UserActivity) -> Bool { false }
}

/// Answers requests from other services (`request`) for the names listed under `answers`
/// in servicehost.json.
public protocol Answering: ApplicationService {
    /// A request for one of this service's names: call `reply` exactly once, from any
    /// thread, within the host's deadline (`--request-timeout`, 5 s by default). Main thread.
    func answer(_ request: ServiceRequest, reply: ReplyCompletion)
}

extension Answering {
    @available(
        *, unavailable,
        message:
            "Answering needs `func answer(_ request: ServiceRequest, reply: ReplyCompletion)` (event \"request\" in servicehost.json)"
    )
    public func answer(_ request: ServiceRequest, reply: ReplyCompletion) {}
}

/// Handles `dependencyWillStop`: a service this one requires is about to stop.
public protocol DependencyStopObserving: ApplicationService {
    /// Service `id` (one this service requires: configuration `requires`, `bindsTo`, `partOf`,
    /// or the manifest's `requires`) stops now: stopped or restarted by request, replaced or
    /// removed by a reload; or it stopped on its own (its worker crashed: told after the fact).
    /// Stop using it. Main thread.
    func dependencyWillStop(_ id: String, version: String)
}

extension DependencyStopObserving {
    @available(
        *, unavailable,
        message:
            "DependencyStopObserving needs `func dependencyWillStop(_ id: String, version: String)` (event \"dependencyWillStop\" in servicehost.json)"
    )
    public func dependencyWillStop(_ id: String, version: String) {}
}

/// Handles `dependencyDidStart`: a service this one requires started again.
public protocol DependencyStartObserving: ApplicationService {
    /// Service `id`, at `version`, runs again (started or restarted, a reload's new version, a
    /// new worker), caught up to the app's state: use it again. Main thread.
    func dependencyDidStart(_ id: String, version: String)
}

extension DependencyStartObserving {
    @available(
        *, unavailable,
        message:
            "DependencyStartObserving needs `func dependencyDidStart(_ id: String, version: String)` (event \"dependencyDidStart\" in servicehost.json)"
    )
    public func dependencyDidStart(_ id: String, version: String) {}
}

/// Handles `willReload`: hands its state over to the instance that replaces it (a reload's new
/// version, a restart by request, its new worker), which finds it in
/// ``LaunchOptions/restoredState`` (Erlang/OTP's `code_change`, CLAP's state save and load).
///
/// ```swift
/// func willReload() -> [UInt8]? { Array(JSONValue.object(["seen": .number(Double(seen))]).serialized.utf8) }
/// ```
public protocol StateHandingOver: ApplicationService {
    /// The service is about to be replaced: return the state its replacement should start from
    /// (any bytes, at most 1 MiB, ``RestoredState/largest``; a larger one is refused and logged,
    /// and the replacement starts without one), or nil for none. It is taken down right after,
    /// as before. Main thread.
    func willReload() -> [UInt8]?
}

extension StateHandingOver {
    @available(
        *, unavailable,
        message: "StateHandingOver needs `func willReload() -> [UInt8]?` (event \"willReload\" in servicehost.json)"
    )
    public func willReload() -> [UInt8]? { nil }
}

/// Handles `protectedDataWillBecomeUnavailable`: the user's session is about to lock (UIKit's
/// `applicationProtectedDataWillBecomeUnavailable(_:)`; on Linux logind's `Lock` for the host's session).
public protocol ProtectedDataUnavailableObserving: ApplicationService {
    /// The session is locking: close what holds the user's secrets (the app resigns active
    /// next). Main thread.
    func protectedDataWillBecomeUnavailable()
}

extension ProtectedDataUnavailableObserving {
    @available(
        *, unavailable,
        message:
            "ProtectedDataUnavailableObserving needs `func protectedDataWillBecomeUnavailable()` (event \"protectedDataWillBecomeUnavailable\" in servicehost.json)"
    )
    public func protectedDataWillBecomeUnavailable() {}
}

/// Handles `protectedDataDidBecomeAvailable`: the user's session was unlocked (UIKit's
/// `applicationProtectedDataDidBecomeAvailable(_:)`; on Linux logind's `Unlock`).
public protocol ProtectedDataAvailableObserving: ApplicationService {
    /// The session is unlocked: the user's secrets may be read again (the app becomes active
    /// next). Main thread.
    func protectedDataDidBecomeAvailable()
}

extension ProtectedDataAvailableObserving {
    @available(
        *, unavailable,
        message:
            "ProtectedDataAvailableObserving needs `func protectedDataDidBecomeAvailable()` (event \"protectedDataDidBecomeAvailable\" in servicehost.json)"
    )
    public func protectedDataDidBecomeAvailable() {}
}

/// Handles `significantTimeChange`: the wall clock was set, the time zone changed, or local
/// midnight passed (UIKit's `applicationSignificantTimeChange(_:)`).
public protocol SignificantTimeChangeObserving: ApplicationService {
    /// Read the clock and the time zone again (dates shown, timers set for a wall-clock
    /// time). Main thread.
    func significantTimeChange()
}

extension SignificantTimeChangeObserving {
    @available(
        *, unavailable,
        message:
            "SignificantTimeChangeObserving needs `func significantTimeChange()` (event \"significantTimeChange\" in servicehost.json)"
    )
    public func significantTimeChange() {}
}
