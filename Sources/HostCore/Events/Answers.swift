import ServiceABI

/// A background fetch result (UIBackgroundFetchResult), merged newData > noData > failed.
public enum FetchResult: Int32, Sendable, Comparable {
    case newData = 0, noData = 1, failed = 2

    /// The result a service answered, or nil for a code that is not one.
    public init?(_ code: Int32) { self.init(rawValue: code) }

    /// "newData", "noData", "failed".
    public var name: String {
        switch self {
        case .newData: "newData"
        case .noData: "noData"
        case .failed: "failed"
        }
    }

    /// Better results sort first: the merge is the minimum.
    public static func < (a: FetchResult, b: FetchResult) -> Bool { a.rawValue < b.rawValue }
}

/// Presentation options (UNNotificationPresentationOptions), merged as a union.
public struct PresentationOptions: OptionSet, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    init(_ code: Int32) { self.init(rawValue: code < 0 ? 0 : code & 0xF) }

    public static let badge = PresentationOptions(rawValue: Int32(SH_PRESENT_BADGE))
    public static let sound = PresentationOptions(rawValue: Int32(SH_PRESENT_SOUND))
    public static let list = PresentationOptions(rawValue: Int32(SH_PRESENT_LIST))
    public static let banner = PresentationOptions(rawValue: Int32(SH_PRESENT_BANNER))

    /// "banner", "list", "sound", "badge", in that order.
    public var names: [String] {
        [(Self.banner, "banner"), (.list, "list"), (.sound, "sound"), (.badge, "badge")]
            .filter { contains($0.0) }.map(\.1)
    }
}
