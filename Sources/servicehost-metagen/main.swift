// servicehost-metagen — turns a Swift plugin's servicehost.json into its static
// metadata records and its exported entry.
//
// Usage: servicehost-metagen <servicehost.json> <output.swift>
// Run by the ServiceMetadata build plugin; run it by hand to check a manifest.
//
// Manifest format (strict JSON, RFC 8259; unknown keys are errors):
//
//     {
//       "services": [
//         { "id": "dev.servicehost.deeplinks", "type": "DeepLinksService",
//           "name": "DeepLinks", "version": "1.0.0",
//           "events": ["openURL", "continueUserActivity"], "priority": 0,
//           "urls": ["myapp", "https://example.com"],
//           "activities": ["dev.servicehost.view-item"] }
//       ]
//     }
//
//   services    required, a non-empty array, one object per service in the library.
//   id          required; reverse-DNS: letters, digits, '-' and '_' in at least two
//               dot-separated labels, at most 127 bytes; unique in the manifest.
//   type        required; the Swift class (conforming to ServiceKit's
//               ApplicationService) created with `init()`, e.g. "LoggerService".
//   name        optional, defaults to type; at most 63 bytes.
//   version     optional, defaults to "0.0.0"; at most 31 bytes.
//   events      optional, defaults to []; event names: willFinishLaunching,
//               didFinishLaunching, didBecomeActive, willResignActive,
//               didEnterBackground, willEnterForeground, willTerminate,
//               notification, didReceiveMemoryWarning, willPresentNotification,
//               didReceiveNotificationResponse, didReceiveRemoteNotification,
//               didRegisterForRemoteNotifications,
//               didFailToRegisterForRemoteNotifications, openURL,
//               continueUserActivity, configurationForConnecting,
//               sceneWillConnect, sceneWillEnterForeground, sceneDidBecomeActive,
//               sceneWillResignActive, sceneDidEnterBackground, sceneDidDisconnect,
//               sceneOpenURLContexts, sceneContinueUserActivity; and the groups
//               "lifecycle" (the first seven), "push" (willPresentNotification,
//               didReceiveNotificationResponse, didReceiveRemoteNotification,
//               didRegisterForRemoteNotifications,
//               didFailToRegisterForRemoteNotifications), "scenes" (the nine scene
//               events; the type must adopt SceneService) and "all" (every event).
//   priority    optional, defaults to 0; an integer in Int32, higher runs earlier.
//   urls        optional; the URLs the service owns (SH_CLAIM_URL): a scheme
//               ("myapp") or a scheme and host ("https://example.com"), written
//               lowercase into the metadata. Needs the openURL or the
//               sceneOpenURLContexts event.
//   activities  optional; the user activity types the service owns
//               (SH_CLAIM_ACTIVITY). Needs the continueUserActivity or the
//               sceneContinueUserActivity event.
//   subscribes  optional; the notification names the service receives
//               (SH_CLAIM_NOTIFICATION), "*" for every name. Needs the
//               notification event.
//   sceneRoles  optional; the scene roles the service serves (SH_CLAIM_SCENE_ROLE):
//               "main", "car", "external". It then receives scene events only for
//               scenes of those roles (without it, for every scene). Needs a scene
//               event.
//   answers     optional; the request names the service answers (SH_CLAIM_ANSWER),
//               "geo.locate". Needs the request event (the type must adopt Answering).
//   Each urls/activities/subscribes/sceneRoles/answers value is a non-empty string of at most 119
//   bytes, listed once.
//   requires    optional; an object from the ids of services this one requires to the
//               versions it accepts (SH_CLAIM_REQUIRES): "" for any version, or
//               space-separated comparators such as ">=1.2 <2" (>=, >, <=, <, = or none for
//               =, semantic versions whose minor and patch may be left out). The host
//               starts this service after those and does not start it when one is missing,
//               left out or of a version outside the range. "id range" is at most 119 bytes.
//   after       optional; ids of services this one starts after when they run
//               (SH_CLAIM_AFTER).
//   shortcuts   optional; the quick actions the service performs (SH_CLAIM_SHORTCUT, and
//               SH_CLAIM_SHORTCUT_ICON for an icon): objects {"id": "compose", "title":
//               "New entry", "icon": "document-new"}; id letters, digits and '-', unique in
//               the service; title (defaults to the id) and icon (a name or absolute path,
//               optional) without control characters; "id title" and "id icon" at most 119
//               bytes each. Needs the performActionForShortcutItem event.
//   settingsSchema optional; the schema of the service's settings (SH_CLAIM_SETTINGS_SCHEMA), a
//               subset of JSON Schema: type, properties, required, enum, minimum, maximum,
//               maxLength, pattern, default (title and description ignored, any other keyword
//               an error). The host checks the settings against it and fills in the defaults.
//   activation  optional, "eager" (the default: opened at start) or "lazy" (SH_META_SERVICE_LAZY:
//               opened on the first URL, activity, notification, scene or push it would be
//               asked for). A lazy service must list one of those events: lifecycle events
//               never open one.
//
// The generated entry also checks each class against its events, with #sourceLocation at
// the service's line of the manifest so the compiler's errors point there: each event
// outside the lifecycle needs its ServiceKit capability protocol (EventKind's `capability`),
// and an adopted capability needs its event listed (ServiceKit/ManifestChecks.swift).
//
// Every error prints "<manifest path>: <JSON path>: <reason>" to stderr (for
// example "…/servicehost.json: services[1].events[0]: unknown event \"x\"")
// and exits 1, which fails the build.
//
// Output: one Swift file with one `@section("servicehost_meta") @used` global
// per record (sh_meta_plugin, then for each service its sh_meta_service and one
// sh_meta_claim per claimed value, byte for byte as metadata.h lays them out,
// little-endian, as UInt64 words so each record is 8-byte aligned like the C
// macros' records), and the exported `@c(servicehost_entry)` function calling
// ServiceKit's ServicePlugin.entry.

