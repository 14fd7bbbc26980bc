import ServiceABI

/// How a notification is shown while the app is active, the answer to
/// `willPresentNotification` (as UNNotificationPresentationOptions, `SH_PRESENT_*`).
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

    /// Every option and its name, in bit order.
    public static let named: [(option: PresentationOptions, name: String)] = [
        (.badge, "badge"), (.sound, "sound"), (.list, "list"), (.banner, "banner"),
    ]

    /// Every option there is.
    public static let all = PresentationOptions(named.map(\.option))

    /// The names of the options set, most visible first: "banner", "list", "sound", "badge"
    /// (how the host's traces and `host ctl push` replies list them).
    public var names: [String] { Self.named.reversed().filter { contains($0.option) }.map(\.name) }

    /// The names of the options set joined by "|" in bit order, e.g. "sound|list|banner";
    /// "none" for `[]`.
    public var description: String {
        let names = Self.named.filter { contains($0.option) }.map(\.name)
        return names.isEmpty ? "none" : names.joined(separator: "|")
    }
}
