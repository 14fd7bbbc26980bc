/// A service the ServiceHost host runs: an application delegate for one
/// part of the app, told about the app's lifecycle, and, through the capability
/// protocols it adopts, about pushes, URLs, user activities and notifications.
///
/// Requirements: the seven lifecycle events, each with a no-op default (return `true` for
/// the launch events), so implement only those you need, as the AppLifecycleMediator's
/// optional listeners. The host sends an event only when `servicehost.json` lists it
/// (`"lifecycle"` lists all seven):
/// - ``willFinishLaunching(_:)`` → `Bool`, ``didFinishLaunching(_:)`` → `Bool`
/// - ``didBecomeActive()``, ``willResignActive()``, ``didEnterBackground()``,
///   ``willEnterForeground()``, ``willTerminate()``
///
/// Every other event has a capability protocol without a default: ``NotificationReceiving``,
/// ``MemoryWarningHandling``, ``PushPresenting``, ``NotificationResponseHandling``,
/// ``BackgroundFetching``, ``DeviceTokenReceiving``, ``DeviceTokenErrorHandling``,
/// ``URLHandling``, ``UserActivityHandling``, ``AuthorizationObserving``, and for scenes
/// ``SceneConfiguring``, ``SceneURLHandling``, ``SceneUserActivityHandling``. Adopt the one
/// for each such event your manifest lists. The build fails, naming the method and the
/// manifest, when a listed event's protocol is not adopted or its method is misspelled, and
/// when an adopted protocol's event is not listed: a typo never compiles into a handler
/// nobody calls.
///
/// Every method is called on the host's main thread, one at a time, never
/// re-entrantly. The SDK creates one instance per service, once, when the
/// host attaches it (just before `willFinishLaunching`), through the `make`
/// closure of the generated entry; the instance lives until the process exits.
/// Reach the host through ``host`` from `willFinishLaunching` on (not in
/// `init`). Do not declare a member named `host` yourself.
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

    /// The host this service is attached to (see ``HostContext``).
    ///
    /// Before attach (in `init`) it is a detached context: `log` goes to
    /// standard error and the other calls throw ``HostError/notAttached``.
    public var host: HostContext {
        ServicePlugin.host(for: self)
    }
}