import ServiceABI
import ServiceJSON
import ServiceKit
import ServiceVocabulary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// MARK: - Constants

/// The compiler that built this generator, which is the compiler that builds
/// the plugin (both are built in one `swift build`).
let toolchain: String = {
    #if compiler(>=7.0)
        return "swift 7+"
    #elseif compiler(>=6.5)
        return "swift 6.5+"
    #elseif compiler(>=6.4.3)
        return "swift 6.4.3+"
    #elseif compiler(>=6.4.2)
        return "swift 6.4.2"
    #elseif compiler(>=6.4.1)
        return "swift 6.4.1"
    #elseif compiler(>=6.4)
        return "swift 6.4"
    #elseif compiler(>=6.3.5)
        return "swift 6.3.5+"
    #elseif compiler(>=6.3.4)
        return "swift 6.3.4"
    #elseif compiler(>=6.3.3)
        return "swift 6.3.3"
    #elseif compiler(>=6.3.2)
        return "swift 6.3.2"
    #elseif compiler(>=6.3.1)
        return "swift 6.3.1"
    #else
        return "swift 6.3"
    #endif
}()

/// Event names and their kinds: ServiceVocabulary's table, the one the host and ServiceKit read.
let eventKinds: [(name: String, kind: UInt32)] = EventKind.allCases.map { ($0.name, $0.rawValue) }

/// The scene events: a service listing any of them must adopt SceneService.
let sceneEvents = EventGroup.scenes.kinds.map(\.name)

/// Event groups: a name in `events` that stands for several events.
let eventGroups: [(name: String, events: [String])] =
    EventGroup.allCases.map { ($0.name, $0.kinds.map(\.name)) } + [("all", eventKinds.map(\.name))]

/// The claim lists of a service: manifest key, SH_CLAIM_* kind, what a value is, and
/// the events a service must handle (one of them) to be asked for what it claims.
let claimKeys: [(key: String, claim: Int32, what: String, events: [String])] = [
    ("urls", Int32(SH_CLAIM_URL), "URLs", [EventKind.openURL.name, EventKind.sceneOpenURLContexts.name]),
    (
        "activities", Int32(SH_CLAIM_ACTIVITY), "user activities",
        [EventKind.continueUserActivity.name, EventKind.sceneContinueUserActivity.name]
    ),
    ("subscribes", Int32(SH_CLAIM_NOTIFICATION), "notifications", [EventKind.notification.name]),
    ("sceneRoles", Int32(SH_CLAIM_SCENE_ROLE), "scene roles", sceneEvents),
    ("answers", Int32(SH_CLAIM_ANSWER), "requests", [EventKind.request.name]),
]

let serviceKeys =
    [
        "id", "type", "name", "version", "events", "priority", "activation", "requires", "after", "shortcuts",
        "settingsSchema",
    ]
    + claimKeys.map(\.key)

// MARK: - Errors

struct ManifestError: Error {
    let path: String
    let reason: String
}

func fail(_ path: String, _ reason: String) -> ManifestError {
    ManifestError(path: path, reason: reason)
}

// MARK: - Reading the manifest

struct ServiceSpec {
    var id: String
    /// The manifest line that names the service (its id), where the generated checks put
    /// their errors.
    var line: Int = 1
    /// Lists a scene event: the generated entry checks that the type adopts SceneService.
    var handlesScenes: Bool {
        sceneEvents.contains { handles(events, $0) }
    }
    var type: String
    var name: String
    var version: String
    var events: (UInt64, UInt64)
    var priority: Int32
    var claims: [Claim]
    /// `SH_META_SERVICE_*` flags.
    var flags: UInt32 = 0
}

/// Whether `mask` holds the event named `name`.
func handles(_ mask: (UInt64, UInt64), _ name: String) -> Bool {
    let kind = eventKinds.first { $0.name == name }!.kind
    return (kind / 64 == 0 ? mask.0 : mask.1) & (UInt64(1) << UInt64(kind % 64)) != 0
}

/// One sh_meta_claim: an SH_CLAIM_* kind and its value.
struct Claim {
    var claim: Int32
    var value: String
}

