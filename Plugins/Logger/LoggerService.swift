import ServiceKit

/// Logs every lifecycle event and notification it receives through the host.
///
/// Settings: `{"enabled": false}` makes it decline launching (answers SH_FALSE).
final class LoggerService: ApplicationService {
    func willFinishLaunching(_ options: LaunchOptions) -> Bool {
        host.log(.info, "willFinishLaunching (\(describe(options)))")
        return options.settings?["enabled"]?.boolValue ?? true
    }

    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        host.log(.info, "didFinishLaunching (\(describe(options)))")
        return options.settings?["enabled"]?.boolValue ?? true
    }

    func didBecomeActive() { logEvent("didBecomeActive") }
    func willResignActive() { logEvent("willResignActive") }
    func didEnterBackground() { logEvent("didEnterBackground") }
    func willEnterForeground() { logEvent("willEnterForeground") }
    func willTerminate() { logEvent("willTerminate") }

    func didReceive(_ notification: ServiceNotification) {
        host.log(.info, "notification \(notification.name) from \(notification.sender): \(notification.json ?? "no payload")")
    }

    private func logEvent(_ name: String) {
        host.log(.info, "\(name) (app state: \(host.appState))")
    }

    private func describe(_ options: LaunchOptions) -> String {
        if let error = options.settingsError { host.log(.warn, "settings are not valid JSON: \(error)") }
        return "firstHostLaunch: \(options.isFirstHostLaunch), firstServiceLaunch: \(options.isFirstServiceLaunch), "
            + "restart: \(options.isRestart), settings: \(options.settings?.serialized ?? "none")"
    }
}
