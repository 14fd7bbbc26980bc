import ServiceABI

/// Extension `dev.servicehost.notifications/1` (notifications.h): UIKit's
/// `UNUserNotificationCenter.setNotificationCategories` for C and Swift services, its thunk
/// checking the arguments and calling the service's HostFunctions, in process and in a worker.
enum NotificationsExtension {
    /// Its row: the id and the table, host-owned and never freed.
    static let row: HostExtensions.Row = {
        return HostExtensions.Row(
            id: SH_NOTIFICATIONS_ID,
            table: sh_notifications(
                size: UInt32(MemoryLayout<sh_notifications>.size), version: SH_NOTIFICATIONS_VERSION,
                set_categories: { host, json, length in
                    guard let functions = HostAdapter.functions(host), let json,
                        length <= Int(SH_NOTIFICATIONS_MAX_CATEGORIES_BYTES)
                    else { return Int32(SH_INVALID) }
                    let bytes = Array(UnsafeRawBufferPointer(start: json, count: length))
                    return functions.setNotificationCategories(json: bytes)
                }))
    }()
}