func readFile(_ path: String) throws(ManifestError) -> [UInt8] {
    guard let file = fopen(path, "rb") else {
        throw fail("", "cannot read: \(String(cString: strerror(errno)))")
    }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        bytes.append(contentsOf: chunk[0..<count])
        if count < chunk.count { break }
    }
    if ferror(file) != 0 { throw fail("", "cannot read: \(String(cString: strerror(errno)))") }
    return bytes
}

/// The line (from 1) of the first occurrence of `text` in `bytes`, or 1.
func line(of text: String, in bytes: [UInt8]) -> Int {
    let needle = Array(text.utf8)
    guard !needle.isEmpty, bytes.count >= needle.count else { return 1 }
    for start in 0...(bytes.count - needle.count) where bytes[start..<start + needle.count].elementsEqual(needle) {
        return 1 + bytes[..<start].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }
    return 1
}

/// "line L, column C" for a byte offset (columns count bytes, from 1).
func lineColumn(of offset: Int, in bytes: [UInt8]) -> String {
    var line = 1
    var column = 1
    for byte in bytes.prefix(offset) {
        if byte == 0x0A {
            line += 1
            column = 1
        } else {
            column += 1
        }
    }
    return "line \(line), column \(column)"
}

func typeName(_ value: JSONValue) -> String {
    switch value {
    case .null: "null"
    case .bool: "a Boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
}

func checkKeys(_ object: [String: JSONValue], allowed: [String], path: (String) -> String) throws(ManifestError) {
    let unknown = object.keys.filter { !allowed.contains($0) }.sorted()
    if let key = unknown.first {
        throw fail(
            path(key),
            "unknown key \"\(key)\"\(Suggestion.hint(for: key, among: allowed)) "
                + "(expected one of: \(allowed.joined(separator: ", ")))")
    }
}

func string(_ value: JSONValue?, _ path: String) throws(ManifestError) -> String? {
    guard let value else { return nil }
    guard case .string(let string) = value else { throw fail(path, "expected a string, found \(typeName(value))") }
    if string.utf8.contains(0) { throw fail(path, "must not contain NUL characters") }
    return string
}

func isValidID(_ id: String) -> Bool {
    guard id.utf8.count <= 127 else { return false }
    let labels = id.split(separator: ".", omittingEmptySubsequences: false)
    guard labels.count >= 2 else { return false }
    return labels.allSatisfy { label in
        !label.isEmpty
            && label.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }
}

/// A Swift type name: ASCII identifiers joined by dots (nested types allowed).
func isValidTypeName(_ type: String) -> Bool {
    let parts = type.split(separator: ".", omittingEmptySubsequences: false)
    return parts.allSatisfy { part in
        guard let first = part.utf8.first, !(first >= 0x30 && first <= 0x39) else { return false }
        return part.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_")
        }
    }
}

