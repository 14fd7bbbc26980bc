import ServiceKit

/// Seed 000's PushController: acts on a push according to the app's state.
///
/// - Launched by a push: the push is in the launch options; it is held until the app
///   is active, and routed when the host delivers it again as a notification response
///   with `isFromLaunch` set: `push: routing <route> (launch)`.
/// - A response (the user tapped a notification) otherwise, while inactive or in the
///   background (or active): routed at once, `push: routing <route>`; a dismissal only
///   logs `push: dismissed <route>`.
/// - A push while the app is active: an in-app banner line,
///   `push: banner "<title>: <body>"`, and the answer banner, list and sound.
/// - A background fetch (`content-available: 1`): `push: background fetch`, then the
///   result named by the custom key `"fetch"`.
/// - Asks for notification authorization (alert, sound, badge) in didFinishLaunching, as
///   seed 002's app does, and logs the answer: `push: authorization <status>`; denied adds
///   `: open the settings to turn notifications on` (the seed's pushEnable check). A later
///   change (`host ctl authorization`) logs the same line.
/// - Registers for remote notifications in didFinishLaunching and logs the token:
///   `push: device token <hex>` (or `push: registration failed: <error>`, a warning).
///
/// The route is the custom key `"route"` (e.g. `"myapp://item/42"`), else
/// `aps.category`, else `"home"`. Routing a tapped push opens its screen (seed 002: "a push
/// that opens a specific screen"): it posts `route.open` with `{"url": ROUTE, "source":
/// "push"}` on the bus, which DeepLinks handles as it handles a URL.
///
/// Test hooks, through the custom key `"fetch"` of a background fetch:
/// `"new"` completes with newData, `"fail"` with failed, anything else (or none) with
/// noData; `"hang"` never completes (to exercise the host's `--fetch-timeout`) and
/// `"twice"` completes with newData twice (to exercise the host's double-completion
/// log line).
final class PushNotificationsService: AuthorizationObserving, NotificationResponseHandling, PushPresenting,
    BackgroundFetching, DeviceTokenReceiving, DeviceTokenErrorHandling
{
    /// The push that launched the app, until it is routed. Main thread only.
    private var launchPush: PushNotification?
    /// Whether `launchPush` was delivered again and waits only for the app to be active.
    private var launchPushDelivered = false
    /// The authorization last logged, so a request's answer and its change event log once.
    private var loggedAuthorization: AuthorizationStatus?

    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        // A background push woke the app: it arrives as a background fetch, nothing to hold.
        if let push = options.notification, !push.aps.contentAvailable {
            launchPush = push
            host.log(.info, "push: launched by a notification; holding it until the app is active")
        }
        do {
            logAuthorization(try host.requestAuthorization([.alert, .sound, .badge]))
        } catch {
            host.log(.warn, "push: cannot ask for notification authorization: \(error)")
        }
        do {
            try host.registerForRemoteNotifications()
        } catch {
            host.log(.warn, "push: cannot register for remote notifications: \(error)")
        }
        return true
    }

    func didChangeNotificationAuthorization(_ settings: NotificationSettings) {
        logAuthorization(settings.status)
    }

    private func logAuthorization(_ status: AuthorizationStatus) {
        guard status != loggedAuthorization else { return }
        loggedAuthorization = status
        host.log(
            .info,
            "push: authorization \(status.name)"
                + (status == .denied ? ": open the settings to turn notifications on" : ""))
    }

    func didBecomeActive() {
        if launchPushDelivered, let push = launchPush { routeLaunch(push) }
    }

    func didReceive(_ response: NotificationResponse, completion: ResponseCompletion) {
        defer { completion() }
        let push = response.notification
        if push.isFromLaunch {
            // The launch push, delivered once more now that the app is (normally) active.
            launchPush = push
            launchPushDelivered = true
            if host.appState == .active { routeLaunch(push) }
            return
        }
        if response.isDismissAction {
            host.log(.info, "push: dismissed \(route(of: push))")
        } else {
            open(route(of: push), suffix: "")
        }
    }

    func willPresent(_ notification: PushNotification, completion: PresentationCompletion) {
        host.log(.info, "push: banner \"\(bannerText(notification))\"")
        completion([.banner, .list, .sound])
    }

    func didReceiveRemoteNotification(_ notification: PushNotification, completion: FetchCompletion) {
        host.log(.info, "push: background fetch")
        switch notification["fetch"]?.stringValue {
        case "new": completion(.newData)
        case "fail": completion(.failed)
        case "hang": break  // test hook: never completes; the host's deadline answers
        case "twice":  // test hook: the host ignores and logs the second call
            completion(.newData)
            completion(.newData)
        default: completion(.noData)
        }
    }

    func didRegisterForRemoteNotifications(deviceToken: DeviceToken) {
        host.log(.info, "push: device token \(deviceToken.hex)")
    }

    func didFailToRegisterForRemoteNotifications(error: String) {
        host.log(.warn, "push: registration failed: \(error)")
    }

    private func routeLaunch(_ push: PushNotification) {
        launchPush = nil
        launchPushDelivered = false
        open(route(of: push), suffix: " (launch)")
    }

    /// Hands the route to whoever opens screens (DeepLinks) through the bus.
    private func open(_ route: String, suffix: String) {
        host.log(.info, "push: routing \(route)\(suffix)")
        do {
            try host.post("route.open", payload: ["url": .string(route), "source": .string("push")])
        } catch {
            host.log(.warn, "push: cannot hand \(route) on: \(error)")
        }
    }

    /// The custom key "route", else aps.category, else "home".
    private func route(of push: PushNotification) -> String {
        push["route"]?.stringValue ?? push.aps.category ?? "home"
    }

    /// "<title>: <body>", or whichever of the two the alert has.
    private func bannerText(_ push: PushNotification) -> String {
        let aps = push.aps
        return [aps.title, aps.body].compactMap { $0 }.joined(separator: ": ")
    }
}
