import Glibc
import ServiceJSON

/// Turns a parsed configuration document into a ``HostConfiguration``, checking every key and
/// type and naming the key's JSON path in each error.
struct ConfigurationReader {
    let file: String
    /// `--allow-insecure-plugins`: key files others could write are read anyway.
    var allowInsecure = false

    static let topLevelKeys = [
        "notificationCategories", "notifications", "revokedKeys", "sandbox", "services", "signatures", "sources",
        "trustedKeys",
    ]
    static let serviceKeys = [
        "enabled", "priority", "requires", "bindsTo", "partOf", "after", "settings", "policy", "isolation", "trusted",
        "eventTimeout",
        "restartResetAfter", "healthCheck", "activation",
        "requests", "sha256", "sandbox",
    ]

    func read(_ document: JSONValue) throws(ConfigurationError) -> HostConfiguration {
        guard let top = document.objectValue else {
            throw fail(
                "", "the configuration must be a JSON object like {\"services\": {…}}, found \(Self.describe(document))"
            )
        }
        try checkKeys(top, allowed: Self.topLevelKeys, at: "") { key in
            key == "onlyConfigured" || key == "only-configured"
                ? " (--only-configured is a command-line flag, not a configuration key)" : nil
        }
        var configuration = HostConfiguration()
        configuration.trust = try readTrust(top)
        configuration.notifications = try readNotifications(top)
        if let value = top["sandbox"] { configuration.sandbox = try sandbox(value, at: "sandbox") }
        if let value = top["sources"] { configuration.sources = try sources(value) }
        guard let servicesValue = top["services"] else { return configuration }
        guard let services = servicesValue.objectValue else {
            throw fail("services", "expected an object keyed by service id, found \(Self.describe(servicesValue))")
        }
        // Sorted, so the first error reported does not depend on hashing.
        for id in services.keys.sorted() {
            configuration.services[id] = try readService(id, services[id]!)
        }
        return configuration
    }

    private func readService(_ id: String, _ value: JSONValue) throws(ConfigurationError) -> ServiceConfiguration {
        let path = "services." + id
        if let problem = ServiceID.problem(with: id) { throw fail(path, "invalid service id \"\(id)\": it \(problem)") }
        guard let members = value.objectValue else {
            throw fail(path, "expected an object of settings for the service, found \(Self.describe(value))")
        }
        try checkKeys(members, allowed: Self.serviceKeys, at: path) { _ in nil }
        var service = ServiceConfiguration(id: id)
        if let value = members["enabled"] { service.enabled = try bool(value, at: path + ".enabled") }
        if let value = members["priority"] { service.priority = try int32(value, at: path + ".priority") }
        if let value = members["requires"] { service.requires = try ids(value, at: path + ".requires", owner: id) }
        if let value = members["after"] { service.after = try ids(value, at: path + ".after", owner: id) }
        // The stronger forms require too: the start plan, `host check` and the cycle check see
        // them as `requires` edges.
        if let value = members["bindsTo"] { service.bindsTo = try ids(value, at: path + ".bindsTo", owner: id) }
        if let value = members["partOf"] { service.partOf = try ids(value, at: path + ".partOf", owner: id) }
        if let both = service.partOf.first(where: service.bindsTo.contains) {
            throw fail(
                path + ".partOf",
                "\(both) is in bindsTo too: \(id) either stops and starts with \(both) (bindsTo) or only follows"
                    + " its restarts (partOf), not both")
        }
        for provider in service.bindsTo + service.partOf where !service.requires.contains(provider) {
            service.requires.append(provider)
        }
        if let value = members["settings"] {
            guard let object = value.objectValue else {
                throw fail(path + ".settings", "expected an object, found \(Self.describe(value))")
            }
            service.setSettings(object)
        }
        if let value = members["policy"] { service.policy = try choice(value, at: path + ".policy") }
        if let value = members["isolation"] { service.isolation = try choice(value, at: path + ".isolation") }
        if let value = members["trusted"] { service.trusted = try bool(value, at: path + ".trusted") }
        if let value = members["activation"] { service.activation = try choice(value, at: path + ".activation") }
        if let value = members["eventTimeout"] {
            service.eventTimeout = try seconds(value, at: path + ".eventTimeout")
        }
        if let value = members["restartResetAfter"] {
            // Bounded: a timer of more seconds than a year is a typo, and DispatchTime traps on
            // an interval past its range.
            guard let seconds = value.doubleValue, seconds > 0, seconds <= ServiceConfiguration.longestResetAfter
            else {
                throw fail(
                    path + ".restartResetAfter",
                    "expected a number of seconds greater than 0 and at most"
                        + " \(Int(ServiceConfiguration.longestResetAfter)) (a year), found \(Self.describe(value))")
            }
            service.restartResetAfter = seconds
        }
        if let value = members["healthCheck"] {
            service.healthCheck = try healthCheck(value, at: path + ".healthCheck")
        }
        if let value = members["requests"] { service.requests = try choice(value, at: path + ".requests") }
        if let value = members["sha256"] { service.sha256 = try sha256(value, at: path + ".sha256") }
        if let value = members["sandbox"] { service.sandbox = try sandbox(value, at: path + ".sandbox") }
        return service
    }

