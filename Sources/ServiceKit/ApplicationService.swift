/// A service the ServiceHost host runs: an application delegate for one
/// part of the app, told about the app's lifecycle, pushes, URLs, user
/// activities and notifications from other services.
///
/// Requirements (each has a default, so implement only what you need; the host
/// sends only the events your `servicehost.json` lists under `events`, named in
/// parentheses):
/// - ``willFinishLaunching(_:)`` → `Bool` (default `true`) (`willFinishLaunching`)
/// - ``didFinishLaunching(_:)`` → `Bool` (default `true`) (`didFinishLaunching`)
/// - ``didBecomeActive()``, ``willResignActive()``, ``didEnterBackground()``,
///   ``willEnterForeground()``, ``willTerminate()`` (the events of the same names)
/// - ``didReceive(_:)-(ServiceNotification)`` (`notification`)
/// - ``didReceiveMemoryWarning()`` (`didReceiveMemoryWarning`)
/// - ``willPresent(_:)`` → ``PresentationOptions`` (default `[]`), or
///   ``willPresent(_:completion:)`` to answer later (`willPresentNotification`)
/// - ``didReceive(_:)-(NotificationResponse)``, or ``didReceive(_:completion:)``
///   to finish later (`didReceiveNotificationResponse`)
/// - ``didReceiveRemoteNotification(_:completion:)`` (default: completes with
///   ``FetchResult/noData``) (`didReceiveRemoteNotification`)
/// - ``didRegisterForRemoteNotifications(deviceToken:)``,
///   ``didFailToRegisterForRemoteNotifications(error:)`` (the events of the same names)
/// - ``open(_:)`` → `Bool` (default `false`: not mine) (`openURL`)
/// - ``continueUserActivity(_:)`` → `Bool` (default `false`) (`continueUserActivity`)
///
/// Every method is called on the host's main thread, one at a time, never
/// re-entrantly. The SDK creates one instance per service, once, when the
/// host attaches it (just before `willFinishLaunching`), through the `make`
/// closure of the generated entry; the instance lives until the process exits.
/// Reach the host through ``host`` from `willFinishLaunching` on (not in
/// `init`). Do not declare a member named `host` yourself.
///
/// Events with a completion (``FetchCompletion``, ``PresentationCompletion``,
/// ``ResponseCompletion``): implement either the plain method or the one taking
/// a completion. The completion variant's default calls the plain method and
/// completes at once. If you implement the completion variant, call the
/// completion exactly once, from any thread, now or later: the host logs a
/// second call and ignores it, and answers for you when its deadline passes.
///
/// Answers that claim (`open(_:)`, `continueUserActivity(_:)`): return `true`
/// only for what you handle; the host then asks no later service.
///
/// ```swift
/// final class LoggerService: ApplicationService {
///     func didBecomeActive() { host.log(.info, "didBecomeActive") }
/// }
/// ```
public protocol ApplicationService: AnyObject {
    /// The app is launching; return `false` to report that the service
    /// declines (the host answers `SH_FALSE` and decides what follows).
    func willFinishLaunching(_ options: LaunchOptions) -> Bool
    /// The app has launched; return `false` to report that the service declines.
    func didFinishLaunching(_ options: LaunchOptions) -> Bool
    /// The app became active (foreground, receiving events).
    func didBecomeActive()
    /// The app is about to become inactive.
    func willResignActive()
    /// The app entered the background.
    func didEnterBackground()
    /// The app is about to enter the foreground.
    func willEnterForeground()
    /// The app is terminating: the last event the service receives.
    func willTerminate()
    /// Another service (or the host) posted a notification.
    func didReceive(_ notification: ServiceNotification)

    /// The system is low on memory: free what you can (caches, buffers).
    func didReceiveMemoryWarning()

    /// A push arrived while the app is active: answer how to show it (`[]`: not at all).
    /// The host shows the union of every service's answer.
    func willPresent(_ notification: PushNotification) -> PresentationOptions
    /// A push arrived while the app is active; call `completion` exactly once with how
    /// to show it. The default calls ``willPresent(_:)`` and completes with its answer.
    func willPresent(_ notification: PushNotification, completion: PresentationCompletion)

