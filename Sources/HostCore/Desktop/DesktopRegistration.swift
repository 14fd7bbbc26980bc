import Glibc
import ServiceJSON

/// What `host desktop install|uninstall|status` do to the files and the handler database, and
/// what they found: the structured outcome the command prints (as text, or with `--json`).
public struct DesktopRegistration: Sendable {
    /// One claimed or registered scheme.
    public struct Scheme: Sendable, Equatable {
        /// The scheme (`myapp`).
        public var scheme: String
        /// The service that claims it now; nil when no plugin claims it any more (stale).
        public var claimedBy: String?
        /// Whether the installed entry lists it.
        public var inEntry: Bool
        /// The desktop file id `xdg-mime query default` names for it; nil when none or
        /// when xdg-mime is missing.
        public var defaultHandler: String?
    }

    /// The entry's path.
    public var path: String
    /// Its desktop file id.
    public var fileID: String
    /// Whether the entry exists (and was written by `host desktop install`).
    public var installed: Bool
    /// Every scheme claimed now or listed in the entry.
    public var schemes: [Scheme] = []
    /// Why a tool could not do its part (xdg-mime missing, an association not made).
    public var problems: [String] = []

    /// Installed, listing exactly the claimed schemes, and the default handler of each.
    public var isCurrent: Bool {
        installed && problems.isEmpty
            && schemes.allSatisfy { $0.claimedBy != nil && $0.inEntry && $0.defaultHandler == fileID }
    }

    /// The exit status: 0 current (install: done), 1 not.
    public var status: Int32 { isCurrent ? 0 : 1 }

    /// Runs `options.action`.
    public static func perform(_ options: DesktopCommand.Options) -> DesktopRegistration {
        let fileID = DesktopEntry.fileID(for: options.name)
        guard let directory = DesktopCommand.applicationsDirectory(system: options.system) else {
            return DesktopRegistration(
                path: fileID, fileID: fileID, installed: false,
                problems: ["no applications folder: neither XDG_DATA_HOME nor HOME is set"])
        }
        let path = directory + "/" + fileID
        switch options.action {
        case .install: return install(options, path: path, directory: directory, fileID: fileID)
        case .uninstall: return uninstall(options, path: path, directory: directory, fileID: fileID)
        case .status: return status(options, path: path, fileID: fileID)
        }
    }

    private static func install(
        _ options: DesktopCommand.Options, path: String, directory: String, fileID: String
    ) -> DesktopRegistration {
        var report = DesktopRegistration(path: path, fileID: fileID, installed: false)
        let run = (try? RunOptions.parse(options.runArguments)) ?? RunOptions()
        let claims = DesktopCommand.claims(run)
        let claimed = claims.schemes
        let entry = DesktopEntry(
            name: options.name, command: [DesktopCommand.hostExecutable(), "open"] + options.runArguments,
            schemes: claimed.map(\.scheme), actions: claims.shortcuts)
        do {
            try DirectoryHandle.makeDirectories(directory, mode: 0o755)
            try write(entry.text, to: path)
        } catch {
            report.problems.append("cannot write \(path): \(error)")
            return report
        }
        report.installed = true
        // The cache of which entries handle which types, where the tool is installed; xdg-open
        // reads mimeapps.list first, so a missing tool costs nothing but the cache.
        _ = try? ChildCommand.run("update-desktop-database", [directory])
        for (scheme, _) in claimed where !options.system {
            let made = try? ChildCommand.run("xdg-mime", ["default", fileID, "x-scheme-handler/\(scheme)"])
            if made == nil { report.problems.append("xdg-mime is not installed (Debian: xdg-utils)") }
            if let made, made.status != 0 {
                report.problems.append("xdg-mime default \(fileID) x-scheme-handler/\(scheme): exit \(made.status)")
            }
            if made == nil { break }
        }
        report.schemes = schemes(claimed: claimed, inEntry: claimed.map(\.scheme), fileID: fileID)
        return report
    }

    private static func uninstall(
        _ options: DesktopCommand.Options, path: String, directory: String, fileID: String
    ) -> DesktopRegistration {
        let listed = (try? read(path)).flatMap(DesktopEntry.schemes(inEntry:))
        var report = DesktopRegistration(path: path, fileID: fileID, installed: false)
        guard let listed else {
            report.problems.append("no entry written by host desktop install at \(path)")
            return report
        }
        if unlink(path) != 0 { report.problems.append("cannot remove \(path): \(String(cString: strerror(errno)))") }
        if !options.system, let list = DesktopCommand.mimeappsList() {
            do { try removeAssociations(of: fileID, from: list) } catch {
                report.problems.append("cannot update \(list): \(error)")
            }
        }
        _ = try? ChildCommand.run("update-desktop-database", [directory])
        report.schemes = listed.map { Scheme(scheme: $0, claimedBy: nil, inEntry: false, defaultHandler: nil) }
        return report
    }