    // MARK: System sources (issue 38)

    /// `"sources": {"sleep": "off", "power": "on"}`: each a built-in source's name.
    private func sources(_ value: JSONValue) throws(ConfigurationError) -> [String: Bool] {
        guard let members = value.objectValue else {
            throw fail(
                "sources", "expected an object of \"on\" or \"off\" by source name, found \(Self.describe(value))")
        }
        try checkKeys(members, allowed: SystemSources.builtInNames, at: "sources") { _ in nil }
        var switches: [String: Bool] = [:]
        // Sorted, so the first error reported does not depend on hashing.
        for name in members.keys.sorted() {
            guard let word = members[name]!.stringValue, let on = ["on": true, "off": false][word] else {
                throw fail("sources." + name, "expected \"on\" or \"off\", found \(Self.describe(members[name]!))")
            }
            switches[name] = on
        }
        return switches
    }

    // MARK: Notifications (issue 39)

    func readNotifications(_ top: [String: JSONValue]) throws(ConfigurationError) -> DesktopNotificationSettings {
        var settings = DesktopNotificationSettings()
        if let value = top["notifications"] {
            guard let word = value.stringValue, let on = ["on": true, "off": false][word] else {
                throw fail("notifications", "expected \"on\" or \"off\", found \(Self.describe(value))")
            }
            settings.enabled = on
        }
        guard let value = top["notificationCategories"] else { return settings }
        guard let categories = value.objectValue else {
            throw fail(
                "notificationCategories", "expected an object of actions by category id, found \(Self.describe(value))")
        }
        for id in categories.keys.sorted() {
            let path = "notificationCategories." + id
            guard let entries = categories[id]!.arrayValue else {
                throw fail(
                    path, "expected an array of {\"id\", \"title\"} actions, found \(Self.describe(categories[id]!))")
            }
            guard entries.count <= DesktopNotificationSettings.maxActions else {
                throw fail(
                    path, "\(entries.count) actions; a category has at most \(DesktopNotificationSettings.maxActions)")
            }
            var actions: [DesktopNotification.Action] = []
            for (index, entry) in entries.enumerated() {
                let at = "\(path)[\(index)]"
                guard let members = entry.objectValue else {
                    throw fail(at, "expected {\"id\": …, \"title\": …}, found \(Self.describe(entry))")
                }
                try checkKeys(members, allowed: ["id", "title"], at: at) { _ in nil }
                guard let action = members["id"]?.stringValue, Self.isPlainText(action) else {
                    throw fail(at + ".id", "expected a non-empty string without control characters")
                }
                // "default" is the click on the notification itself (the default action).
                guard action != DesktopNotification.defaultAction else {
                    throw fail(at + ".id", "\"default\" is the click on the notification itself; choose another id")
                }
                guard !actions.contains(where: { $0.id == action }) else {
                    throw fail(at + ".id", "action \"\(action)\" is listed twice")
                }
                guard let title = members["title"]?.stringValue, Self.isPlainText(title) else {
                    throw fail(at + ".title", "expected a non-empty string without control characters")
                }
                actions.append(.init(id: action, title: title))
            }
            settings.categories[id] = actions
        }
        return settings
    }

