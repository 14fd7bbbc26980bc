/// How many crashes within how many seconds mark a service failed (`--crash-limit N/SECS`).
public struct CrashLimit: Sendable, Equatable, CustomStringConvertible {
    /// Crashes that mark the service failed.
    public var count: Int
    /// The window they must fall in, in seconds.
    public var window: Double

    /// Five crashes within 60 s, as systemd's default StartLimitBurst/StartLimitIntervalSec.
    public static let standard = CrashLimit(count: 5, window: 60)

    /// A limit of `count` crashes within `window` seconds.
    public init(count: Int, window: Double) {
        self.count = count
        self.window = window
    }

    /// Parses `N/SECS` or `N` (within 60 s).
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let count = Int(parts[0]), count > 0 else { return nil }
        var window = 60.0
        if parts.count == 2 {
            guard let seconds = Double(parts[1]), seconds > 0, seconds.isFinite else { return nil }
            window = seconds
        }
        self.init(count: count, window: window)
    }

    /// "5 crashes within 60 s".
    public var description: String { "\(count) crash\(count == 1 ? "" : "es") within \(Seconds.text(window)) s" }
}
