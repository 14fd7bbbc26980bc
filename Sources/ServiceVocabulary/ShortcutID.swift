/// The rule for a quick action's id (`SH_CLAIM_SHORTCUT`), declared once for the host, the SDK
/// and servicehost-metagen: a Desktop Entry action name (Desktop Entry Specification,
/// "Additional applications actions": `A-Za-z0-9-`), which `host action ID` names too.
public enum ShortcutID {
    /// Why `id` is not a quick action id, or nil when it is one.
    public static func problem(with id: String) -> String? {
        if id.isEmpty { return "is empty" }
        let valid = id.utf8.allSatisfy { c in
            (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || c == 0x2D
        }
        return valid ? nil : "may hold only letters, digits and '-'"
    }
}
