import ServiceABI
import ServiceVocabulary

/// A quick action a service declares (UIKit's `UIApplicationShortcutItem`): `SH_CLAIM_SHORTCUT`
/// and `SH_CLAIM_SHORTCUT_ICON`, or the manifest's `"shortcuts"`.
public struct Shortcut: Sendable, Equatable, CustomStringConvertible {
    /// Letters, digits and `-`: the Desktop Entry's action name and what `host action ID` names.
    public var id: String
    /// What a launcher shows; the id when the claim gives none.
    public var title: String
    /// An icon name or absolute path (a Desktop Entry's `Icon=`), or nil.
    public var icon: String?

    /// A quick action.
    public init(id: String, title: String, icon: String? = nil) {
        self.id = id
        self.title = title
        self.icon = icon
    }

    /// `compose "New entry" (document-new)`: what `host inspect` shows.
    public var description: String {
        "\(id) \"\(title)\"" + (icon.map { " (\($0))" } ?? "")
    }

    /// `{"id": …, "title": …, "icon": … or null}`: what `host inspect --json` shows.
    var json: String {
        JSONText.object([
            "id": JSONText.string(id), "title": JSONText.string(title), "icon": icon.map(JSONText.string) ?? "null",
        ])
    }

    /// `value` split at its first space: the id and the rest (nil without a space).
    static func split(_ value: String) -> (id: String, rest: String?) {
        guard let space = value.firstIndex(of: " ") else { return (value, nil) }
        return (String(value[..<space]), String(value[value.index(after: space)...]))
    }

    /// Whether `text` holds a control character (C0, DEL or C1), which no Desktop Entry value may.
    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

extension ServiceMetadata {
    /// Adds an `SH_CLAIM_SHORTCUT` (`ID` or `ID TITLE`) or `SH_CLAIM_SHORTCUT_ICON` (`ID ICON`)
    /// claim; a malformed one is an error naming the service.
    mutating func claimShortcut(_ kind: Int, _ value: String) throws(LoadFailure.Reason) {
        let (id, rest) = Shortcut.split(value)
        if let problem = ShortcutID.problem(with: id) {
            throw .invalidMetadata("service \(self.id) declares the quick action \"\(value)\": its id \(problem)")
        }
        let existing = shortcuts.firstIndex { $0.id == id }
        if kind == SH_CLAIM_SHORTCUT {
            guard existing == nil else {
                throw .invalidMetadata("service \(self.id) declares the quick action \(id) twice")
            }
            let title = rest ?? id
            guard !title.isEmpty, !Shortcut.hasControl(title) else {
                throw .invalidMetadata(
                    "service \(self.id) declares the quick action \(id) with an empty title or a control character")
            }
            shortcuts.append(Shortcut(id: id, title: title))
        } else {
            guard let index = existing else {
                throw .invalidMetadata(
                    "service \(self.id) gives an icon to the quick action \(id), which it does not declare before")
            }
            guard let icon = rest, !icon.isEmpty, !Shortcut.hasControl(icon) else {
                throw .invalidMetadata(
                    "service \(self.id) gives the quick action \(id) an empty icon or one with a control character")
            }
            shortcuts[index].icon = icon
        }
    }
}
