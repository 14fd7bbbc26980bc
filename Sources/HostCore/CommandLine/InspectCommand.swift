import Glibc
import ServiceJSON

/// `host inspect PATH…`: what each plugin file declares, read without running it.
public enum InspectCommand {
    /// The result for one file.
    public typealias Result = Swift.Result<PluginInspector.Inspected, LoadFailure>

    /// What `host inspect` was asked.
    public struct Options: Sendable {
        /// `--json`: print a JSON array.
        public var json = false
        /// `--state-dir DIR`: where the failure records are.
        public var stateDirectory = (try? StateDirectory.defaultPath()) ?? ""  // none: no failure records to show
        /// `--no-cache`: read every file, neither using nor writing the registry cache.
        public var useCache = true
        /// `--config FILE`: check the files against its pins and signature settings, as the host would.
        public var configurationPath: String?
        /// `--security`: what each service would be allowed, and its score (issue 43).
        public var security = false
        /// `--isolation MODE`: where services run unless the configuration says (with `--security`).
        public var isolation: ServiceConfiguration.Isolation = .inProcess
    }

    /// A file's minisign signature as `host inspect` shows it.
    public struct Signature: Sendable, Equatable {
        /// The signer's key id (16 hex digits, as minisign prints it).
        public var keyID: String
        /// The trusted key's name in the configuration, when it verified against one.
        public var keyName: String?
        /// The signature's trusted comment.
        public var trustedComment: String
        /// Whether it signs the file's BLAKE2b-512 (`ED`) rather than the file (`Ed`).
        public var prehashed: Bool
        /// True when it verified against the `--config` file's trusted keys; nil when not checked.
        public var verified: Bool?
    }

    /// The options of `host inspect`, in the order its help lists them.
    public static let table = OptionTable<Options>(
        "inspect",
        [
            .flag("--json", "the same as a JSON array") { $0.json = true },
            .value(
                "--state-dir", "DIR",
                "show the services a crash loop marked failed there\n(default: the host's state directory)"
            ) {
                $0.stateDirectory = $1
            },
            .flag(
                "--no-cache", "read every file, neither using nor updating the\nregistry cache in the state directory"
            ) { $0.useCache = false },
            .value(
                "--config", "FILE",
                "check digests and signatures as this configuration\nfile says, refusing what the host would refuse"
            ) { $0.configurationPath = $1 },
            .flag(
                "--security",
                "what each service may do (user, system calls, writes,\nnetwork, limits) and its exposure from 0 to 10;\nID operands pick services"
            ) { $0.security = true },
            .value(
                "--isolation", "MODE", "with --security: in-process (default) or process,\nas the host's --isolation"
            ) {
                (options, text) throws(UsageError) in
                guard let mode = ServiceConfiguration.Isolation(rawValue: text) else {
                    throw UsageError("inspect: --isolation: expected in-process or process, found \(text)")
                }
                options.isolation = mode
            },
        ])

    /// The text of `host inspect --help`.
    public static var help: String {
        """
        host inspect [--json] [--state-dir DIR] [--no-cache] [--config FILE] [PATH…]
          print each plugin's services, versions, ABI and events from its static
          metadata, running no plugin code; directories give their *.so files;
          without PATH, the deployed generation current in the state directory
        host inspect --security [--isolation MODE] [--config FILE] [ID|PATH…]
          print what each service would be allowed and its exposure (0 to 10)

        \(table.help)
        """
    }

