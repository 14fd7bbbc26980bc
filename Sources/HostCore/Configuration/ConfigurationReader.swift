import ServiceJSON

/// Turns a parsed configuration document into a ``HostConfiguration``, checking every key and
/// type and naming the key's JSON path in each error.
struct ConfigurationReader {
    let file: String

    static let topLevelKeys = ["services"]
    static let serviceKeys = [
        "enabled", "priority", "requires", "after", "settings", "policy", "isolation", "trusted", "eventTimeout",
        "restartResetAfter", "activation",
        "requests",
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
        guard let servicesValue = top["services"] else { return HostConfiguration() }
        guard let services = servicesValue.objectValue else {
            throw fail("services", "expected an object keyed by service id, found \(Self.describe(servicesValue))")
        }
        var configuration = HostConfiguration()
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
            guard let seconds = value.doubleValue, seconds > 0 else {
                throw fail(
                    path + ".eventTimeout", "expected a number of seconds greater than 0, found \(Self.describe(value))"
                )
            }
            service.eventTimeout = seconds
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
        if let value = members["requests"] { service.requests = try choice(value, at: path + ".requests") }
        return service
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
