import ServiceKit

/// Logs every event it receives through the host: the lifecycle, notifications from
/// other services (it subscribes to every name), memory warnings, the session's lock and
/// unlock, significant time changes, pushes, device
/// tokens, URLs, user activities, quick actions nobody declares and every scene's events (`scene main
/// sceneDidBecomeActive (foregroundActive)`).
///
/// It only watches: it answers `[]` to willPresentNotification (so it never changes
/// how a push is shown), `false` to openURL, continueUserActivity, their scene versions and
/// performActionForShortcutItem (so it never claims one), and chooses no scene configuration. It does not take didReceiveRemoteNotification: every answer there
/// counts in the host's merge, and an observer's "no data" would turn every service's
/// "failed" into "no data".
///
/// Settings: `{"enabled": false}` makes it decline launching (answers SH_FALSE); `"level"`
/// (`"error"`, `"warn"`, `"info"`, the default, or `"debug"`) is the least severe level it writes
/// (its event lines are info: `"warn"` silences them). A change of its settings while it runs (a
/// reload, `host ctl configure`) is applied live (didChangeSettings), not a restart.
final class LoggerService: NotificationReceiving, MemoryWarningHandling, PushPresenting, NotificationResponseHandling,
    DeviceTokenReceiving, DeviceTokenErrorHandling, URLHandling, UserActivityHandling, SceneURLHandling,
    SceneUserActivityHandling, SettingsObserving, ShortcutHandling, ProtectedDataUnavailableObserving,
    ProtectedDataAvailableObserving, SignificantTimeChangeObserving
{
    /// The least severe level it writes (`"level"` in its settings).
    private var level = LogLevel.info

    /// Writes `message` at `severity` when the `"level"` setting lets it through.
    private func write(_ message: String, at severity: LogLevel = .info) {
        if severity <= level { host.log(severity, message) }
    }

    /// The level `settings` name; an unknown one is logged and leaves `info`.
    private func applyLevel(_ settings: JSONValue?) {
        guard let name = settings?["level"]?.stringValue else {
            level = .info
            return
        }
        guard let named = LogLevel(name: name) else {
            level = .info
            return host.log(.warn, "settings: unknown level \"\(name)\" (error, warn, info or debug); using info")
        }
        level = named
    }

    func willFinishLaunching(_ options: LaunchOptions) -> Bool {
        applyLevel(options.settings)
        write("willFinishLaunching (\(describe(options)))")
        return options.settings?["enabled"]?.boolValue ?? true
    }

    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        write("didFinishLaunching (\(describe(options)))")
        return options.settings?["enabled"]?.boolValue ?? true
    }

    func didBecomeActive() { logEvent("didBecomeActive") }
    func willResignActive() { logEvent("willResignActive") }
    func didEnterBackground() { logEvent("didEnterBackground") }
    func willEnterForeground() { logEvent("willEnterForeground") }
    func willTerminate() { logEvent("willTerminate") }
    func didReceiveMemoryWarning() { logEvent("didReceiveMemoryWarning") }
    func protectedDataWillBecomeUnavailable() { logEvent("protectedDataWillBecomeUnavailable") }
    func protectedDataDidBecomeAvailable() { logEvent("protectedDataDidBecomeAvailable") }
    func significantTimeChange() { logEvent("significantTimeChange") }

    func didChangeSettings(from old: JSONValue?, to new: JSONValue?) {
        applyLevel(new)
        // Logged whatever the new level: the change itself is worth a line.
        host.log(.info, "didChangeSettings from \(old?.serialized ?? "none") to \(new?.serialized ?? "none")")
    }

    func didReceive(_ notification: ServiceNotification) {
        write("notification \(notification.name) from \(notification.sender): \(notification.json ?? "no payload")")
    }

    func willPresent(_ notification: PushNotification, completion: PresentationCompletion) {
        write("willPresentNotification\(launch(notification.isFromLaunch)): \(trimmed(notification.json))")
        completion([])
    }

    func didReceive(_ response: NotificationResponse, completion: ResponseCompletion) {
        write(
            "didReceiveNotificationResponse \(response.actionIdentifier)"
                + "\(launch(response.notification.isFromLaunch)): \(trimmed(response.notification.json))")
        completion()
    }

    func didRegisterForRemoteNotifications(deviceToken: DeviceToken) {
        write("didRegisterForRemoteNotifications \(deviceToken.hex)")
    }

    func didFailToRegisterForRemoteNotifications(error: String) {
        write("didFailToRegisterForRemoteNotifications: \(error)")
    }

    func open(_ url: OpenURL) -> Bool {
        write("openURL \(url.string)\(launch(url.isFromLaunch))")
        return false
    }

    // A service that declares no quick action hears only the ids no service declares.
    func perform(_ item: ShortcutItem) -> Bool {
        write("performActionForShortcutItem \(item.id)\(launch(item.isFromLaunch))")
        return false
    }

    func continueUserActivity(_ activity: UserActivity) -> Bool {
        let userInfo = activity.userInfoJSON.map { ", userInfo: \(trimmed($0))" } ?? ""
        let webpage = activity.webpageURL.map { ", webpageURL: \($0)" } ?? ""
        write("continueUserActivity \(activity.type)\(launch(activity.isFromLaunch))\(webpage)\(userInfo)")
        return false
    }

    func scene(_ scene: Scene, willConnectWith options: SceneConnectionOptions) {
        let urls = options.urlContexts.map { " url: \($0.string)" }.joined()
        let activities = options.userActivities.map { " userActivity: \($0.type)" }.joined()
        write(
            "scene \(scene.name) sceneWillConnect (role \(scene.role), configuration "
                + "\(scene.configurationName)\(options.isFromLaunch ? ", launch" : ""))\(urls)\(activities)")
    }

    func sceneWillEnterForeground(_ scene: Scene) { logScene(scene, "sceneWillEnterForeground") }
    func sceneDidBecomeActive(_ scene: Scene) { logScene(scene, "sceneDidBecomeActive") }
    func sceneWillResignActive(_ scene: Scene) { logScene(scene, "sceneWillResignActive") }
    func sceneDidEnterBackground(_ scene: Scene) { logScene(scene, "sceneDidEnterBackground") }
    func sceneDidDisconnect(_ scene: Scene) { logScene(scene, "sceneDidDisconnect") }

    func scene(_ scene: Scene, open url: OpenURL) -> Bool {
        write("scene \(scene.name) sceneOpenURLContexts \(url.string)\(connection(url.isFromConnection))")
        return false
    }

    func scene(_ scene: Scene, continue activity: UserActivity) -> Bool {
        write(
            "scene \(scene.name) sceneContinueUserActivity \(activity.type)"
                + connection(activity.isFromConnection))
        return false
    }

    private func logScene(_ scene: Scene, _ name: String) {
        write("scene \(scene.name) \(name) (\(scene.state))")
    }

    private func connection(_ isFromConnection: Bool) -> String {
        isFromConnection ? " (connection)" : ""
    }

    private func logEvent(_ name: String) {
        write("\(name) (app state: \(host.appState))")
    }

    /// JSON text without the whitespace around it (a payload file's final newline).
    private func trimmed(_ json: String) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\r\n" || $0 == "\r" || $0 == "\t" }
        var text = Substring(json)
        while let first = text.first, isSpace(first) { text.removeFirst() }
        while let last = text.last, isSpace(last) { text.removeLast() }
        return String(text)
    }

    private func launch(_ isFromLaunch: Bool) -> String {
        isFromLaunch ? " (launch)" : ""
    }

    private func describe(_ options: LaunchOptions) -> String {
        if let error = options.settingsError { host.log(.warn, "settings are not valid JSON: \(error)") }
        var text =
            "firstHostLaunch: \(options.isFirstHostLaunch), "
            + "firstServiceLaunch: \(options.isFirstServiceLaunch), "
            + "restart: \(options.isRestart), settings: \(options.settings?.serialized ?? "none")"
        // Only when present, so the common line stays as it was.
        if let push = options.notification { text += ", notification: \(trimmed(push.json))" }
        if let url = options.url { text += ", url: \(url.string)" }
        if let activity = options.userActivity { text += ", userActivity: \(activity.type)" }
        return text
    }
}