    /// Parses `[--json] [--state-dir DIR] [--no-cache] PATH…` and inspects every path; directories give
    /// their `*.so` files. The state directory's failure records (issue 5) say which services
    /// a crash loop marked failed.
    public static func run(_ arguments: [String]) throws(UsageError) -> (
        json: Bool, results: [Result], failures: FailureStore, signatures: [String: Signature]
    ) {
        var parsed = try table.parse(arguments, from: Options())
        // `--security ID`: an operand that is no file but a service id picks that service.
        if parsed.options.security {
            parsed.operands = parsed.operands.filter {
                access(PathBytes.cString($0), F_OK) == 0 || !ServiceID.isValid($0)
            }
        }
        var paths = parsed.operands
        var configurationPath = parsed.options.configurationPath
        if paths.isEmpty {
            // No path: the deployed generation the host runs, with its own configuration.
            guard
                let current = Host.currentGeneration(
                    in: parsed.options.stateDirectory, base: LoadSettings(directories: []))
            else {
                throw UsageError(
                    "inspect: give one or more plugin files or directories (no deployed generation is current in \(parsed.options.stateDirectory))"
                )
            }
            paths = current.settings.directories
            configurationPath = configurationPath ?? current.settings.configurationPath
        }
        var configuration: HostConfiguration?
        if let path = configurationPath {
            // Reading runs nothing: an insecure configuration is inspected too, as files are.
            do { configuration = try HostConfiguration.load(path: path, allowInsecure: true) } catch {
                throw UsageError("inspect: \(error)")
            }
        }
        var results: [Result] = []
        // The host's registry: a file it knows unchanged costs one stat.
        let registry =
            parsed.options.useCache ? RegistryCache.forInspection(stateDirectory: parsed.options.stateDirectory) : nil
        let inspect = { (path: String) in PluginInspector.inspect(path: path, registry: registry) }
        var scanned: [String] = []
        defer { registry?.save(scanned: scanned) }
        for path in paths {
            if isDirectory(path) {
                // Reading metadata runs nothing, so inspect shows insecure files too.
                do {
                    let entries = try PluginScanner.scanFiles(directory: path, allowInsecure: true)
                    scanned.append(path)
                    results += entries.map { $0.flatMap { PluginInspector.inspect($0, registry: registry) } }
                } catch {
                    results.append(
                        .failure(
                            LoadFailure(
                                path: path, reason: .notRegularFile(kind: "unreadable directory: \(error.reason)"))))
                }
            } else {
                // A path as typed; the loader carries paths escaped (PathBytes).
                results.append(PluginScanner.check(path: PathBytes.escape(path), allowInsecure: true).flatMap(inspect))
            }
        }
        var signatures: [String: Signature] = [:]
        results = results.map { result in
            guard case .success(let plugin) = result else { return result }
            if let configuration, PluginTrust.isActive(configuration) {
                switch PluginTrust.check(plugin, configuration: configuration) {
                case .failure(let reason): return .failure(LoadFailure(path: plugin.path, reason: reason))
                case .success(let signer?):
                    signatures[plugin.path] = Signature(
                        keyID: signer.keyID, keyName: signer.name, trustedComment: signer.trustedComment,
                        prehashed: signer.prehashed, verified: true)
                    return result
                case .success(nil): break
                }
            }
            if let found = (try? PluginTrust.readSignature(plugin.path)) ?? nil {
                signatures[plugin.path] = Signature(
                    keyID: found.signature.keyIDText, keyName: nil, trustedComment: found.signature.trustedCommentText,
                    prehashed: found.signature.prehashed, verified: nil)
            }
            return result
        }
        // The verdicts found are written once for all the files.
        PluginTrust.cache.save()
        return (
            parsed.options.json, results, FailureStore(stateDirectory: parsed.options.stateDirectory).listed(),
            signatures
        )
    }