    private static func status(_ options: DesktopCommand.Options, path: String, fileID: String) -> DesktopRegistration {
        let listed = (try? read(path)).flatMap(DesktopEntry.schemes(inEntry:))
        let run = (try? RunOptions.parse(options.runArguments)) ?? RunOptions()
        var report = DesktopRegistration(path: path, fileID: fileID, installed: listed != nil)
        report.schemes = schemes(
            claimed: DesktopCommand.claims(run).schemes, inEntry: listed ?? [], fileID: fileID)
        if (try? ChildCommand.run("xdg-mime", ["--version"])) == nil {
            report.problems.append("xdg-mime is not installed (Debian: xdg-utils)")
        }
        return report
    }

    /// The claimed schemes and the entry's, merged, each with its default handler.
    private static func schemes(
        claimed: [(scheme: String, service: String)], inEntry: [String], fileID: String
    ) -> [Scheme] {
        var all = Dictionary(claimed.map { ($0.scheme, $0.service) }, uniquingKeysWith: { first, _ in first })
            .mapValues { Optional($0) }
        for scheme in inEntry where all[scheme] == nil { all[scheme] = .some(nil) }
        return all.keys.sorted().map { scheme in
            let handler = (try? ChildCommand.run("xdg-mime", ["query", "default", "x-scheme-handler/\(scheme)"]))
                .map { $0.output.split(separator: "\n").first.map(String.init) ?? "" }
                .flatMap { $0.isEmpty ? nil : $0 }
            return Scheme(
                scheme: scheme, claimedBy: all[scheme] ?? nil, inEntry: inEntry.contains(scheme),
                defaultHandler: handler)
        }
    }

    /// The text `host desktop` prints.
    public func text(_ action: DesktopCommand.Action) -> String {
        var lines: [String] = []
        switch action {
        case .install: lines.append("installed \(path)")
        case .uninstall: lines.append(problems.isEmpty ? "removed \(path)" : "not removed: \(path)")
        case .status:
            lines.append(
                "\(path): "
                    + (installed ? (isCurrent ? "installed, current" : "installed, not current") : "not installed"))
        }
        for scheme in schemes where action != .uninstall {
            var facts: [String] = []
            facts.append(scheme.claimedBy.map { "claimed by \($0)" } ?? "no longer claimed")
            if action == .status { facts.append(scheme.inEntry ? "in the entry" : "not in the entry") }
            facts.append("default handler: \(scheme.defaultHandler ?? "none")")
            lines.append("  \(scheme.scheme): " + facts.joined(separator: ", "))
        }
        if action == .uninstall, !schemes.isEmpty {
            lines.append("  schemes released: " + schemes.map(\.scheme).joined(separator: ", "))
        }
        lines += problems.map { "  problem: \($0)" }
        return lines.joined(separator: "\n")
    }

    /// The report as one JSON object.
    public var json: JSONValue {
        .object([
            "path": .string(path), "fileID": .string(fileID), "installed": .bool(installed),
            "current": .bool(isCurrent),
            "schemes": .array(
                schemes.map { scheme in
                    .object([
                        "scheme": .string(scheme.scheme), "claimedBy": scheme.claimedBy.map(JSONValue.string) ?? .null,
                        "inEntry": .bool(scheme.inEntry),
                        "defaultHandler": scheme.defaultHandler.map(JSONValue.string) ?? .null,
                    ])
                }),
            "problems": .array(problems.map(JSONValue.string)),
        ])
    }

    // MARK: Files

    /// The text of an entry or a `mimeapps.list`: a file over 1 MiB is an error, never read in
    /// part (a part written back would cut the user's file short).
    static func read(_ path: String) throws(InputError) -> String {
        String(decoding: try InputFile.read(path, limit: 1 << 20), as: UTF8.self)
    }

    /// Writes `text` to `path` whole (``DirectoryHandle/replace(_:with:mode:)``: a temporary
    /// file, synced, renamed over it), readable by all as desktop files are.
    static func write(_ text: String, to path: String) throws(SystemError) {
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        let folder = try DirectoryHandle.open(slash == path.startIndex ? "/" : String(path[..<slash]))
        try Array(text.utf8).withUnsafeBytes { bytes in
            Result { () throws(SystemError) in
                try folder.replace(String(path[path.index(after: slash)...]), with: bytes, mode: 0o644)
            }
        }.get()
    }

    /// Removes every `TYPE=…fileID…` association of ours from the mimeapps.list at `list`.
    static func removeAssociations(of fileID: String, from list: String) throws(SystemError) {
        // No list (or none readable whole): nothing of ours to remove, and nothing is written.
        guard let text = try? read(list) else { return }
        var changed = false
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            guard let equals = line.firstIndex(of: "="), line.hasPrefix("x-scheme-handler/") else {
                lines.append(line)
                continue
            }
            let ids = line[line.index(after: equals)...].split(separator: ";").map(String.init)
            let kept = ids.filter { $0 != fileID }
            guard kept.count != ids.count else {
                lines.append(line)
                continue
            }
            changed = true
            if !kept.isEmpty { lines.append(String(line[...equals]) + kept.joined(separator: ";") + ";") }
        }
        if changed { try write(lines.joined(separator: "\n"), to: list) }
    }
}