/// A URL claim: an RFC 3986 scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`),
/// optionally followed by "://" and a host (unreserved characters: letters, digits,
/// '-', '.', '_', '~'). Returns the value lowercased, or why it is not one.
func urlClaim(_ value: String) -> Result<String, ClaimError> {
    func isAlpha(_ byte: UInt8) -> Bool { (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) }
    func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    let utf8 = Array(value.utf8)
    let separator = Array("://".utf8)
    var schemeEnd = utf8.count
    var host: ArraySlice<UInt8>?
    if let colon = utf8.firstIndex(of: UInt8(ascii: ":")) {
        guard utf8[colon...].starts(with: separator) else {
            return .failure(
                ClaimError(
                    "\"\(value)\" is not a scheme (\"myapp\") or a scheme and host "
                        + "(\"https://example.com\"): a ':' must start \"://\""))
        }
        schemeEnd = colon
        host = utf8[(colon + separator.count)...]
    }
    let scheme = utf8[..<schemeEnd]
    guard let first = scheme.first, isAlpha(first),
        scheme.allSatisfy({
            isAlpha($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
                || $0 == UInt8(ascii: ".")
        })
    else {
        return .failure(
            ClaimError(
                "\"\(value)\" does not start with a URL scheme (a letter, then letters, "
                    + "digits, '+', '-' or '.', as RFC 3986 defines it)"))
    }
    if let host {
        guard !host.isEmpty else { return .failure(ClaimError("\"\(value)\" has \"://\" but no host")) }
        let bad = host.first { byte in
            !(isAlpha(byte) || isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~"))
        }
        if let bad {
            let shown =
                bad >= 0x21 && bad < 0x7F
                ? "'\(Character(Unicode.Scalar(bad)))'" : "byte 0x\(String(bad, radix: 16))"
            return .failure(
                ClaimError(
                    "\"\(value)\": the host may hold only letters, digits, '-', '.', '_' and '~' "
                        + "(found \(shown); no path, port or user)"))
        }
    }
    return .success(value.lowercased())
}

/// Why a claimed value is invalid.
struct ClaimError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

func parseManifest(_ bytes: [UInt8]) throws(ManifestError) -> [ServiceSpec] {
    let root: JSONValue
    do throws(JSONParseError) {
        root = try JSONValue(parsing: bytes)
    } catch {
        throw fail(lineColumn(of: error.offset, in: bytes), "invalid JSON: \(error.reason)")
    }
    guard case .object(let top) = root else {
        throw fail("(root)", "expected an object, found \(typeName(root))")
    }
    try checkKeys(top, allowed: ["services"]) { $0 }
    guard let servicesValue = top["services"] else { throw fail("services", "missing (a non-empty array of services)") }
    guard case .array(let services) = servicesValue else {
        throw fail("services", "expected an array, found \(typeName(servicesValue))")
    }
    guard !services.isEmpty else { throw fail("services", "must list at least one service") }

    var specs: [ServiceSpec] = []
    var seenIDs: [String: Int] = [:]
    for (index, value) in services.enumerated() {
        let base = "services[\(index)]"
        guard case .object(let object) = value else {
            throw fail(base, "expected an object, found \(typeName(value))")
        }
        try checkKeys(object, allowed: serviceKeys) { "\(base).\($0)" }

        guard let id = try string(object["id"], "\(base).id") else { throw fail("\(base).id", "missing") }
        guard isValidID(id) else {
            throw fail(
                "\(base).id",
                "\"\(id)\" is not a reverse-DNS id (letters, digits, '-' and '_' "
                    + "in at least two dot-separated labels, at most 127 bytes)")
        }
        if let first = seenIDs[id] { throw fail("\(base).id", "duplicate id \"\(id)\" (also services[\(first)].id)") }
        seenIDs[id] = index

        guard let type = try string(object["type"], "\(base).type") else {
            throw fail("\(base).type", "missing (the Swift class of the service)")
        }
        guard isValidTypeName(type) else { throw fail("\(base).type", "\"\(type)\" is not a Swift type name") }

        let name = try string(object["name"], "\(base).name") ?? type
        if name.isEmpty { throw fail("\(base).name", "must not be empty") }
        if name.utf8.count >= Int(SH_META_NAME_MAX) {
            throw fail("\(base).name", "too long (\(name.utf8.count) bytes, at most \(SH_META_NAME_MAX - 1))")
        }

        let version = try string(object["version"], "\(base).version") ?? "0.0.0"
        if version.isEmpty { throw fail("\(base).version", "must not be empty") }
        if version.utf8.count >= Int(SH_META_VERSION_MAX) {
            throw fail("\(base).version", "too long (\(version.utf8.count) bytes, at most \(SH_META_VERSION_MAX - 1))")
        }

        var mask: (UInt64, UInt64) = (0, 0)
        if let eventsValue = object["events"] {
            guard case .array(let events) = eventsValue else {
                throw fail("\(base).events", "expected an array of event names, found \(typeName(eventsValue))")
            }
            for (eventIndex, event) in events.enumerated() {
                let path = "\(base).events[\(eventIndex)]"
                guard let eventName = try string(event, path) else { continue }
                let kinds: [UInt32]
                if let group = eventGroups.first(where: { $0.name == eventName }) {
                    kinds = eventKinds.filter { group.events.contains($0.name) }.map(\.kind)
                } else if let kind = eventKinds.first(where: { $0.name == eventName })?.kind {
                    kinds = [kind]
                } else {
                    let names = eventGroups.map(\.name) + eventKinds.map(\.name)
                    throw fail(
                        path,
                        "unknown event \"\(eventName)\"\(Suggestion.hint(for: eventName, among: names)) "
                            + "(expected \(names.joined(separator: ", ")))")
                }
                for kind in kinds {
                    precondition(kind < SH_EVENT_KIND_LIMIT)
                    let bit = UInt64(1) << UInt64(kind % 64)
                    if kind / 64 == 0 { mask.0 |= bit } else { mask.1 |= bit }
                }
            }
        }

        var priority: Int32 = 0
        if let priorityValue = object["priority"] {
            guard case .number(let number) = priorityValue else {
                throw fail("\(base).priority", "expected an integer, found \(typeName(priorityValue))")
            }
            guard let exact = Int32(exactly: number) else {
                throw fail("\(base).priority", "expected an integer in \(Int32.min)...\(Int32.max), found \(number)")
            }
            priority = exact
        }

        var claims: [Claim] = []
        for (key, claim, what, events) in claimKeys {
            guard let listValue = object[key] else { continue }
            let path = "\(base).\(key)"
            guard case .array(let list) = listValue else {
                throw fail(path, "expected an array of strings, found \(typeName(listValue))")
            }
            if !list.isEmpty && !events.contains(where: { handles(mask, $0) }) {
                let named =
                    events.count == 1
                    ? "\"\(events[0])\"" : "any of \(events.map { "\"\($0)\"" }.joined(separator: ", "))"
                throw fail(
                    path,
                    "claims \(what) but \(base).events does not list \(named), so the host would "
                        + "never deliver them (add \"\(events[0])\" to events)")
            }
            var seen: [String: Int] = [:]
            for (valueIndex, item) in list.enumerated() {
                let itemPath = "\(path)[\(valueIndex)]"
                guard var value = try string(item, itemPath) else { continue }
                if value.isEmpty { throw fail(itemPath, "must not be empty") }
                if value.utf8.count >= Int(SH_META_CLAIM_MAX) {
                    throw fail(itemPath, "too long (\(value.utf8.count) bytes, at most \(SH_META_CLAIM_MAX - 1))")
                }
                if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                    throw fail(itemPath, "must not contain control characters")
                }
                if claim == Int32(SH_CLAIM_URL) {
                    switch urlClaim(value) {
                    case .success(let lowered): value = lowered
                    case .failure(let error): throw fail(itemPath, error.reason)
                    }
                }
                if claim == Int32(SH_CLAIM_SCENE_ROLE), !SceneRole.known.contains(SceneRole(rawValue: value)) {
                    throw fail(
                        itemPath,
                        "unknown scene role \"\(value)\" (one of "
                            + "\(SceneRole.known.map(\.rawValue).joined(separator: ", ")))")
                }
                if let first = seen[value] {
                    throw fail(itemPath, "duplicate \"\(value)\" (also \(path)[\(first)])")
                }
                seen[value] = valueIndex
                claims.append(Claim(claim: claim, value: value))
            }
        }

        claims += try dependencyClaims(object, of: id, base: base)
        claims += try shortcutClaims(object, events: mask, base: base)
        claims += try settingsSchemaClaims(object, base: base)

        var flags: UInt32 = 0
        if let activation = object["activation"] {
            let path = "\(base).activation"
            guard case .string(let value) = activation else {
                throw fail(path, "expected \"eager\" or \"lazy\", found \(typeName(activation))")
            }
            switch value {
            case "eager": break
            case "lazy":
                let openers = eventKinds.filter {
                    EventKind(rawValue: $0.kind)?.canActivate == true && handles(mask, $0.name)
                }
                guard !openers.isEmpty else {
                    throw fail(
                        path,
                        "a lazy service is opened by its first URL, activity, notification, scene or push, but "
                            + "\(base).events lists none of those (lifecycle events never open a lazy service)")
                }
                flags |= UInt32(SH_META_SERVICE_LAZY)
            default:
                throw fail(
                    path,
                    "expected \"eager\" or \"lazy\", found \"\(value)\""
                        + Suggestion.hint(for: value, among: ["eager", "lazy"]))
            }
        }

        specs.append(
            ServiceSpec(
                id: id, line: line(of: "\"\(id)\"", in: bytes), type: type, name: name, version: version,
                events: mask, priority: priority, claims: claims, flags: flags))
    }
    return specs
}