    /// `host inspect --security`: the exposure of each service of the files (the ids among
    /// `arguments` pick some) with the configuration's sandboxes, `--json` an array. Failed
    /// files come back too (the exit status says so).
    public static func security(_ arguments: [String]) throws(UsageError) -> (json: Bool, text: String, valid: Bool) {
        let parsed = try table.parse(arguments, from: Options())
        let ids = Set(parsed.operands.filter { access(PathBytes.cString($0), F_OK) != 0 && ServiceID.isValid($0) })
        let (json, results, _, _) = try run(arguments)
        var configuration = HostConfiguration()
        var configurationPath = parsed.options.configurationPath
        if configurationPath == nil, parsed.operands.count == ids.count {
            configurationPath =
                Host.currentGeneration(in: parsed.options.stateDirectory, base: LoadSettings(directories: []))?
                .settings.configurationPath
        }
        if let path = configurationPath, let read = try? HostConfiguration.load(path: path, allowInsecure: true) {
            configuration = read
        }
        var options = IsolationOptions()
        options.isolation = parsed.options.isolation
        var settings = IsolationSettings(options, stateDirectory: "")
        settings.adopt(configuration)
        var exposures: [SecurityExposure] = []
        var failures: [String] = []
        for result in results {
            switch result {
            case .failure(let failure): failures.append("\(failure.path)\n  not loadable: \(failure.message)")
            case .success(let plugin):
                for service in plugin.metadata.services where ids.isEmpty || ids.contains(service.id) {
                    exposures.append(
                        SecurityExposure(
                            service: service.id, isolated: settings.isolation(for: service.id) == .process,
                            sandbox: settings.sandbox(for: service.id), hostUser: getuid()))
                }
            }
        }
        let missing = ids.subtracting(exposures.map(\.service)).sorted()
        failures += missing.map { "\($0)\n  not found: no file given declares it" }
        let valid = failures.isEmpty
        if json {
            return (json, JSONValue.array(exposures.map(\.json)).serialized + "\n", valid)
        }
        return (json, (exposures.map(\.text) + failures).joined(separator: "\n\n") + "\n", valid)
    }

    /// The failure record that keeps `service` of `plugin` from starting, if any.
    static func failure(of service: String, in plugin: PluginInspector.Inspected, _ failures: FailureStore?)
        -> FailureRecord?
    {
        guard let record = failures?.record(for: service),
            record.path == plugin.path || sameFile(record.path, plugin.path),
            record.blocks(plugin.identity)
        else { return nil }
        return record
    }

    private static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat()
        var second = stat()
        return stat(PathBytes.cString(a), &first) == 0 && stat(PathBytes.cString(b), &second) == 0
            && first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// Human-readable text, one block per file; `failures` adds services marked failed.
    public static func text(
        _ results: [Result], failures: FailureStore? = nil, signatures: [String: Signature] = [:]
    ) -> String {
        // One string for every file, blocks separated by a blank line: 1000 files were 1000
        // strings and a join.
        var out = ""
        out.reserveCapacity(results.count * 320)
        var lastEvents: (mask: EventMask, names: String)?
        for (index, result) in results.enumerated() {
            if index > 0 { out += "\n" }
            switch result {
            case .failure(let failure):
                out += "\(failure.path)\n  not loadable: \(failure.message)\n"
            case .success(let plugin):
                // Appended piece by piece (no interpolation temporaries), and the events line of
                // the previous service reused when its mask is the same: plugins built alike
                // share one, and naming a mask walks every event kind.
                let meta = plugin.metadata
                out += plugin.path
                out += "\n  ABI "
                out += String(meta.abiVersion)
                out += " (speaks "
                out += String(meta.abiMin)
                out += " to "
                out += String(meta.abiVersion)
                out += "), built with "
                out += shown(meta.toolchain)
                if !meta.sdkVersion.isEmpty {
                    out += ", ServiceKit "
                    out += shown(meta.sdkVersion)
                }
                out += "\n"
                if !signatures.isEmpty, let signature = signatures[plugin.path] {
                    out += "  signed by key \(signature.keyID)"
                    if let name = signature.keyName { out += " (\(name))" }
                    out += signature.verified == true ? ", verified" : ", not verified (give --config)"
                    out += signature.prehashed ? "" : ", legacy signature of the whole file"
                    out += "\n  trusted comment: \(signature.trustedComment)\n"
                }
                for service in meta.services {
                    out += "  service "
                    out += service.id
                    out += "\n    name:     "
                    out += shown(service.name)
                    out += "\n    version:  "
                    out += shown(service.version)
                    out += "\n    priority: "
                    out += String(service.priority)
                    out += "\n    events:   "
                    if lastEvents?.mask != service.events {
                        lastEvents = (service.events, eventNames(service.events).joined(separator: ", "))
                    }
                    out += lastEvents?.names ?? ""
                    out += "\n"
                    list("    urls:      ", service.urls, into: &out)
                    list("    activities: ", service.activities, into: &out)
                    list("    subscribes: ", service.subscriptions, into: &out)
                    if !service.requires.isEmpty {
                        list("    requires:  ", service.requires.map(\.description), into: &out)
                    }
                    list("    after:     ", service.after, into: &out)
                    list("    answers:   ", service.answers, into: &out)
                    list("    shortcuts: ", service.shortcuts.map(\.description), into: &out)
                    if service.lazy { out += "    activation: lazy\n" }
                    if let schema = service.settingsSchema {
                        out += "    settings:\n"
                        for line in schema.lines {
                            out += "      "
                            out += shown(line)
                            out += "\n"
                        }
                    }
                    if let record = failure(of: service.id, in: plugin, failures) {
                        out += "    failed:   \(record.summary); not started until this file changes\n"
                    }
                }
            }
        }
        return out
    }

