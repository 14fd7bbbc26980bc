/// The Desktop Entry `host desktop install` writes (Desktop Entry Specification 1.5): an
/// application whose `Exec` is `host open … %u` and whose `MimeType` names an
/// `x-scheme-handler/SCHEME` for every URL scheme the plugins claim, so `xdg-open myapp://…`
/// reaches the app, warm or cold. Also reads back the entries it wrote (`host desktop status`,
/// `host check`).
public struct DesktopEntry: Equatable, Sendable {
    /// `Name=`: the application's name.
    public var name: String
    /// The command: the `host` binary, `open`, the run's options. `%u` is appended.
    public var command: [String]
    /// The URL schemes it handles, lowercased and sorted.
    public var schemes: [String]
    /// The quick actions the plugins declare, each written as a `[Desktop Action ID]` group
    /// whose `Exec` is `host action ID` with the entry's run options.
    public var actions: [Shortcut] = []

    /// The desktop file id for `name`: `servicehost-NAME.desktop`, lowercased, every character
    /// other than a letter, digit or `-` as `-` (ids name files and D-Bus paths).
    public static func fileID(for name: String) -> String {
        let slug = String(
            String.UnicodeScalarView(
                name.lowercased().unicodeScalars.map { scalar in
                    ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) ? scalar : "-"
                }))
        return "servicehost-\(slug).desktop"
    }

    /// The key this entry's generator writes, so status and check recognise our entries.
    static let generatorKey = "X-ServiceHost-Generated"

    /// The file's text.
    public var text: String {
        var lines = [
            "[Desktop Entry]",
            "Type=Application",
            "Version=1.4",
            "Name=\(Self.escapeString(name))",
            "Comment=\(Self.escapeString("ServiceHost app: hands its URLs to its services"))",
            "Exec=\(Self.escapeString((command.map(Self.quoteArgument) + ["%u"]).joined(separator: " ")))",
            "Terminal=false",
            // A URL handler is no launcher icon; with quick actions the launcher shows the entry
            // (its actions are offered there).
            "NoDisplay=\(actions.isEmpty)",
            "Categories=Utility;",
        ]
        if !schemes.isEmpty {
            lines.append("MimeType=" + schemes.map { "x-scheme-handler/\($0);" }.joined())
        }
        if !actions.isEmpty { lines.append("Actions=" + actions.map { "\($0.id);" }.joined()) }
        lines.append("\(Self.generatorKey)=\(HostVersion.string)")
        for action in actions {
            // `host action ID` and the same run options as the main Exec (`command` is the
            // binary, `open`, then those options).
            let exec = [command.first ?? "host", "action", action.id] + command.dropFirst(2)
            lines += ["", "[Desktop Action \(action.id)]", "Name=\(Self.escapeString(action.title))"]
            if let icon = action.icon { lines.append("Icon=\(Self.escapeString(icon))") }
            lines.append("Exec=\(Self.escapeString(exec.map(Self.quoteArgument).joined(separator: " ")))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The schemes of an entry's text (its `MimeType`'s `x-scheme-handler/…` types), or nil
    /// when the text is not an entry `host desktop install` wrote.
    public static func schemes(inEntry text: String) -> [String]? {
        var inMainGroup = false
        var generated = false
        var schemes: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("[") {
                inMainGroup = line == "[Desktop Entry]"
                continue
            }
            guard inMainGroup, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingSpaces
            let value = line[line.index(after: equals)...].trimmingSpaces
            if key == generatorKey { generated = true }
            if key == "MimeType" {
                for type in value.split(separator: ";") where type.hasPrefix("x-scheme-handler/") {
                    schemes.append(String(type.dropFirst("x-scheme-handler/".count)))
                }
            }
        }
        return generated ? schemes.sorted() : nil
    }

    /// A URL claim that names a scheme alone (`myapp`), lowercased; nil for a scheme-and-host
    /// pattern (`https://example.com`): registering the app for all of `https` would take the
    /// scheme from the browser, so such claims reach the app through `host open` only.
    public static func scheme(ofClaim claim: String) -> String? {
        // RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
        func isLetter(_ scalar: Unicode.Scalar) -> Bool { ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) }
        guard let first = claim.unicodeScalars.first, isLetter(first),
            claim.unicodeScalars.allSatisfy({
                isLetter($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)
            })
        else { return nil }
        return claim.lowercased()
    }

    /// One `Exec` argument, quoted as the specification asks: an argument with a reserved
    /// character goes in double quotes, inside which `"`, `` ` ``, `$` and `\` take a
    /// backslash; `%` is written `%%` (a field code otherwise).
    static func quoteArgument(_ argument: String) -> String {
        let reserved = " \t\n\"'\\><~|&;$*?#()`"
        var text = argument.replacing("%", with: "%%")
        guard text.isEmpty || text.contains(where: { reserved.contains($0) }) else { return text }
        var quoted = "\""
        for character in text {
            if "\"`$\\".contains(character) { quoted.append("\\") }
            quoted.append(character)
        }
        text = quoted + "\""
        return text
    }

    /// A value of type string: `\` as `\\`, and the control characters the format escapes.
    static func escapeString(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default: out.append(character)
            }
        }
        return out
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