/// The `SH_CLAIM_SETTINGS_SCHEMA` claims of `"settingsSchema": {...}`: the schema checked as
/// the host reads it, serialized compactly and cut between UTF-8 characters into values of at
/// most `SH_META_CLAIM_MAX - 1` bytes, which the host puts together in order.
func settingsSchemaClaims(_ object: [String: JSONValue], base: String) throws(ManifestError) -> [Claim] {
    guard let schema = object["settingsSchema"] else { return [] }
    let path = "\(base).settingsSchema"
    do throws(SettingsSchemaError) { _ = try SettingsSchema(schema) } catch {
        throw fail(error.path.isEmpty ? path : "\(path).\(error.path)", error.reason)
    }
    let text = schema.serialized
    guard text.utf8.count <= SettingsSchema.largestText else {
        throw fail(path, "is \(text.utf8.count) bytes serialized, more than \(SettingsSchema.largestText)")
    }
    var claims: [Claim] = []
    var piece = ""
    for scalar in text.unicodeScalars {
        if piece.utf8.count + String(scalar).utf8.count >= Int(SH_META_CLAIM_MAX) {
            claims.append(Claim(claim: Int32(SH_CLAIM_SETTINGS_SCHEMA), value: piece))
            piece = ""
        }
        piece.unicodeScalars.append(scalar)
    }
    if !piece.isEmpty { claims.append(Claim(claim: Int32(SH_CLAIM_SETTINGS_SCHEMA), value: piece)) }
    return claims
}

/// The `requires` (sorted by id, so the output does not depend on the JSON object's order)
/// and `after` claims of the service `id`.
func dependencyClaims(_ object: [String: JSONValue], of id: String, base: String) throws(ManifestError) -> [Claim] {
    var claims: [Claim] = []
    func checkID(_ other: String, _ path: String) throws(ManifestError) {
        guard isValidID(other) else { throw fail(path, "\"\(other)\" is not a reverse-DNS service id") }
        guard other != id else { throw fail(path, "a service cannot depend on itself") }
    }
    if let requiresValue = object["requires"] {
        guard case .object(let requires) = requiresValue else {
            throw fail(
                "\(base).requires",
                "expected an object from service ids to version ranges, found \(typeName(requiresValue))")
        }
        for other in requires.keys.sorted() {
            let path = "\(base).requires.\(other)"
            try checkID(other, path)
            guard let range = try string(requires[other], path) else { continue }
            do throws(SemanticVersion.ParseError) { _ = try VersionRange(parsing: range) } catch {
                throw fail(path, "invalid version range: \(error)")
            }
            let value = range.isEmpty ? other : "\(other) \(range)"
            if value.utf8.count >= Int(SH_META_CLAIM_MAX) {
                throw fail(
                    path,
                    "the id and range are too long together (\(value.utf8.count) bytes, at most \(SH_META_CLAIM_MAX - 1))"
                )
            }
            claims.append(Claim(claim: Int32(SH_CLAIM_REQUIRES), value: value))
        }
    }
    if let afterValue = object["after"] {
        guard case .array(let after) = afterValue else {
            throw fail("\(base).after", "expected an array of service ids, found \(typeName(afterValue))")
        }
        var seen: [String: Int] = [:]
        for (index, item) in after.enumerated() {
            let path = "\(base).after[\(index)]"
            guard let other = try string(item, path) else { continue }
            try checkID(other, path)
            if let first = seen[other] { throw fail(path, "duplicate \"\(other)\" (also \(base).after[\(first)])") }
            seen[other] = index
            claims.append(Claim(claim: Int32(SH_CLAIM_AFTER), value: other))
        }
    }
    return claims
}

