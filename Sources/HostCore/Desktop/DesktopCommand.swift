import Glibc

/// `host desktop install|uninstall|status`: the app on the Linux desktop. `install` writes a
/// Desktop Entry whose `Exec` is `host open [the run's options] %u`, one
/// `x-scheme-handler/SCHEME` per URL scheme the plugins claim (read from their metadata, no
/// plugin code runs), and makes it the default handler of each with `xdg-mime default`.
public enum DesktopCommand {
    /// What `host desktop` was asked.
    public struct Options: Sendable {
        /// `install`, `uninstall` or `status`.
        public var action: Action
        /// `--system`: `/usr/local/share/applications` (else the user's `XDG_DATA_HOME`).
        public var system = false
        /// `--name APP`: the entry's `Name=` and file id.
        public var name = "ServiceHost"
        /// `--json` (status).
        public var json = false
        /// The run's options, as given, their paths made absolute: what `host open` runs with.
        public var runArguments: [String] = []
    }

    /// The subcommands.
    public enum Action: String, CaseIterable, Sendable {
        case install, uninstall, status
    }

    /// The text of `host desktop --help`.
    public static let help = """
        host desktop install [--user|--system] [--name APP] [--plugins DIR …] [run options …]
        host desktop uninstall [--user|--system] [--name APP]
        host desktop status [--user|--system] [--name APP] [--plugins DIR …] [--json]
          install: write a Desktop Entry (Exec=host open [run options] %u) with an
          x-scheme-handler/SCHEME for every URL scheme the plugins claim, and make it
          the default handler of each (xdg-mime default); xdg-open SCHEME://… then reaches
          the running host, or starts one with the URL (host open).
          uninstall: remove the entry and its default-handler associations.
          status: what is registered, and whether it is current.
          --user (default): $XDG_DATA_HOME/applications; --system: /usr/local/share/applications.
          Exit status: 0 done (status: installed and current), 1 not current or a tool failed, 2 usage
        """

    /// Run options that make no sense in an entry: `host open` gives the URL itself.
    static let refusedRunOptions = [
        "--launch-url", "--launch-shortcut", "--launch-notification", "--launch-activity", "--launch-scene",
    ]
    /// Run options whose value is a path, made absolute in the entry (it runs from anywhere).
    static let pathOptions = ["--plugins", "--config", "--control", "--state-dir", "--trace"]

    /// Parses the arguments after `desktop`.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        guard let first = arguments.first else { throw UsageError("desktop: expected install, uninstall or status") }
        if first == "--help" || first == "-h" { throw UsageError.help }
        guard let action = Action(rawValue: first) else {
            throw UsageError(
                "desktop: unknown subcommand '\(first)'"
                    + Suggestion.didYouMean(first, among: Action.allCases.map(\.rawValue)))
        }
        var options = Options(action: action)
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h": throw UsageError.help
            case "--user": options.system = false
            case "--system": options.system = true
            case "--json": options.json = true
            case "--name":
                guard let name = rest.popFirst(), !name.isEmpty else {
                    throw UsageError("desktop: --name needs a value")
                }
                options.name = name
            case _ where argument.hasPrefix("--name="):
                options.name = String(argument.dropFirst("--name=".count))
                if options.name.isEmpty { throw UsageError("desktop: --name needs a value") }
            default:
                options.runArguments += try runArgument(argument, rest: &rest)
            }
        }
        if action == .uninstall {
            guard options.runArguments.isEmpty else {
                throw UsageError("desktop uninstall: unexpected argument '\(options.runArguments[0])'")
            }
            return options
        }
        // The run's options are checked now, as the host will read them.
        _ = try RunOptions.parse(options.runArguments)
        return options
    }

    /// One run option (with its value, when it takes one), its path made absolute.
    private static func runArgument(_ argument: String, rest: inout ArraySlice<String>) throws(UsageError) -> [String] {
        guard OptionTable<RunOptions>.isOption(argument) else {
            throw UsageError("desktop: unexpected argument '\(argument)'")
        }
        let (name, inline) = OptionTable<RunOptions>.split(argument)
        if refusedRunOptions.contains(name) {
            throw UsageError("desktop: \(name) is not for an entry: host open gives the URL it is opened with")
        }
        guard let option = RunOptions.table.options.first(where: { $0.name == name }) else {
            throw UsageError(
                "desktop: unknown option \(name)"
                    + Suggestion.didYouMean(name, among: RunOptions.table.options.map(\.name) + ["--user", "--system"]))
        }
        guard case .required = option.value, inline == nil else { return [argument] }
        guard let value = rest.popFirst() else { throw UsageError("desktop: \(name) needs a value") }
        return [name, pathOptions.contains(name) ? WorkingDirectory.absolute(value) : value]
    }

    /// The applications folder the entry goes in.
    public static func applicationsDirectory(
        system: Bool, environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }
    ) -> String? {
        if system { return "/usr/local/share/applications" }
        if let data = environment("XDG_DATA_HOME"), data.hasPrefix("/") { return data + "/applications" }
        return environment("HOME").map { $0 + "/.local/share/applications" }
    }

    /// The user's `mimeapps.list`, where `xdg-mime default` writes.
    static func mimeappsList(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } })
        -> String?
    {
        if let config = environment("XDG_CONFIG_HOME"), config.hasPrefix("/") { return config + "/mimeapps.list" }
        return environment("HOME").map { $0 + "/.config/mimeapps.list" }
    }

    /// What the services the host would start claim for the desktop, read once (one planner
    /// pass: the scan, the metadata, the trust checks).
    public struct Claims {
        /// The URL schemes, each with its first claimant, sorted by scheme; scheme-and-host
        /// patterns are left out (``DesktopEntry/scheme(ofClaim:)``).
        public var schemes: [(scheme: String, service: String)] = []
        /// The quick actions, each from its first declarer, in the order they are declared.
        public var shortcuts: [Shortcut] = []
    }

    /// The claims of the services `run` would start.
    public static func claims(_ run: RunOptions) -> Claims {
        let planner = LoadPlanner(run.loadSettings)
        guard case .success(let inspection) = planner.inspection else { return Claims() }
        let started = planner.startOrder.map(Set.init)
        var claims = Claims()
        var firstClaimant: [String: String] = [:]
        var seen: Set<String> = []
        for (service, _) in inspection.services where started?.contains(service.id) ?? true {
            for claim in service.urls {
                if let scheme = DesktopEntry.scheme(ofClaim: claim), firstClaimant[scheme] == nil {
                    firstClaimant[scheme] = service.id
                }
            }
            for shortcut in service.shortcuts where seen.insert(shortcut.id).inserted {
                claims.shortcuts.append(shortcut)
            }
        }
        claims.schemes = firstClaimant.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return claims
    }

    /// The running `host` binary's path (`/proc/self/exe`).
    public static func hostExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return "host" }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
