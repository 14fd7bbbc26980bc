import Glibc
import ServiceJSON

/// The `--config FILE` document: which services run, in what order, with what settings.
///
/// The file is one JSON object whose only key is `services`, an object keyed by service id
/// (an id can then appear only once, and an error names the service by its id):
///
/// ```json
/// {
///   "services": {
///     "dev.servicehost.logger": { "priority": 10, "settings": { "verbose": true } },
///     "dev.servicehost.uptime": { "requires": ["dev.servicehost.logger"], "policy": "required" },
///     "com.example.greeter":    { "enabled": false }
///   }
/// }
/// ```
///
/// Each service's keys, all optional:
///
/// | key | type | default | meaning |
/// | --- | --- | --- | --- |
/// | `enabled` | Boolean | `true` | `false` keeps the service from loading |
/// | `priority` | integer (32-bit) | the plugin's | higher starts earlier among services free to start |
/// | `requires` | array of ids | `[]` | must start first; missing or disabled is an error |
/// | `after` | array of ids | `[]` | start first when they run; missing or disabled is ignored |
/// | `settings` | object | none | handed to the service at launch |
/// | `policy` | `"required"` or `"optional"` | `"optional"` | whether a failure stops the host |
/// | `isolation` | `"in-process"` or `"process"` | unset | where the service runs |
/// | `trusted` | Boolean | unset | |
/// | `eventTimeout` | seconds, more than 0 and at most 86400 (a day) | unset | |
/// | `sha256` | 64 hex digits | unset | the digest the plugin file must have |
/// | `restartResetAfter` | seconds, > 0, at most a year | unset | a crash-looped service starts again after it |
/// | `sandbox` | object (``Sandbox``) | unset | its limits and syscall profile, over the top-level `sandbox` |
///
/// The top-level `sandbox` object is the default sandbox of every service that runs in a worker
/// process (`memoryMax`, `cpuQuota`, `tasksMax`, `ioWeight`, `syscalls`: see <doc:Isolation>).
///
/// Because JSON objects are unordered, the order of entries in the file means nothing: the
/// start order comes from `requires`, `after` and priority, then load order (``StartPlan``).
/// Unknown keys and wrong types are errors naming the key's path, so a typo never passes
/// silently. `--only-configured` is a command-line flag, not a key.
public struct HostConfiguration: Sendable, Equatable {
    /// The configured services by id.
    public var services: [String: ServiceConfiguration]
    /// `signatures`, `trustedKeys` and `revokedKeys`: which signers' plugins load (issue 40).
    public var trust = TrustSettings()
    /// `notifications` and `notificationCategories`: desktop notifications (issue 39).
    public var notifications = DesktopNotificationSettings()
    /// The top-level `sandbox`: every process-isolated service's default sandbox (issue 43).
    public var sandbox: Sandbox?
    /// The top-level `sources`: system sources switched on or off by name, `{"sleep": "off"}`
    /// (issue 38); `--source NAME=on|off` wins.
    public var sources: [String: Bool] = [:]

    /// The file looked for in the first plugin directory when `--config` is not given.
    public static let defaultFileName = "services.json"
    /// The largest configuration file read, in bytes.
    public static let maxFileSize = 16 << 20

    /// The entry of service `id`, if any. Without a configuration (most hosts) nothing is
    /// looked up: a lookup in an empty table still hashes the id, for every service at every start.
    public func service(_ id: String) -> ServiceConfiguration? { services.isEmpty ? nil : services[id] }

    /// A configuration listing `services` (a later duplicate id wins).
    public init(services: [ServiceConfiguration] = []) {
        self.services = Dictionary(services.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// `services.json` in the first plugin directory, or nil when there is none.
    public static func defaultPath(pluginDirectories: [String]) -> String? {
        guard let first = pluginDirectories.first else { return nil }
        return (first.hasSuffix("/") ? first : first + "/") + defaultFileName
    }

    /// Reads and checks the configuration file at `path`. Unless `allowInsecure`, it is refused
    /// when another user could change it or a directory on its path (it can mark services
    /// trusted), as plugin files are.
    public static func load(path: String, allowInsecure: Bool = false) throws(ConfigurationError) -> HostConfiguration {
        try parse(bytes: try readFile(path, allowInsecure: allowInsecure), file: path, allowInsecure: allowInsecure)
    }

    /// ``load(path:allowInsecure:)``, or nil when nothing exists at `path` (the default file is
    /// optional).
    public static func loadIfPresent(path: String, allowInsecure: Bool = false) throws(ConfigurationError)
        -> HostConfiguration?
    {
        do {
            return try load(path: path, allowInsecure: allowInsecure)
        } catch {
            if case .unreadable(let system) = error.code, system.errno == ENOENT, system.operation == "open" {
                return nil
            }
            throw error
        }
    }

    /// Parses configuration text; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> HostConfiguration {
        try parse(bytes: Array(text.utf8), file: file)
    }

    /// Parses configuration bytes (UTF-8 JSON); `file` names it in errors. A key file it names
    /// (`trustedKeys`) is held to the configuration file's own rule unless `allowInsecure`.
    public static func parse(bytes: [UInt8], file: String, allowInsecure: Bool = false) throws(ConfigurationError)
        -> HostConfiguration
    {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: bytes)
        } catch {
            let (line, column) = position(of: error.offset, in: bytes)
            throw ConfigurationError(file: file, code: .syntax(line: line, column: column, reason: error.reason))
        }
        return try ConfigurationReader(file: file, allowInsecure: allowInsecure).read(document)
    }

    private static func readFile(_ path: String, allowInsecure: Bool) throws(ConfigurationError) -> [UInt8] {
        let file: ReadOnlyFile
        do { file = try ReadOnlyFile(path: path) } catch {
            throw ConfigurationError(file: path, code: .unreadable(error))
        }
        if let kind = PluginScanner.nonRegularKind(file.status.st_mode) {
            throw ConfigurationError(file: path, code: .notRegularFile(kind: kind))
        }
        if !allowInsecure, let problem = FileSecurity.pathProblem(path, what: "configuration file") {
            throw ConfigurationError(file: path, code: .insecure(detail: problem))
        }
        guard file.size <= maxFileSize else { throw ConfigurationError(file: path, code: .tooLarge(bytes: file.size)) }
        let bytes: [UInt8]
        // One byte more than fstat said, so a file that grew meanwhile is still caught.
        do { bytes = try file.read(at: 0, count: file.size + 1) } catch {
            throw ConfigurationError(file: path, code: .unreadable(error))
        }
        guard bytes.count <= maxFileSize else {
            throw ConfigurationError(file: path, code: .tooLarge(bytes: bytes.count))
        }
        return bytes
    }

    /// The 1-based line and byte column of `offset`.
    private static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return (line, offset - lineStart + 1)
    }
}
