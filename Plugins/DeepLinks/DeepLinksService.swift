import ServiceKit

/// Owns `myapp://` URLs and the `dev.servicehost.view-item` user activity, and logs
/// the screen it would open.
///
/// Routes (the URL's host, then its path segments):
/// - `myapp://item/<id>` → `deeplinks: open item <id>`
/// - `myapp://profile/<name>` → `deeplinks: open profile <name>`
/// - `myapp://settings` → `deeplinks: open settings`
/// - any other `myapp` URL → `deeplinks: no route for <url>`, and passes (false)
///
/// The activity `dev.servicehost.view-item` with userInfo `{"item": 42}` (or, without
/// one, a web page URL ending in `/item/42`) → `deeplinks: continue item 42`; without an
/// item → `deeplinks: no route for activity <type>`, and passes. A URL or activity that launched the app, delivered once more
/// after the app became active, gets ` (launch)` at the end of its line.
///
/// The quick action `compose` ("New entry", `host action compose`) → `deeplinks: open compose`,
/// with ` (launch)` when it launched the app.
///
/// Other services hand it routes on the bus: `route.open` with `{"url": URL, "source":
/// NAME}` opens the URL as above, with ` (NAME)` at the end of its line (PushNotifications
/// sends a tapped push's route this way).
final class DeepLinksService: URLHandling, UserActivityHandling, NotificationReceiving, ShortcutHandling {
    func open(_ url: OpenURL) -> Bool { open(url, suffix: url.isFromLaunch ? " (launch)" : "") }

    func perform(_ item: ShortcutItem) -> Bool {
        guard item.id == "compose" else { return false }
        host.log(.info, "deeplinks: open compose\(item.isFromLaunch ? " (launch)" : "")")
        return true
    }

    func didReceive(_ notification: ServiceNotification) {
        guard notification.name == "route.open" else { return }
        let source = notification.payload?["source"]?.stringValue ?? notification.sender
        guard let text = notification.payload?["url"]?.stringValue, let url = OpenURL(text) else {
            host.log(
                .info,
                "deeplinks: no route for \(notification.payload?["url"]?.stringValue ?? "a route.open without a url") (\(source))"
            )
            return
        }
        _ = open(url, suffix: " (\(source))")
    }

    private func open(_ url: OpenURL, suffix: String) -> Bool {
        guard url.scheme == "myapp", let screen = screen(for: url) else {
            host.log(.info, "deeplinks: no route for \(url.string)\(suffix)")
            return false
        }
        host.log(.info, "deeplinks: open \(screen)\(suffix)")
        return true
    }

    func continueUserActivity(_ activity: UserActivity) -> Bool {
        guard activity.type == "dev.servicehost.view-item",
            let item = itemID(activity.userInfo?["item"]) ?? itemID(webpage: activity.webpageURL)
        else {
            host.log(.info, "deeplinks: no route for activity \(activity.type)")
            return false
        }
        host.log(.info, "deeplinks: continue item \(item)\(activity.isFromLaunch ? " (launch)" : "")")
        return true
    }

    /// "item 42", "profile ana", "settings", or nil when the URL names no screen.
    private func screen(for url: OpenURL) -> String? {
        // myapp://item/42 has host "item"; myapp:item/42 has it as a path segment.
        let segments = (url.host.isEmpty ? [] : [url.host]) + url.pathComponents
        switch segments.first {
        case "item" where segments.count == 2: return "item \(segments[1])"
        case "profile" where segments.count == 2: return "profile \(segments[1])"
        case "settings" where segments.count == 1: return "settings"
        default: return nil
        }
    }

    /// The id in a web page URL whose path ends in /item/<id>
    /// (`https://example.com/item/42`), or nil.
    private func itemID(webpage: String?) -> String? {
        guard let webpage, let url = OpenURL(webpage) else { return nil }
        let path = url.pathComponents
        guard path.count >= 2, path[path.count - 2] == "item" else { return nil }
        return path[path.count - 1]
    }

    /// An item id given as an integer or a non-empty string.
    private func itemID(_ value: JSONValue?) -> String? {
        if let number = value?.intValue { return String(number) }
        if let text = value?.stringValue, !text.isEmpty { return text }
        return nil
    }
}
