/// A service's settings schema: the subset of JSON Schema (draft 2020-12) a manifest may declare
/// for its `settings` (issue 42 item 3), as VS Code's `contributes.configuration` does. Checked
/// by the host at load, at every change (a reload of `services.json`, `host ctl configure`) and
/// by `host check`; a violating value is refused naming the key and the rule.
///
/// Keywords: `type` (`object`, `string`, `number`, `integer`, `boolean`, `array`, `null`, or an
/// array of them), `properties`, `required`, `enum`, `minimum`, `maximum`, `maxLength`,
/// `pattern` (a regular expression searched in the string), `default` (filled in for a missing
/// property), and the annotations `title`, `description` and `$schema`, which are ignored. Any
/// other keyword is refused, so a misspelt rule cannot pass unnoticed. Properties not declared
/// are allowed.
package struct SettingsSchema: Sendable, Equatable {
    /// The JSON types a schema names.
    package enum Kind: String, Sendable, CaseIterable {
        case object, string, number, integer, boolean, array, null
    }

    package var types: [Kind]?
    package var properties: [(key: String, schema: SettingsSchema)] = []
    package var required: [String] = []
    package var allowed: [JSONValue]?
    package var minimum: Double?
    package var maximum: Double?
    package var maxLength: Int?
    package var pattern: String?
    package var defaultValue: JSONValue?

    /// The longest schema text read: 64 KiB.
    package static let largestText = 64 << 10
    /// The deepest nesting of `properties`.
    package static let deepest = 32
    /// The longest `pattern`, in bytes.
    package static let longestPattern = 1024

    /// Reads a schema from its JSON text (a manifest's `settingsSchema`, or a C plugin's
    /// `SH_CLAIM_SETTINGS_SCHEMA` claims put together).
    package init(parsing text: [UInt8]) throws(SettingsSchemaError) {
        guard text.count <= Self.largestText else {
            throw SettingsSchemaError(path: "", reason: "is \(text.count) bytes, more than \(Self.largestText)")
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: text) } catch {
            throw SettingsSchemaError(path: "", reason: "is not valid JSON: \(error)")
        }
        try self.init(value, path: "", depth: 0)
    }

    /// Reads a schema from a parsed value.
    package init(_ value: JSONValue) throws(SettingsSchemaError) { try self.init(value, path: "", depth: 0) }

    private init(_ value: JSONValue, path: String, depth: Int) throws(SettingsSchemaError) {
        func fail(_ keyword: String, _ reason: String) -> SettingsSchemaError {
            SettingsSchemaError(path: path.isEmpty ? keyword : "\(path).\(keyword)", reason: reason)
        }
        guard depth < Self.deepest else {
            throw SettingsSchemaError(path: path, reason: "nests deeper than \(Self.deepest) levels")
        }
        guard case .object(let members) = value else {
            throw SettingsSchemaError(path: path, reason: "a schema must be an object, not \(Self.name(of: value))")
        }
        for keyword in members.keys.sorted() {
            let member = members[keyword]!
            switch keyword {
            case "title", "description", "$schema": continue
            case "type":
                let names: [JSONValue]
                if case .array(let list) = member { names = list } else { names = [member] }
                var kinds: [Kind] = []
                for name in names {
                    guard let text = name.stringValue, let kind = Kind(rawValue: text) else {
                        throw fail(
                            keyword,
                            "\(name) is not a type (one of \(Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    guard !kinds.contains(kind) else { throw fail(keyword, "lists \(text) twice") }
                    kinds.append(kind)
                }
                guard !kinds.isEmpty else { throw fail(keyword, "lists no type") }
                types = kinds
            case "properties":
                guard case .object(let list) = member else { throw fail(keyword, "must be an object of schemas") }
                for key in list.keys.sorted() {
                    let child = try SettingsSchema(
                        list[key]!, path: path.isEmpty ? key : "\(path).\(key)", depth: depth + 1)
                    properties.append((key, child))
                }
            case "required":
                guard case .array(let list) = member else { throw fail(keyword, "must be an array of keys") }
                for item in list {
                    guard let key = item.stringValue else { throw fail(keyword, "\(item) is not a key (a string)") }
                    guard !required.contains(key) else { throw fail(keyword, "lists \"\(key)\" twice") }
                    required.append(key)
                }
            case "enum":
                guard case .array(let list) = member, !list.isEmpty else {
                    throw fail(keyword, "must be a non-empty array of the values allowed")
                }
                allowed = list
            case "minimum", "maximum":
                guard let number = member.doubleValue, number.isFinite else { throw fail(keyword, "must be a number") }
                if keyword == "minimum" { minimum = number } else { maximum = number }
            case "maxLength":
                guard let number = member.doubleValue, number >= 0, number <= Double(Int32.max),
                    number == number.rounded()
                else {
                    throw fail(keyword, "must be a whole number from 0 to \(Int32.max)")
                }
                maxLength = Int(number)
            case "pattern":
                guard let text = member.stringValue else { throw fail(keyword, "must be a string") }
                guard text.utf8.count <= Self.longestPattern else {
                    throw fail(keyword, "is longer than \(Self.longestPattern) bytes")
                }
                do { _ = try Regex(text) } catch { throw fail(keyword, "is not a regular expression: \(error)") }
                pattern = text
            case "default": defaultValue = member
            default:
                throw fail(
                    keyword,
                    "is not a keyword of the settings schema (type, properties, required, enum, minimum, maximum, "
                        + "maxLength, pattern, default, title, description)")
            }
        }
        if let minimum, let maximum, minimum > maximum {
            throw fail("minimum", "\(JSONValue.number(minimum)) is more than maximum \(JSONValue.number(maximum))")
        }
        if let defaultValue, let violation = check(defaultValue, path: path) {
            throw fail("default", "does not hold: \(violation.reason)")
        }
    }

    package static func == (a: SettingsSchema, b: SettingsSchema) -> Bool {
        a.types == b.types && a.properties.map(\.key) == b.properties.map(\.key)
            && a.properties.map(\.schema) == b.properties.map(\.schema) && a.required == b.required
            && a.allowed == b.allowed && a.minimum == b.minimum && a.maximum == b.maximum
            && a.maxLength == b.maxLength && a.pattern == b.pattern && a.defaultValue == b.defaultValue
    }

    // MARK: Showing (`host inspect`)

    /// The schema as JSON with the keywords it holds (annotations left out): what `host inspect
    /// --json` prints as a service's `settingsSchema`.
    package var json: JSONValue {
        var members: [String: JSONValue] = [:]
        if let types {
            members["type"] = types.count == 1 ? .string(types[0].rawValue) : .array(types.map { .string($0.rawValue) })
        }
        if !properties.isEmpty {
            members["properties"] = .object(
                Dictionary(uniqueKeysWithValues: properties.map { ($0.key, $0.schema.json) }))
        }
        if !required.isEmpty { members["required"] = .array(required.map(JSONValue.string)) }
        if let allowed { members["enum"] = .array(allowed) }
        if let minimum { members["minimum"] = .number(minimum) }
        if let maximum { members["maximum"] = .number(maximum) }
        if let maxLength { members["maxLength"] = .number(Double(maxLength)) }
        if let pattern { members["pattern"] = .string(pattern) }
        if let defaultValue { members["default"] = defaultValue }
        return .object(members)
    }

    /// One line per setting for `host inspect`'s text, dotted keys for nested ones in key
    /// order: `level: string, one of "debug", "info"; default "info"`. The whole object's own
    /// rules come first, keyed `(settings)`, when it has any besides being an object.
    package var lines: [String] {
        var out: [String] = []
        let own = rules(required: false)
        if properties.isEmpty || !(own == "object" || own == "any value") { out.append("(settings): " + own) }
        appendLines(prefix: "", into: &out)
        return out
    }

    private func appendLines(prefix: String, into out: inout [String]) {
        for (key, schema) in properties {
            let name = prefix + key
            out.append(name + ": " + schema.rules(required: required.contains(key)))
            schema.appendLines(prefix: name + ".", into: &out)
        }
    }

    /// This schema's own rules, in words and JSON values.
    private func rules(required: Bool) -> String {
        var parts: [String] = []
        if let types { parts.append(types.map(\.rawValue).joined(separator: " or ")) }
        if required { parts.append("required") }
        if let allowed { parts.append("one of " + allowed.map(\.serialized).joined(separator: ", ")) }
        if let minimum { parts.append("minimum \(JSONValue.number(minimum).serialized)") }
        if let maximum { parts.append("maximum \(JSONValue.number(maximum).serialized)") }
        if let maxLength { parts.append("at most \(maxLength) characters") }
        if let pattern { parts.append("matching \(JSONValue.string(pattern).serialized)") }
        var text = parts.isEmpty ? "any value" : parts.joined(separator: ", ")
        if let defaultValue { text += "; default \(defaultValue.serialized)" }
        return text
    }

    // MARK: Checking

    /// Checks `settings` (nil: the configuration gives none) and returns them with the defaults
    /// filled in, or the first rule they break, naming the key.
    package func apply(to settings: JSONValue?) -> Result<JSONValue?, SettingsViolation> {
        // No settings: an empty object when there are defaults to fill in or keys required.
        let fills = !required.isEmpty || properties.contains { $0.schema.defaultValue != nil }
        guard let given = settings ?? defaultValue ?? (fills ? .object([:]) : nil) else { return .success(nil) }
        let filled = filledIn(given)
        if let violation = check(filled, path: "") { return .failure(violation) }
        return .success(filled)
    }

    /// `value` with each missing property that has a default filled in, recursively.
    private func filledIn(_ value: JSONValue) -> JSONValue {
        guard case .object(var members) = value, !properties.isEmpty else { return value }
        for (key, schema) in properties {
            if let present = members[key] {
                members[key] = schema.filledIn(present)
            } else if let fallback = schema.defaultValue {
                members[key] = schema.filledIn(fallback)
            }
        }
        return .object(members)
    }

    /// The first rule `value` breaks, or nil.
    private func check(_ value: JSONValue, path: String) -> SettingsViolation? {
        func broken(_ reason: String) -> SettingsViolation { SettingsViolation(key: path, reason: reason) }
        if let types, !types.contains(where: { Self.matches(value, $0) }) {
            return broken(
                "must be \(types.map(\.rawValue).joined(separator: " or ")), not \(Self.name(of: value))")
        }
        if let allowed, !allowed.contains(value) {
            return broken("must be one of \(allowed.map(\.serialized).joined(separator: ", ")), not \(value)")
        }
        if case .number(let number) = value {
            if let minimum, number < minimum { return broken("must be at least \(JSONValue.number(minimum))") }
            if let maximum, number > maximum { return broken("must be at most \(JSONValue.number(maximum))") }
        }
        if case .string(let text) = value {
            // Characters as JSON Schema counts them: Unicode code points.
            let length = text.unicodeScalars.count
            if let maxLength, length > maxLength {
                return broken("must be at most \(maxLength) characters (it has \(length))")
            }
            if let pattern, let regex = try? Regex(pattern), (try? regex.firstMatch(in: text)) == nil {
                return broken("must match the pattern \(JSONValue.string(pattern))")
            }
        }
        if case .object(let members) = value {
            for key in required where members[key] == nil {
                return SettingsViolation(key: path.isEmpty ? key : "\(path).\(key)", reason: "is required")
            }
            for (key, schema) in properties {
                guard let member = members[key] else { continue }
                if let violation = schema.check(member, path: path.isEmpty ? key : "\(path).\(key)") {
                    return violation
                }
            }
        }
        return nil
    }

    private static func matches(_ value: JSONValue, _ kind: Kind) -> Bool {
        switch (kind, value) {
        case (.object, .object), (.string, .string), (.number, .number), (.boolean, .bool), (.array, .array),
            (.null, .null):
            true
        case (.integer, .number(let number)): number.isFinite && number == number.rounded()
        default: false
        }
    }

    private static func name(of value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// Why a settings schema was refused: `path` names the keyword (`properties.level.enum`).
package struct SettingsSchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    package var path: String
    package var reason: String
    package init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
    package var description: String { path.isEmpty ? "the settings schema \(reason)" : "\(path) \(reason)" }
}

/// A settings value that breaks its schema: the key (dotted for a nested one; empty for the
/// whole settings object) and the rule.
package struct SettingsViolation: Error, Sendable, Equatable, CustomStringConvertible {
    package var key: String
    package var reason: String
    package init(key: String, reason: String) {
        self.key = key
        self.reason = reason
    }
    package var description: String { key.isEmpty ? "the settings \(reason)" : "setting \(key) \(reason)" }
}