/// The `SH_CLAIM_SHORTCUT` (`ID TITLE`) and `SH_CLAIM_SHORTCUT_ICON` (`ID ICON`) claims of
/// `"shortcuts": [{"id": "compose", "title": "New entry", "icon": "document-new"}]`.
func shortcutClaims(
    _ object: [String: JSONValue], events: (UInt64, UInt64), base: String
) throws(ManifestError) -> [Claim] {
    guard let listValue = object["shortcuts"] else { return [] }
    let path = "\(base).shortcuts"
    guard case .array(let list) = listValue else {
        throw fail(path, "expected an array of objects, found \(typeName(listValue))")
    }
    let event = EventKind.performActionForShortcutItem.name
    if !list.isEmpty && !handles(events, event) {
        throw fail(
            path,
            "declares quick actions but \(base).events does not list \"\(event)\", so the host would never "
                + "deliver them (add \"\(event)\" to events)")
    }
    var claims: [Claim] = []
    var seen: [String: Int] = [:]
    for (index, item) in list.enumerated() {
        let itemPath = "\(path)[\(index)]"
        guard case .object(let fields) = item else {
            throw fail(itemPath, "expected an object with \"id\", \"title\" and \"icon\", found \(typeName(item))")
        }
        try checkKeys(fields, allowed: ["id", "title", "icon"]) { "\(itemPath).\($0)" }
        guard let id = try string(fields["id"], "\(itemPath).id") else { throw fail(itemPath, "needs an \"id\"") }
        if let problem = ShortcutID.problem(with: id) { throw fail("\(itemPath).id", "the id \(problem)") }
        if let first = seen[id] { throw fail("\(itemPath).id", "duplicate \"\(id)\" (also \(path)[\(first)])") }
        seen[id] = index
        let title = try string(fields["title"], "\(itemPath).title") ?? id
        let icon = try string(fields["icon"], "\(itemPath).icon")
        for (key, text) in [("title", title), ("icon", icon ?? "-")] {
            if text.isEmpty { throw fail("\(itemPath).\(key)", "must not be empty") }
            if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw fail("\(itemPath).\(key)", "must not contain control characters")
            }
        }
        claims.append(Claim(claim: Int32(SH_CLAIM_SHORTCUT), value: "\(id) \(title)"))
        if let icon { claims.append(Claim(claim: Int32(SH_CLAIM_SHORTCUT_ICON), value: "\(id) \(icon)")) }
        for claim in claims.suffix(icon == nil ? 1 : 2) where claim.value.utf8.count >= Int(SH_META_CLAIM_MAX) {
            throw fail(
                itemPath,
                "the id and \(claim.claim == Int32(SH_CLAIM_SHORTCUT) ? "title" : "icon") are too long together "
                    + "(\(claim.value.utf8.count) bytes, at most \(SH_META_CLAIM_MAX - 1))")
        }
    }
    return claims
}

// MARK: - Records

/// Little-endian record bytes, written at the offsets metadata.h defines.
struct Record {
    var bytes: [UInt8]

    init(size: Int) { bytes = [UInt8](repeating: 0, count: size) }

    mutating func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        for index in 0..<MemoryLayout<T>.size {
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
        }
    }

    /// Writes `string` NUL-padded into a field of `capacity` bytes.
    mutating func put(_ string: String, at offset: Int, capacity: Int32) {
        let utf8 = Array(string.utf8)
        precondition(utf8.count < Int(capacity), "\(string) does not fit \(capacity) bytes")
        bytes.replaceSubrange(offset..<offset + utf8.count, with: utf8)
    }

    mutating func putHeader(size: Int, version: UInt32, kind: Int) {
        put(UInt32(size), at: MemoryLayout<sh_meta_header>.offset(of: \.size)!)
        put(version, at: MemoryLayout<sh_meta_header>.offset(of: \.version)!)
        put(SH_META_MAGIC, at: MemoryLayout<sh_meta_header>.offset(of: \.magic)!)
        put(UInt32(kind), at: MemoryLayout<sh_meta_header>.offset(of: \.kind)!)
    }
}

