/// A service the ServiceHost host runs: an application delegate for one
/// part of the app, told about the app's lifecycle and about notifications.
///
/// Requirements (each has a default that does nothing, so implement only
/// what you need; the host sends only the events your `servicehost.json`
/// lists under `events`):
/// - ``willFinishLaunching(_:)`` → `Bool` (default `true`)
/// - ``didFinishLaunching(_:)`` → `Bool` (default `true`)
/// - ``didBecomeActive()``
/// - ``willResignActive()``
/// - ``didEnterBackground()``
/// - ``willEnterForeground()``
/// - ``willTerminate()``
/// - ``didReceive(_:)``
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
    /// Another service (or the host) posted a notification.
    func didReceive(_ notification: ServiceNotification)
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

    /// The host this service is attached to (see ``HostContext``).
    ///
    /// Before attach (in `init`) it is a detached context: `log` goes to
    /// standard error and the other calls throw ``HostError/notAttached``.
    public var host: HostContext {
        ServicePlugin.host(for: self)
    }
}