    /// `text` (a string of a plugin's metadata) with its control characters as `\u{HH}`: a
    /// newline in a service's name must not forge a line of the text (paths are escaped
    /// already, see ``PathBytes``).
    private static func shown(_ text: String) -> String {
        // Nearly every string: no byte of a control character (C0, DEL, and 0xC2, which leads C1).
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F && $0 != 0xC2 }) { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory == .control {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `label` (padded to the value column), then `values` separated by commas; nothing when empty.
    private static func list(_ label: String, _ values: [String], into out: inout String) {
        guard let first = values.first else { return }
        out += label
        out += shown(first)
        for value in values.dropFirst() {
            out += ", "
            out += shown(value)
        }
        out += "\n"
    }

    /// A JSON array, one object per file; `failures` adds a `failure` to services marked failed.
    public static func json(
        _ results: [Result], failures: FailureStore? = nil, signatures: [String: Signature] = [:]
    ) -> String {
        JSONText.array(
            results.map { result in
                switch result {
                case .failure(let failure):
                    return JSONText.object([
                        "path": JSONText.string(failure.path), "valid": "false",
                        "reason": JSONText.string(failure.message),
                    ])
                case .success(let plugin):
                    let meta = plugin.metadata
                    return JSONText.object([
                        "path": JSONText.string(plugin.path), "valid": "true",
                        "abiVersion": String(meta.abiVersion), "abiMin": String(meta.abiMin),
                        "toolchain": JSONText.string(meta.toolchain), "sdkVersion": JSONText.string(meta.sdkVersion),
                        "signature": signatures.isEmpty ? "null" : signatures[plugin.path].map(signatureJSON) ?? "null",
                        "services": JSONText.array(
                            meta.services.map { service in
                                JSONText.object([
                                    "id": JSONText.string(service.id), "name": JSONText.string(service.name),
                                    "version": JSONText.string(service.version), "priority": String(service.priority),
                                    "events": JSONText.array(eventNames(service.events).map(JSONText.string)),
                                    "urls": JSONText.array(service.urls.map(JSONText.string)),
                                    "activities": JSONText.array(service.activities.map(JSONText.string)),
                                    "subscribes": JSONText.array(service.subscriptions.map(JSONText.string)),
                                    "requires": JSONText.array(
                                        service.requires.map { JSONText.string($0.description) }),
                                    "after": JSONText.array(service.after.map(JSONText.string)),
                                    "answers": JSONText.array(service.answers.map(JSONText.string)),
                                    "shortcuts": JSONText.array(service.shortcuts.map(\.json)),
                                    "activation": JSONText.string(service.lazy ? "lazy" : "eager"),
                                    "settingsSchema": service.settingsSchema?.json.serialized ?? "null",
                                    "failure": failure(of: service.id, in: plugin, failures)?.json.serialized ?? "null",
                                ])
                            }),
                    ])
                }
            }) + "\n"
    }

    private static func signatureJSON(_ signature: Signature) -> String {
        JSONText.object([
            "keyId": JSONText.string(signature.keyID), "keyName": signature.keyName.map(JSONText.string) ?? "null",
            "trustedComment": JSONText.string(signature.trustedComment),
            "prehashed": signature.prehashed ? "true" : "false",
            "verified": signature.verified.map { $0 ? "true" : "false" } ?? "null",
        ])
    }

    /// Known event names, then unknown kinds as "event N".
    static func eventNames(_ mask: EventMask) -> [String] {
        mask.knownKinds.map(\.name) + mask.unknownRawKinds.map { "event \($0)" }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }
}