    /// The user acted on a notification (tapped it, dismissed it or chose an action);
    /// also the one delivery of the push that launched the app, with
    /// ``PushNotification/isFromLaunch`` set, once the app is active.
    func didReceive(_ response: NotificationResponse)
    /// The same as ``didReceive(_:)-(NotificationResponse)``, finished by calling
    /// `completion` exactly once. The default calls that method and completes.
    func didReceive(_ response: NotificationResponse, completion: ResponseCompletion)

    /// A push with `content-available: 1` asks for a background fetch: call
    /// `completion` exactly once, from any thread, with its result. The default
    /// completes with ``FetchResult/noData``.
    func didReceiveRemoteNotification(_ notification: PushNotification, completion: FetchCompletion)

    /// The device token for remote notifications arrived (after
    /// ``HostContext/registerForRemoteNotifications()``, or when the host learns one).
    func didRegisterForRemoteNotifications(deviceToken: DeviceToken)
    /// Registering for remote notifications failed; `error` says why.
    func didFailToRegisterForRemoteNotifications(error: String)

    /// Open `url`: return `true` if this service handled it (no later service is
    /// asked), `false` to pass. A URL that launched the app arrives once more here,
    /// with ``OpenURL/isFromLaunch`` set, once the app is active.
    func open(_ url: OpenURL) -> Bool
    /// Continue `activity`: return `true` if this service handled it (no later
    /// service is asked), `false` to pass.
    func continueUserActivity(_ activity: UserActivity) -> Bool
    /// The notification authorization changed (the user toggled it, or a
    /// ``HostContext/requestAuthorization(_:)`` was answered): `settings` is the new one.
    func didChangeNotificationAuthorization(_ settings: NotificationSettings)
}

extension ApplicationService {
    /// Does nothing and returns `true`.
    public func willFinishLaunching(_ options: LaunchOptions) -> Bool { true }
    /// Does nothing and returns `true`.
    public func didFinishLaunching(_ options: LaunchOptions) -> Bool { true }
    /// Does nothing.
    public func didBecomeActive() {}
    /// Does nothing.
    public func willResignActive() {}
    /// Does nothing.
    public func didEnterBackground() {}
    /// Does nothing.
    public func willEnterForeground() {}
    /// Does nothing.
    public func willTerminate() {}
    /// Does nothing.
    public func didReceive(_ notification: ServiceNotification) {}
    /// Does nothing.
    public func didReceiveMemoryWarning() {}
    /// Returns `[]`: do not present.
    public func willPresent(_ notification: PushNotification) -> PresentationOptions { [] }
    /// Completes with ``willPresent(_:)``'s answer.
    public func willPresent(_ notification: PushNotification, completion: PresentationCompletion) {
        completion(willPresent(notification))
    }
    /// Does nothing.
    public func didReceive(_ response: NotificationResponse) {}
    /// Calls ``didReceive(_:)-(NotificationResponse)``, then completes.
    public func didReceive(_ response: NotificationResponse, completion: ResponseCompletion) {
        didReceive(response)
        completion()
    }
    /// Completes with ``FetchResult/noData``.
    public func didReceiveRemoteNotification(_ notification: PushNotification, completion: FetchCompletion) {
        completion(.noData)
    }
    /// Does nothing.
    public func didRegisterForRemoteNotifications(deviceToken: DeviceToken) {}
    /// Does nothing.
    public func didFailToRegisterForRemoteNotifications(error: String) {}
    /// Returns `false`: not this service's URL.
    public func open(_ url: OpenURL) -> Bool { false }
    /// Returns `false`: not this service's activity.
    public func continueUserActivity(_ activity: UserActivity) -> Bool { false }
    /// Does nothing.
    public func didChangeNotificationAuthorization(_ settings: NotificationSettings) {}

    /// The host this service is attached to (see ``HostContext``).
    ///
    /// Before attach (in `init`) it is a detached context: `log` goes to
    /// standard error and the other calls throw ``HostError/notAttached``.
    public var host: HostContext {
        ServicePlugin.host(for: self)
    }
}