func pluginRecord() -> Record {
    typealias P = sh_meta_plugin
    let size = MemoryLayout<P>.size
    var record = Record(size: size)
    record.putHeader(size: size, version: SH_META_PLUGIN_VERSION, kind: SH_META_KIND_PLUGIN)
    record.put(SH_ABI_VERSION, at: MemoryLayout<P>.offset(of: \.abi_version)!)
    record.put(SH_ABI_VERSION_MIN, at: MemoryLayout<P>.offset(of: \.abi_min)!)
    record.put(toolchain, at: MemoryLayout<P>.offset(of: \.toolchain)!, capacity: SH_META_TOOLCHAIN_MAX)
    record.put(ServicePlugin.sdkVersion, at: MemoryLayout<P>.offset(of: \.sdk_version)!, capacity: SH_META_SDK_MAX)
    return record
}

func serviceRecord(_ spec: ServiceSpec) -> Record {
    typealias S = sh_meta_service
    let size = MemoryLayout<S>.size
    var record = Record(size: size)
    record.putHeader(size: size, version: SH_META_SERVICE_VERSION, kind: SH_META_KIND_SERVICE)
    record.put(spec.id, at: MemoryLayout<S>.offset(of: \.id)!, capacity: SH_META_ID_MAX)
    record.put(spec.name, at: MemoryLayout<S>.offset(of: \.name)!, capacity: SH_META_NAME_MAX)
    record.put(spec.version, at: MemoryLayout<S>.offset(of: \.version)!, capacity: SH_META_VERSION_MAX)
    let events = MemoryLayout<S>.offset(of: \.events)!
    record.put(spec.events.0, at: events)
    record.put(spec.events.1, at: events + 8)
    record.put(spec.priority, at: MemoryLayout<S>.offset(of: \.priority)!)
    record.put(spec.flags, at: MemoryLayout<S>.offset(of: \.flags)!)
    return record
}

func claimRecord(_ claim: Claim, of spec: ServiceSpec) -> Record {
    typealias C = sh_meta_claim
    let size = MemoryLayout<C>.size
    var record = Record(size: size)
    record.putHeader(size: size, version: SH_META_CLAIM_VERSION, kind: SH_META_KIND_CLAIM)
    record.put(spec.id, at: MemoryLayout<C>.offset(of: \.service_id)!, capacity: SH_META_ID_MAX)
    record.put(UInt32(claim.claim), at: MemoryLayout<C>.offset(of: \.claim)!)
    record.put(UInt32(0), at: MemoryLayout<C>.offset(of: \.reserved)!)
    record.put(claim.value, at: MemoryLayout<C>.offset(of: \.value)!, capacity: SH_META_CLAIM_MAX)
    return record
}

/// "url", "activity" or "notification", for the generated comments.
func claimName(_ claim: Int32) -> String {
    switch Int(claim) {
    case SH_CLAIM_URL: "url"
    case SH_CLAIM_ACTIVITY: "activity"
    case SH_CLAIM_NOTIFICATION: "notification"
    case SH_CLAIM_SCENE_ROLE: "scene role"
    case SH_CLAIM_ANSWER: "answer"
    case SH_CLAIM_REQUIRES: "requires"
    case SH_CLAIM_AFTER: "after"
    case SH_CLAIM_SHORTCUT: "shortcut"
    case SH_CLAIM_SHORTCUT_ICON: "shortcut icon"
    case SH_CLAIM_SETTINGS_SCHEMA: "settings schema"
    default: "claim \(claim)"
    }
}

// MARK: - Swift output

func hex64(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    let padded = String(repeating: "0", count: 16 - digits.count) + digits
    return "0x" + padded.prefix(8) + "_" + padded.suffix(8)
}

/// The bytes as printable ASCII, "." for anything else.
func printable(_ bytes: ArraySlice<UInt8>) -> String {
    String(decoding: bytes.map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: ".") }, as: UTF8.self)
}

