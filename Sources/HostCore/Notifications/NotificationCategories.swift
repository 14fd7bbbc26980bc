import ServiceABI
import ServiceJSON

/// The notification categories services register at run time (`dev.servicehost.notifications/1`,
/// UIKit's `UNUserNotificationCenter.setNotificationCategories`): each service's call replaces
/// its own set. What a push's `aps.category` names is ``merged(over:)``: the configuration's
/// `notificationCategories` first, then the services' (for a category two services name, the
/// one whose id sorts first).
@MainActor
final class NotificationCategories {
    private let log: Log
    private var byService: [String: [String: [DesktopNotification.Action]]] = [:]

    init(log: Log) { self.log = log }

    /// Replaces `service`'s categories with those of `json` (services.json's
    /// `notificationCategories` format): SH_OK, or SH_INVALID with a
    /// `notificationCategories.refused` line, its categories kept.
    func set(_ json: [UInt8], service: String) -> Int32 {
        let categories: [String: [DesktopNotification.Action]]
        do {
            let document: JSONValue
            do { document = try JSONValue(parsing: json) } catch {
                throw ConfigurationError.invalid(Self.file, "", "not JSON: \(error)")
            }
            let reader = ConfigurationReader(file: Self.file)
            categories = try reader.readNotifications(["notificationCategories": document]).categories
        } catch {
            log.warn(
                "host", "\(service): notification categories refused: \(error)",
                event: .notificationCategoriesRefused, .string("service", service), .string("reason", "\(error)"))
            return Int32(SH_INVALID)
        }
        byService[service] = categories
        log.info(
            "host", "\(service) set \(categories.count) notification categories",
            event: .notificationCategoriesSet, .string("service", service),
            .strings("categories", categories.keys.sorted()))
        return Int32(SH_OK)
    }

    /// The file name errors give: the service's call, not a file.
    private static let file = "set_categories"

    /// The categories a push may name: `configured` (the configuration's) over the services'.
    func merged(over configured: [String: [DesktopNotification.Action]]) -> [String: [DesktopNotification.Action]] {
        var merged = configured
        for service in byService.keys.sorted() {
            merged.merge(byService[service]!) { first, _ in first }
        }
        return merged
    }
}