    private static func isPlainText(_ text: String) -> Bool {
        !text.isEmpty && !text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    // MARK: Sandbox (issue 43)

    /// A `"sandbox"` object: each key checked against its range, named in the error.
    private func sandbox(_ value: JSONValue, at path: String) throws(ConfigurationError) -> Sandbox {
        guard let members = value.objectValue else {
            throw fail(path, "expected an object like {\"memoryMax\": \"256M\"}, found \(Self.describe(value))")
        }
        try checkKeys(members, allowed: Sandbox.keys, at: path) { _ in nil }
        var sandbox = Sandbox()
        if let value = members["memoryMax"] {
            let range = Sandbox.memoryRange
            let bytes = value.stringValue.flatMap(Sandbox.bytes) ?? value.doubleValue.flatMap { UInt64(exactly: $0) }
            guard let bytes, range.contains(bytes) else {
                throw fail(
                    path + ".memoryMax",
                    "expected bytes (a number, or digits with K, M, G or T) from 1M to \(Sandbox.text(bytes: range.upperBound)),"
                        + " found \(Self.describe(value))")
            }
            sandbox.memoryMax = bytes
        }
        if let value = members["cpuQuota"] {
            guard let percent = value.doubleValue, Sandbox.cpuRange.contains(percent) else {
                throw fail(
                    path + ".cpuQuota",
                    "expected a percentage of one core from 1 to \(Int(Sandbox.cpuRange.upperBound)),"
                        + " found \(Self.describe(value))")
            }
            sandbox.cpuQuota = percent
        }
        if let value = members["tasksMax"] {
            sandbox.tasksMax = try integer(value, in: Sandbox.tasksRange, at: path + ".tasksMax")
        }
        if let value = members["ioWeight"] {
            sandbox.ioWeight = try integer(value, in: Sandbox.ioWeightRange, at: path + ".ioWeight")
        }
        if let value = members["syscalls"] { try syscalls(value, at: path + ".syscalls", into: &sandbox) }
        if let value = members["user"] {
            sandbox.user = try account(value, at: path + ".user", lookup: { getpwnam($0) != nil }, what: "user")
        }
        if let value = members["group"] {
            sandbox.group = try account(value, at: path + ".group", lookup: { getgrnam($0) != nil }, what: "group")
        }
        if let value = members["dynamicUser"] {
            sandbox.dynamicUser = try bool(value, at: path + ".dynamicUser")
            if sandbox.dynamicUser == true, sandbox.user != nil || sandbox.group != nil {
                throw fail(path + ".dynamicUser", "a dynamic user cannot be combined with \"user\" or \"group\"")
            }
        }
        if let value = members["writablePaths"] {
            guard let entries = value.arrayValue else {
                throw fail(
                    path + ".writablePaths", "expected an array of absolute paths, found \(Self.describe(value))")
            }
            var paths: [String] = []
            for (index, entry) in entries.enumerated() {
                let at = path + ".writablePaths[\(index)]"
                guard let text = entry.stringValue, text.hasPrefix("/"), !text.utf8.contains(0) else {
                    throw fail(at, "expected an absolute path, found \(Self.describe(entry))")
                }
                guard access(text, F_OK) == 0 else { throw fail(at, "\(SystemError.current("access", text))") }
                paths.append(text)
            }
            sandbox.writablePaths = paths
        }
        if let value = members["network"] { sandbox.network = try bool(value, at: path + ".network") }
        if let value = members["audit"] { sandbox.audit = try bool(value, at: path + ".audit") }
        return sandbox
    }

    /// `syscalls`: a profile's name, or `{"profile": …, "allow": [names], "deny": [names]}`, each
    /// name one this architecture numbers.
    private func syscalls(_ value: JSONValue, at path: String, into sandbox: inout Sandbox) throws(ConfigurationError) {
        guard let members = value.objectValue else {
            sandbox.syscalls = try choice(value, at: path)
            return
        }
        try checkKeys(members, allowed: ["allow", "deny", "profile"], at: path) { _ in nil }
        if let profile = members["profile"] { sandbox.syscalls = try choice(profile, at: path + ".profile") }
        func names(_ key: String) throws(ConfigurationError) -> [String]? {
            guard let value = members[key] else { return nil }
            guard let entries = value.arrayValue else {
                throw fail(path + "." + key, "expected an array of system call names, found \(Self.describe(value))")
            }
            var names: [String] = []
            for (index, entry) in entries.enumerated() {
                guard let name = entry.stringValue, SyscallFilter.number(name) != nil else {
                    throw fail(
                        path + ".\(key)[\(index)]",
                        "expected the name of a system call of this architecture, found \(Self.describe(entry))")
                }
                names.append(name)
            }
            return names
        }
        sandbox.allowSyscalls = try names("allow")
        sandbox.denySyscalls = try names("deny")
    }

    /// `user` or `group`: a name the system knows, or a number (an id, which needs no entry).
    private func account(_ value: JSONValue, at path: String, lookup: (String) -> Bool, what: String)
        throws(ConfigurationError) -> String
    {
        if let number = value.doubleValue, let id = UInt32(exactly: number), id != UInt32.max { return String(id) }
        guard let name = value.stringValue, !name.isEmpty else {
            throw fail(path, "expected a \(what) name or id, found \(Self.describe(value))")
        }
        if UInt32(name).map({ $0 != UInt32.max }) == true { return name }
        guard lookup(name) else { throw fail(path, "no \(what) \"\(name)\" on this system") }
        return name
    }

    private func integer(_ value: JSONValue, in range: ClosedRange<Int>, at path: String) throws(ConfigurationError)
        -> Int
    {
        guard let number = value.doubleValue, let integer = Int(exactly: number), range.contains(integer) else {
            throw fail(
                path,
                "expected an integer from \(range.lowerBound) to \(range.upperBound), found \(Self.describe(value))")
        }
        return integer
    }

    // MARK: Trust (issue 40)

    private func readTrust(_ top: [String: JSONValue]) throws(ConfigurationError) -> TrustSettings {
        var trust = TrustSettings()
        if let value = top["signatures"] { trust.signatures = try choice(value, at: "signatures") }
        if let value = top["trustedKeys"] {
            guard let entries = value.arrayValue else {
                throw fail("trustedKeys", "expected an array of minisign public keys, found \(Self.describe(value))")
            }
            for (index, entry) in entries.enumerated() {
                let key = try trustedKey(entry, at: "trustedKeys[\(index)]")
                if trust.trustedKeys.contains(where: { $0.keyID == key.keyID }) {
                    throw fail("trustedKeys[\(index)]", "key \(key.keyIDText) is listed twice")
                }
                trust.trustedKeys.append(key)
            }
        }
        if let value = top["revokedKeys"] {
            guard let entries = value.arrayValue else {
                throw fail("revokedKeys", "expected an array of key ids or public keys, found \(Self.describe(value))")
            }
            for (index, entry) in entries.enumerated() {
                trust.revokedKeyIDs.insert(try revokedKeyID(entry, at: "revokedKeys[\(index)]"))
            }
        }
        if trust.signatures == .required && trust.trustedKeys.isEmpty {
            throw fail("trustedKeys", "\"signatures\": \"required\" needs at least one trusted key")
        }
        return trust
    }

    /// `"RWQ…"`, `{"key": "RWQ…", "name": …}` or `{"file": "minisign.pub", "name": …}` (a relative
    /// file from the configuration file's folder).
    private func trustedKey(_ value: JSONValue, at path: String) throws(ConfigurationError) -> TrustSettings.TrustedKey
    {
        var name: String?
        let parsed: Minisign.PublicKey
        if let text = value.stringValue {
            parsed = try publicKey(at: path) { () throws(Minisign.FormatError) in try Minisign.PublicKey(base64: text) }
        } else if let object = value.objectValue {
            try checkKeys(object, allowed: ["file", "key", "name"], at: path) { _ in nil }
            if let given = object["name"] {
                guard let text = given.stringValue else {
                    throw fail(path + ".name", "expected a string, found \(Self.describe(given))")
                }
                name = text
            }
            switch (object["key"], object["file"]) {
            case (let key?, nil):
                guard let text = key.stringValue else {
                    throw fail(path + ".key", "expected a base64 public key, found \(Self.describe(key))")
                }
                parsed = try publicKey(at: path + ".key") { () throws(Minisign.FormatError) in
                    try Minisign.PublicKey(base64: text)
                }
            case (nil, let file?):
                guard let text = file.stringValue, !text.isEmpty else {
                    throw fail(path + ".file", "expected a file name, found \(Self.describe(file))")
                }
                let bytes = try keyFile(text, at: path + ".file")
                parsed = try publicKey(at: path + ".file") { () throws(Minisign.FormatError) in
                    try Minisign.PublicKey(file: bytes)
                }
            default:
                throw fail(path, "expected one of \"key\" or \"file\"")
            }
        } else {
            throw fail(
                path,
                "expected a base64 public key or an object with \"key\" or \"file\", found \(Self.describe(value))")
        }
        return TrustSettings.TrustedKey(name: name, keyID: parsed.keyID, key: parsed.key)
    }

    private func publicKey(
        at path: String, _ parse: () throws(Minisign.FormatError) -> Minisign.PublicKey
    ) throws(ConfigurationError) -> Minisign.PublicKey {
        do { return try parse() } catch { throw fail(path, "not a minisign public key: \(error.reason)") }
    }

    /// A key id (16 hex digits) or a public key whose id is revoked.
    private func revokedKeyID(_ value: JSONValue, at path: String) throws(ConfigurationError) -> String {
        guard let text = value.stringValue else {
            throw fail(path, "expected a key id or a public key, found \(Self.describe(value))")
        }
        // minisign prints a key id without leading zeros (`%llX`): one in 16 ids has 15 digits.
        if (1...16).contains(text.utf8.count), text.utf8.allSatisfy({ Hex.value($0) != nil }) {
            return String(repeating: "0", count: 16 - text.utf8.count) + text.uppercased()
        }
        do { return try Minisign.PublicKey(base64: text).keyIDText } catch {
            throw fail(path, "neither a key id (up to 16 hex digits) nor a minisign public key: \(error.reason)")
        }
    }

    /// The bytes of a key file named in the configuration.
    private func keyFile(_ name: String, at path: String) throws(ConfigurationError) -> [UInt8] {
        let folder = file.lastIndex(of: "/").map { String(file[...$0]) } ?? ""
        let resolved = name.hasPrefix("/") ? name : folder + name
        let handle: ReadOnlyFile
        do { handle = try ReadOnlyFile(path: resolved) } catch {
            throw fail(path, "cannot read \(resolved): \(error.operation) failed: \(error.reason)")
        }
        // A trusted key decides what runs: held to the configuration file's own rules.
        if let kind = PluginScanner.nonRegularKind(handle.status.st_mode) {
            throw fail(path, "\(resolved) is not a regular file (\(kind))")
        }
        if !allowInsecure, let problem = FileSecurity.pathProblem(resolved, what: "key file") {
            throw fail(path, "\(resolved): \(problem)")
        }
        do { return try handle.read(at: 0, count: min(handle.size, Minisign.maxFileSize) + 1) } catch {
            throw fail(path, "cannot read \(resolved): \(error.operation) failed: \(error.reason)")
        }
    }

    private func sha256(_ value: JSONValue, at path: String) throws(ConfigurationError) -> String {
        guard let text = value.stringValue, text.utf8.count == 64, text.utf8.allSatisfy({ Hex.value($0) != nil })
        else {
            throw fail(
                path, "expected a SHA-256 digest (64 hex digits, as sha256sum prints it), found \(Self.describe(value))"
            )
        }
        return text.lowercased()
    }

    // MARK: Values

    private func checkKeys(
        _ members: [String: JSONValue], allowed: [String], at path: String, extraHint: (String) -> String?
    ) throws(ConfigurationError) {
        for key in members.keys.sorted() where !allowed.contains(key) {
            let hint =
                extraHint(key) ?? Suggestion.closest(to: key, among: allowed).map { " (did you mean \"\($0)\"?)" }
                ?? " (known keys: \(allowed.joined(separator: ", ")))"
            throw fail(path.isEmpty ? key : path + "." + key, "unknown key" + hint)
        }
    }

    private func bool(_ value: JSONValue, at path: String) throws(ConfigurationError) -> Bool {
        guard let flag = value.boolValue else {
            throw fail(path, "expected true or false, found \(Self.describe(value))")
        }
        return flag
    }

    private func int32(_ value: JSONValue, at path: String) throws(ConfigurationError) -> Int32 {
        guard let number = value.doubleValue, let integer = Int32(exactly: number) else {
            throw fail(path, "expected an integer from \(Int32.min) to \(Int32.max), found \(Self.describe(value))")
        }
        return integer
    }

    /// A number of seconds in the range `--event-timeout` takes (more than 0, at most a day):
    /// checked here, where it is read, as every later use converts it to a time (a socket's
    /// `timeval`, a deadline) that a huge value would overflow.
    private func seconds(_ value: JSONValue, at path: String) throws(ConfigurationError) -> Double {
        guard let seconds = value.doubleValue, seconds > 0, seconds <= OptionValue.maxSeconds else {
            throw fail(
                path,
                "expected a number of seconds more than 0 and at most \(Int(OptionValue.maxSeconds)) (a day),"
                    + " found \(Self.describe(value))")
        }
        return seconds
    }

    /// `{"interval": S, "timeout": S, "unhealthyAfter": N, "onUnhealthy": "restart" | "report"}`.
    private func healthCheck(_ value: JSONValue, at path: String) throws(ConfigurationError) -> HealthCheckPolicy {
        guard let members = value.objectValue else {
            throw fail(path, "expected an object like {\"interval\": 10}, found \(Self.describe(value))")
        }
        try checkKeys(members, allowed: HealthCheckPolicy.keys, at: path) { _ in nil }
        guard let interval = members["interval"] else {
            throw fail(path + ".interval", "missing: seconds between checks")
        }
        var policy = HealthCheckPolicy(interval: try seconds(interval, at: path + ".interval"))
        if let value = members["timeout"] { policy.timeout = try seconds(value, at: path + ".timeout") }
        if let value = members["unhealthyAfter"] {
            guard let number = value.doubleValue, let count = Int(exactly: number), count >= 1,
                count <= HealthCheckPolicy.longestRun
            else {
                throw fail(
                    path + ".unhealthyAfter",
                    "expected a whole number of checks from 1 to \(HealthCheckPolicy.longestRun), found \(Self.describe(value))"
                )
            }
            policy.unhealthyAfter = count
        }
        if let value = members["onUnhealthy"] { policy.onUnhealthy = try choice(value, at: path + ".onUnhealthy") }
        return policy
    }

    /// A string that is one of `Choice`'s raw values.
    private func choice<Choice: RawRepresentable & CaseIterable>(
        _ value: JSONValue, at path: String
    ) throws(ConfigurationError) -> Choice where Choice.RawValue == String {
        let names = Choice.allCases.map(\.rawValue)
        let expected = names.map { "\"\($0)\"" }.joined(separator: " or ")
        guard let text = value.stringValue else {
            throw fail(path, "expected \(expected), found \(Self.describe(value))")
        }
        guard let choice = Choice(rawValue: text) else {
            throw fail(
                path, "expected \(expected), found \(Self.describe(value))" + Suggestion.hint(for: text, among: names))
        }
        return choice
    }

    /// An array of distinct service ids other than `owner`.
    private func ids(_ value: JSONValue, at path: String, owner: String) throws(ConfigurationError) -> [String] {
        guard let elements = value.arrayValue else {
            throw fail(path, "expected an array of service ids, found \(Self.describe(value))")
        }
        var ids: [String] = []
        var seen = Set<String>()
        for (index, element) in elements.enumerated() {
            let elementPath = "\(path)[\(index)]"
            guard let id = element.stringValue else {
                throw fail(elementPath, "expected a service id (a string), found \(Self.describe(element))")
            }
            if let problem = ServiceID.problem(with: id) {
                throw fail(elementPath, "invalid service id \"\(id)\": it \(problem)")
            }
            if id == owner { throw fail(elementPath, "a service cannot depend on itself") }
            if !seen.insert(id).inserted { throw fail(elementPath, "\(id) is listed twice") }
            ids.append(id)
        }
        return ids
    }

    private func fail(_ path: String, _ reason: String) -> ConfigurationError { .invalid(file, path, reason) }

    /// A value as an error shows it: `a string ("x")`, `1.5`, `null`, `an array`.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): String(flag)
        case .number: value.serialized
        case .string(let text):
            "a string (\(JSONValue.string(text.count > 40 ? String(text.prefix(40)) + "…" : text).serialized))"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
