import ServiceABI
import ServiceJSON

/// What the desktop shows for a push (`org.freedesktop.Notifications.Notify`'s arguments),
/// read from its `aps`: the alert's title as the summary, its subtitle and body as the body,
/// the actions of its `aps.category` (``DesktopNotificationSettings/categories``) after the default
/// action, and the sound.
struct DesktopNotification: Equatable {
    /// An action button: its identifier (the response's action) and its label.
    struct Action: Equatable, Sendable {
        var id: String
        var title: String
    }

    /// The application name the desktop shows.
    static let appName = "ServiceHost"
    /// The action a click on the notification itself invokes (the Desktop Notifications
    /// Specification's "default"): UIKit's UNNotificationDefaultActionIdentifier.
    static let defaultAction = "default"
    /// `NotificationClosed`'s reason for a notification the user dismissed.
    static let dismissedByUser: UInt32 = 2
    /// The sound a push's `"sound": "default"` plays: the freedesktop sound theme's.
    static let defaultSound = "message-new-instant"

    var summary: String
    var body: String
    /// The category's actions (the default action is added to the call, not listed here).
    var actions: [Action]
    /// The sound theme's name to play, or nil for silence.
    var sound: String?
    /// Kept out of the notification list (presented without `.list`).
    var transient: Bool

    /// The notification for `payload` presented with `options`, or nil when it has no alert
    /// text (a badge or sound only push has nothing to show).
    init?(_ payload: PushPayload, options: PresentationOptions, categories: [String: [Action]]) {
        guard let document = try? JSONValue(parsing: payload.text), let aps = document["aps"]?.objectValue,
            let alert = aps["alert"]
        else { return nil }
        var title: String?
        var lines: [String] = []
        if let text = alert.stringValue {
            lines = [text]
        } else if let object = alert.objectValue {
            title = object["title"]?.stringValue
            lines = [object["subtitle"]?.stringValue, object["body"]?.stringValue].compactMap { $0 }.filter {
                !$0.isEmpty
            }
        }
        if title == nil || title?.isEmpty == true {
            // Without a title the first line is the summary: a desktop shows the summary first.
            guard !lines.isEmpty else { return nil }
            title = lines.removeFirst()
        }
        summary = title ?? ""
        body = lines.joined(separator: "\n")
        actions = aps["category"]?.stringValue.flatMap { categories[$0] } ?? []
        // `"sound": "name"` or `{"name": "name", "critical": 1, "volume": 1}`.
        let soundName = aps["sound"]?.stringValue ?? aps["sound"]?["name"]?.stringValue
        sound =
            options.contains(.sound) ? soundName.map { $0 == "default" || $0.isEmpty ? Self.defaultSound : $0 } : nil
        transient = !options.contains(.list)
    }

    /// `Notify`'s arguments (`susssasa{sv}i`): the body escaped when the server reads markup,
    /// the actions (the default one first) only to a server that shows them.
    func arguments(markup: Bool, actions showsActions: Bool) -> [SDBusConnection.Argument] {
        var hints: [(key: String, value: SDBusConnection.Variant)] = []
        if let sound {
            hints.append(("sound-name", .string(sound)))
        } else {
            hints.append(("suppress-sound", .bool(true)))
        }
        if transient { hints.append(("transient", .bool(true))) }
        let pairs = showsActions ? [Self.defaultAction, "Open"] + actions.flatMap { [$0.id, $0.title] } : []
        return [
            .string(Self.appName), .uint32(0), .string(""), .string(summary),
            .string(markup ? Self.escaped(body) : body), .strings(pairs), .dictionary(hints), .int32(-1),
        ]
    }

    /// The response's action for the `ActionInvoked` key `key`.
    static func action(forKey key: String) -> String { key == defaultAction ? SH_ACTION_DEFAULT : key }

    /// `&`, `<` and `>` as entities: a server with `body-markup` reads the body as markup.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }
}
