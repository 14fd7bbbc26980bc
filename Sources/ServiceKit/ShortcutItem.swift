import ServiceABI

/// A quick action the user chose, the data of ``ShortcutHandling/perform(_:)`` (a copy of
/// `sh_shortcut_item`, as UIKit's `UIApplicationShortcutItem`).
///
/// ```swift
/// func perform(_ item: ShortcutItem) -> Bool {
///     guard item.id == "compose" else { return false }
///     host.log(.info, "compose a new entry")
///     return true
/// }
/// ```
public struct ShortcutItem: Sendable, Hashable, CustomStringConvertible {
    /// The action's id as the manifest's `"shortcuts"` declares it: "compose".
    public var id: String
    /// Its title as declared: "New entry" (the id when none was given).
    public var title: String
    /// The action launched the app (`SH_FROM_LAUNCH`, `--launch-shortcut`): this is its one
    /// delivery after the app became active.
    public var isFromLaunch: Bool

    /// A quick action (for tests).
    public init(id: String, title: String? = nil, isFromLaunch: Bool = false) {
        self.id = id
        self.title = title ?? id
        self.isFromLaunch = isFromLaunch
    }

    /// Copies the host's `sh_shortcut_item` (valid only during the event).
    init(_ raw: UnsafePointer<sh_shortcut_item>) {
        let item = raw.copyWithinDeclaredSize()
        let id = item.id.map { String(cString: $0) } ?? ""
        self.init(
            id: id, title: item.title.map { String(cString: $0) },
            isFromLaunch: item.flags & UInt32(SH_FROM_LAUNCH) != 0)
    }

    /// The id.
    public var description: String { id }
}
