import ServiceABI

/// How a notification is shown while the app is active, the answer to
/// `willPresent` (as UNNotificationPresentationOptions, mirroring `SH_PRESENT_*`).
/// The host shows the union of every service's answer.
public struct PresentationOptions: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The `SH_PRESENT_*` bits.
    public let rawValue: UInt32

    /// Creates options from `SH_PRESENT_*` bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Update the app's badge (`SH_PRESENT_BADGE`).
    public static let badge = PresentationOptions(rawValue: UInt32(SH_PRESENT_BADGE))
    /// Play the sound (`SH_PRESENT_SOUND`).
    public static let sound = PresentationOptions(rawValue: UInt32(SH_PRESENT_SOUND))
    /// Show it in the notification list (`SH_PRESENT_LIST`).
    public static let list = PresentationOptions(rawValue: UInt32(SH_PRESENT_LIST))
    /// Show it as a banner (`SH_PRESENT_BANNER`).
    public static let banner = PresentationOptions(rawValue: UInt32(SH_PRESENT_BANNER))

    /// The option names joined by "|", e.g. "sound|list|banner"; "none" for `[]`.
    public var description: String {
        let names = [(Self.badge, "badge"), (.sound, "sound"), (.list, "list"), (.banner, "banner")]
            .filter { contains($0.0) }.map(\.1)
        return names.isEmpty ? "none" : names.joined(separator: "|")
    }
}

/// The outcome of a background fetch, the answer to `didReceiveRemoteNotification`
/// (as UIBackgroundFetchResult, mirroring `SH_FETCH_*`). The host merges every
/// service's answer: new data wins over no data, which wins over failed.
public enum FetchResult: Int32, Sendable, CaseIterable, CustomStringConvertible {
    /// New data was downloaded (`SH_FETCH_NEW_DATA`).
    case newData = 0
    /// There was nothing new (`SH_FETCH_NO_DATA`).
    case noData = 1
    /// The fetch failed (`SH_FETCH_FAILED`).
    case failed = 2

    /// "newData", "noData" or "failed".
    public var description: String {
        switch self {
        case .newData: "newData"
        case .noData: "noData"
        case .failed: "failed"
        }
    }
}
