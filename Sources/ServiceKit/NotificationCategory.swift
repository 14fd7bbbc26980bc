import ServiceABI
import ServiceJSON

/// A kind of notification and the buttons the desktop shows with it (UIKit's
/// `UNNotificationCategory`): a push whose `aps.category` is ``id`` gets ``actions``, and a click
/// on one delivers `didReceive(_:completion:)` with that action's id.
public struct NotificationCategory: Sendable, Equatable {
    /// One button (UIKit's `UNNotificationAction`).
    public struct Action: Sendable, Equatable {
        /// What the response's `actionIdentifier` is when the user clicks it (not `"default"`).
        public var id: String
        /// The button's label.
        public var title: String

        /// An action `id` labelled `title`.
        public init(id: String, title: String) {
            self.id = id
            self.title = title
        }
    }

    /// The `aps.category` a push names.
    public var id: String
    /// At most 10 buttons, in order.
    public var actions: [Action]

    /// A category `id` with `actions`.
    public init(id: String, actions: [Action]) {
        self.id = id
        self.actions = actions
    }
}

extension HostContext {
    /// Replaces this service's notification categories with `categories` (UIKit's
    /// `UNUserNotificationCenter.setNotificationCategories(_:)`); an empty set clears them. A
    /// category `services.json`'s `notificationCategories` also names is the configuration's.
    /// Main thread only.
    /// - Throws: ``HostError/notAttached`` before attach, ``HostError/invalid`` when the host
    ///   refused them (it logs `notificationCategories.refused` with the reason: more than 10
    ///   actions, an action id `"default"` or listed twice, an empty id or title…),
    ///   ``HostError/unsupported`` from a host without the notifications extension.
    public func setNotificationCategories(_ categories: [NotificationCategory]) throws(HostError) {
        let raw = try attached()
        guard let pointer = self.extension(id: SH_NOTIFICATIONS_ID) else { throw .unsupported }
        let table = pointer.assumingMemoryBound(to: sh_notifications.self)
        guard table.pointee.size >= SH_NOTIFICATIONS_SIZE_V1, let set = table.pointee.set_categories else {
            throw .unsupported
        }
        var members: [String: JSONValue] = [:]
        for category in categories {
            members[category.id] = .array(
                category.actions.map { .object(["id": .string($0.id), "title": .string($0.title)]) })
        }
        var json = JSONValue.object(members).serialized
        let code = json.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { set(raw, $0.baseAddress, $0.count) }
        }
        if code != SH_OK { throw HostError(code: code) }
    }
}
