/// A service that also follows the app's scenes (UIKit's `UISceneDelegate` beside the
/// application delegate): a phone window, a CarPlay screen, an external display, each with
/// its own lifecycle.
///
/// Requirements: a scene's lifecycle, each with a no-op default, so implement only what
/// you need (list the events in `servicehost.json`; the host sends only those):
/// - ``scene(_:willConnectWith:)`` (`sceneWillConnect`)
/// - ``sceneWillEnterForeground(_:)``, ``sceneDidBecomeActive(_:)``,
///   ``sceneWillResignActive(_:)``, ``sceneDidEnterBackground(_:)``,
///   ``sceneDidDisconnect(_:)`` (the events of the same names)
/// - ``stateRestorationActivity(for:)`` (default `nil`: save nothing)
///
/// Choosing a configuration and handling URLs and activities in a scene are capabilities
/// without defaults, as for the app: ``SceneConfiguring`` (`configurationForConnecting`),
/// ``SceneURLHandling`` (`sceneOpenURLContexts`), ``SceneUserActivityHandling``
/// (`sceneContinueUserActivity`).
///
/// The app's own events keep coming through ``ApplicationService``: once scenes are in use
/// the host derives them from the scenes (didBecomeActive right after the first
/// sceneDidBecomeActive, didEnterBackground right after the last sceneDidEnterBackground).
///
/// Connection options need no replay: after the scene became active, each URL context and
/// user activity arrives once through ``SceneURLHandling/scene(_:open:)`` or
/// ``SceneUserActivityHandling/scene(_:continue:)`` with `isFromConnection` set. A URL or
/// activity no scene handler claims goes to ``URLHandling/open(_:)`` and
/// ``UserActivityHandling/continueUserActivity(_:)``.
///
/// To hear only some roles, list them under `sceneRoles` in `servicehost.json`
/// (`["car"]`); without it a service hears every scene. Every method is called on the
/// host's main thread, one at a time.
///
/// ```swift
/// final class CarDisplayService: SceneConfiguring {
///     func configuration(forConnecting scene: Scene, options: SceneConnectionOptions) -> SceneConfiguration? {
///         scene.role == .car ? SceneConfiguration(name: "car") : nil
///     }
///     func sceneDidBecomeActive(_ scene: Scene) { host.log(.info, "\(scene.name) is active") }
/// }
/// ```
public protocol SceneService: ApplicationService {
    /// The scene is about to connect with `options` (its configuration is chosen).
    func scene(_ scene: Scene, willConnectWith options: SceneConnectionOptions)
    /// The scene is about to come on screen.
    func sceneWillEnterForeground(_ scene: Scene)
    /// The scene became active.
    func sceneDidBecomeActive(_ scene: Scene)
    /// The scene is about to become inactive.
    func sceneWillResignActive(_ scene: Scene)
    /// The scene went off screen.
    func sceneDidEnterBackground(_ scene: Scene)
    /// The scene disconnected: release what you keep for it. Its last event.
    func sceneDidDisconnect(_ scene: Scene)
    /// The activity to restore the scene from when a scene of its name connects again, even
    /// after a restart (UIKit's `stateRestorationActivity(for:)`): asked right after
    /// `sceneDidEnterBackground(_:)` and `sceneDidDisconnect(_:)`; nil keeps what was saved.
    /// The next connection finds it in ``SceneConnectionOptions/restorationActivity``.
    func stateRestorationActivity(for scene: Scene) -> UserActivity?
}

extension SceneService {
    /// Does nothing.
    public func scene(_ scene: Scene, willConnectWith options: SceneConnectionOptions) {}
    /// Does nothing.
    public func sceneWillEnterForeground(_ scene: Scene) {}
    /// Does nothing.
    public func sceneDidBecomeActive(_ scene: Scene) {}
    /// Does nothing.
    public func sceneWillResignActive(_ scene: Scene) {}
    /// Does nothing.
    public func sceneDidEnterBackground(_ scene: Scene) {}
    /// Does nothing.
    public func sceneDidDisconnect(_ scene: Scene) {}
    /// Saves nothing.
    public func stateRestorationActivity(for scene: Scene) -> UserActivity? { nil }
}