/// A Swift string literal for `string` (the ids and type names are ASCII, but escape anyway).
func swiftLiteral(_ string: String) -> String {
    var out = "\""
    for scalar in string.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            out += "\\u{\(String(scalar.value, radix: 16))}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

func global(_ name: String, _ record: Record, comment: String) -> String {
    precondition(record.bytes.count % 8 == 0)
    var lines = [
        "// \(comment)",
        "@section(\"servicehost_meta\") @used",
        "private let \(name): InlineArray<\(record.bytes.count / 8), UInt64> = [",
    ]
    for offset in stride(from: 0, to: record.bytes.count, by: 8) {
        var word: UInt64 = 0
        for index in 0..<8 { word |= UInt64(record.bytes[offset + index]) << (8 * UInt64(index)) }
        let chunk = record.bytes[offset..<offset + 8]
        lines.append(
            "    \(hex64(word)), // \(String(repeating: " ", count: 3 - String(offset).count))\(offset): \(printable(chunk))"
        )
    }
    lines.append("]")
    return lines.joined(separator: "\n")
}

func generate(_ specs: [ServiceSpec], manifestPath: String) -> String {
    var parts: [String] = []
    parts.append(
        """
        // Generated by servicehost-metagen from \(manifestPath).
        // Do not edit: edit servicehost.json instead.
        //
        // The records below are the plugin's static metadata (metadata.h), read by
        // the host from the file's "servicehost_meta" section without running it.
        // Each is little-endian bytes as UInt64 words, so records stay 8-byte aligned.

        import ServiceKit
        """)
    parts.append(
        global(
            "_servicehostMetaPlugin", pluginRecord(),
            comment:
                "sh_meta_plugin: ABI \(SH_ABI_VERSION_MIN)...\(SH_ABI_VERSION), \(toolchain), ServiceKit \(ServicePlugin.sdkVersion)"
        ))
    for (index, spec) in specs.enumerated() {
        parts.append(
            global(
                "_servicehostMetaService\(index)", serviceRecord(spec),
                comment: "sh_meta_service: \(spec.id) \"\(spec.name)\" \(spec.version), events "
                    + "\(hex64(spec.events.0)) \(hex64(spec.events.1)), priority \(spec.priority)"))
        for (claimIndex, claim) in spec.claims.enumerated() {
            parts.append(
                global(
                    "_servicehostMetaClaim\(index)_\(claimIndex)", claimRecord(claim, of: spec),
                    comment: "sh_meta_claim: \(spec.id) \(claimName(claim.claim)) \(swiftLiteral(claim.value))"))
        }
    }
    // The checks and the class's creation carry the manifest's line (#sourceLocation), so a
    // wrong `type`, a missing or misspelled handler, or a handler whose event is not listed
    // fails the build with an error at servicehost.json, not in this generated file.
    for spec in specs {
        let listed = Set(eventKinds.filter { handles(spec.events, $0.name) }.map(\.name))
        var checks = EventKind.allCases.filter { $0.capability != nil }.map { kind in
            "ServiceKit._Manifest\(listed.contains(kind.name) ? "Lists" : "Omits")_\(kind.name)"
        }
        if !spec.handlesScenes { checks.append("ServiceKit._ManifestOmits_scenes") }
        parts.append(
            """
            // \(spec.id): the class \(spec.type) handles exactly the events servicehost.json lists.
            #sourceLocation(file: \(swiftLiteral(manifestPath)), line: \(spec.line))
            extension \(spec.type): \(checks.joined(separator: ", ")) {}
            #sourceLocation()
            """)
    }
    for (index, spec) in specs.enumerated() {
        // A service with scene events must adopt SceneService: the build says so here.
        let make = spec.handlesScenes ? "ServicePlugin.sceneService(\(spec.type)())" : "\(spec.type)()"
        parts.append(
            """
            // \(spec.id): servicehost.json's "type" names the class the host creates.
            #sourceLocation(file: \(swiftLiteral(manifestPath)), line: \(spec.line))
            private func _servicehostMake\(index)() -> any ApplicationService { \(make) }
            #sourceLocation()
            """)
    }
    let entries = specs.enumerated().map { index, spec in
        "        .init(id: \(swiftLiteral(spec.id)), make: _servicehostMake\(index)),"
    }
    parts.append(
        """
        /// The plugin's one exported symbol (plugin.h): `const sh_plugin *servicehost_entry(const sh_host_offer *)`.
        @c(servicehost_entry)
        public func _servicehostEntry(_ offer: UnsafeRawPointer?) -> UnsafeRawPointer? {
            ServicePlugin.entry(offer, services: [
        \(entries.joined(separator: "\n"))
            ])
        }
        """)
    return parts.joined(separator: "\n\n") + "\n"
}

/// Writes `text` to `path` unless the file already holds it.
func writeIfChanged(_ text: String, to path: String) throws(ManifestError) {
    let bytes = Array(text.utf8)
    if let existing = try? readFile(path), existing == bytes { return }
    guard let file = fopen(path, "wb") else {
        throw fail("", "cannot write \(path): \(String(cString: strerror(errno)))")
    }
    let written = fwrite(bytes, 1, bytes.count, file)
    if fclose(file) != 0 || written != bytes.count {
        throw fail("", "cannot write \(path): \(String(cString: strerror(errno)))")
    }
}

// MARK: - Main

/// Prints one line to standard error.
func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

precondition(MemoryLayout<sh_meta_header>.size == 16, "sh_meta_header layout")
precondition(MemoryLayout<sh_meta_plugin>.size == 72, "sh_meta_plugin layout")
precondition(MemoryLayout<sh_meta_service>.size == 264, "sh_meta_service layout")
precondition(MemoryLayout<sh_meta_claim>.size == 272, "sh_meta_claim layout")
precondition(ServicePlugin.sdkVersion.utf8.count < Int(SH_META_SDK_MAX), "sdkVersion too long")
precondition(toolchain.utf8.count < Int(SH_META_TOOLCHAIN_MAX), "toolchain too long")

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    printError("usage: servicehost-metagen <servicehost.json> <output.swift>")
    exit(2)
}
let manifestPath = arguments[1]
do throws(ManifestError) {
    let specs = try parseManifest(try readFile(manifestPath))
    try writeIfChanged(generate(specs, manifestPath: manifestPath), to: arguments[2])
} catch {
    let location = error.path.isEmpty ? "" : "\(error.path): "
    printError("\(manifestPath): \(location)\(error.reason)")
    exit(1)
}
