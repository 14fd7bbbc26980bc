import ServiceKit

/// OfflineQueue's settings, from its `settings` object in the host's configuration:
///
///     {"maxItems": 1000}
///
/// Every key is optional. Settings that are not an object, an unknown key or a bad value
/// each give one problem sentence (the service logs it as a warn line) and the default
/// stands: a typo never passes silently.
struct OfflineQueueSettings: Equatable {
    /// The most items the queue holds; an enqueue beyond it is refused and logged.
    var maxItems = Self.defaultMaxItems

    static let defaultMaxItems = 1000

    /// Reads `options.settings` (absent settings are the defaults, silently).
    /// - Returns: the settings and one sentence per rejected setting, in key order.
    static func read(from options: LaunchOptions) -> (settings: OfflineQueueSettings, problems: [String]) {
        var settings = OfflineQueueSettings()
        if let error = options.settingsError {
            return (settings, ["settings are not valid JSON (\(error)); using the defaults"])
        }
        guard let value = options.settings else { return (settings, []) }
        guard let members = value.objectValue else {
            return (
                settings, ["settings must be an object such as {\"maxItems\": 1000}, not \(value); using the defaults"]
            )
        }
        var problems: [String] = []
        for key in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let member = members[key]!
            switch key {
            case "maxItems":
                if let count = member.intValue, count >= 1 {
                    settings.maxItems = count
                } else {
                    problems.append(
                        "settings.maxItems must be a whole number of at least 1, not \(member); using \(defaultMaxItems)"
                    )
                }
            default:
                problems.append("unknown setting \(JSONValue.string(key)) ignored (the only setting is maxItems)")
            }
        }
        return (settings, problems)
    }
}
