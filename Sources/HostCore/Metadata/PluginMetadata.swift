import Glibc
import ServiceABI
import ServiceJSON

/// What a plugin file says about itself in its `servicehost_meta` section.
public struct PluginMetadata: Sendable, Equatable {
    /// The newest ABI version the plugin speaks.
    public var abiVersion: UInt32
    /// The oldest ABI version the plugin speaks.
    public var abiMin: UInt32
    /// What compiled it: "swift 6.3.1", "c".
    public var toolchain: String
    /// The ServiceKit version a Swift plugin carries; empty for C.
    public var sdkVersion: String
    /// The services the library holds, in record order.
    public var services: [ServiceMetadata]
}

/// One service's static description.
///
/// A value with copy-on-write storage: its fourteen fields live in one shared box, so a copy
/// costs one retain. It is copied several times per plugin at every start (inspection, plan,
/// open, slot), and as thirteen fields (ten of them reference-counted) each copy cost ten
/// retains and releases, ~70 a plugin, ~0.6 µs (perf, scripts/bench row 3).
public struct ServiceMetadata: Sendable, Equatable {
    private var storage: Storage
    /// Reverse-DNS id: "dev.servicehost.logger".
    public var id: String {
        get { storage.fields.id }
        _modify {
            makeUnique()
            yield &storage.fields.id
        }
    }
    /// Display name: "Logger".
    public var name: String {
        get { storage.fields.name }
        _modify {
            makeUnique()
            yield &storage.fields.name
        }
    }
    /// The service's version: "1.0.0".
    public var version: String {
        get { storage.fields.version }
        _modify {
            makeUnique()
            yield &storage.fields.version
        }
    }
    /// The events it handles; it is never called for others.
    public var events: EventMask {
        get { storage.fields.events }
        _modify {
            makeUnique()
            yield &storage.fields.events
        }
    }
    /// Higher runs earlier; equal priorities keep load order.
    public var priority: Int32 {
        get { storage.fields.priority }
        _modify {
            makeUnique()
            yield &storage.fields.priority
        }
    }
    /// URL schemes (`myapp`) and scheme-and-host patterns (`https://example.com`) it owns.
    public var urls: [String] {
        get { storage.fields.urls }
        _modify {
            makeUnique()
            yield &storage.fields.urls
        }
    }
    /// User activity types it owns.
    public var activities: [String] {
        get { storage.fields.activities }
        _modify {
            makeUnique()
            yield &storage.fields.activities
        }
    }
    /// Notification names it subscribes to; `*` means all.
    public var subscriptions: [String] {
        get { storage.fields.subscriptions }
        _modify {
            makeUnique()
            yield &storage.fields.subscriptions
        }
    }
    /// Scene roles it serves (`SH_CLAIM_SCENE_ROLE`); empty means every role.
    public var sceneRoles: [String] {
        get { storage.fields.sceneRoles }
        _modify {
            makeUnique()
            yield &storage.fields.sceneRoles
        }
    }
    /// Request names it answers (`SH_CLAIM_ANSWER`): the one service asked for each.
    public var answers: [String] {
        get { storage.fields.answers }
        _modify {
            makeUnique()
            yield &storage.fields.answers
        }
    }
    /// Quick actions it declares (`SH_CLAIM_SHORTCUT`): the one service asked for each id.
    public var shortcuts: [Shortcut] {
        get { storage.fields.shortcuts }
        _modify {
            makeUnique()
            yield &storage.fields.shortcuts
        }
    }
    /// Whether it asks to be opened on its first event rather than at start (`SH_META_SERVICE_LAZY`).
    public var lazy: Bool {
        get { storage.fields.lazy }
        _modify {
            makeUnique()
            yield &storage.fields.lazy
        }
    }
    /// The services it requires, with the versions it accepts (`SH_CLAIM_REQUIRES`).
    public var requires: [ServiceRequirement] {
        get { storage.fields.requires }
        _modify {
            makeUnique()
            yield &storage.fields.requires
        }
    }
    /// The services it starts after when they run (`SH_CLAIM_AFTER`).
    public var after: [String] {
        get { storage.fields.after }
        _modify {
            makeUnique()
            yield &storage.fields.after
        }
    }
    /// The schema of its settings (`SH_CLAIM_SETTINGS_SCHEMA`, the manifest's `settingsSchema`), or nil.
    package var settingsSchema: SettingsSchema? {
        get { storage.fields.settingsSchema }
        _modify {
            makeUnique()
            yield &storage.fields.settingsSchema
        }
    }

    /// A service's description.
    public init(
        id: String,
        name: String,
        version: String,
        events: EventMask,
        priority: Int32,
        urls: [String] = [],
        activities: [String] = [],
        subscriptions: [String] = [],
        sceneRoles: [String] = [],
        answers: [String] = [],
        shortcuts: [Shortcut] = [],
        lazy: Bool = false,
        requires: [ServiceRequirement] = [],
        after: [String] = []
    ) {
        storage = Storage(
            Fields(
                id: id, name: name, version: version, events: events, priority: priority, urls: urls,
                activities: activities,
                subscriptions: subscriptions, sceneRoles: sceneRoles, answers: answers, shortcuts: shortcuts,
                lazy: lazy, requires: requires,
                after: after))
    }

    /// Where its id field lies in its file's metadata section (-1: not decoded from one): a
    /// descriptor whose id points there is this service (``PluginLoader``). Not compared by
    /// `==`: it says where the description was read, not what it says.
    var idOffset: Int {
        get { storage.idOffset }
        _modify {
            makeUnique()
            yield &storage.idOffset
        }
    }

    public static func == (a: ServiceMetadata, b: ServiceMetadata) -> Bool {
        a.storage === b.storage || a.storage.fields == b.storage.fields
    }

    /// Gives this value a box of its own before a field changes (copy-on-write).
    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields, idOffset: storage.idOffset) }
    }

    private struct Fields: Equatable {
        var id: String
        var name: String
        var version: String
        var events: EventMask
        var priority: Int32
        var urls: [String]
        var activities: [String]
        var subscriptions: [String]
        var sceneRoles: [String]
        var answers: [String]
        var shortcuts: [Shortcut]
        var lazy: Bool
        var requires: [ServiceRequirement]
        var after: [String]
        var settingsSchema: SettingsSchema? = nil
    }

    // Unchecked: a box is written only through `_modify`, after `makeUnique()` made it this
    // value's own (copy-on-write), so a box shared between values or threads is never written.
    // Unchecked exclusivity too: the same rule (a box is written only when this value holds the
    // sole reference) rules out an overlapping access, and the dynamic check cost every field read
    // a `swift_beginAccess` (~90 instructions; ~30 reads per plugin at every start, callgrind).
    private final class Storage: @unchecked Sendable {
        @exclusivity(unchecked) var fields: Fields
        @exclusivity(unchecked) var idOffset: Int
        init(_ fields: Fields, idOffset: Int = -1) {
            self.fields = fields
            self.idOffset = idOffset
        }
    }
}

extension PluginMetadata {
    /// The most services one plugin file may declare; a file declaring more is refused.
    public static let maxServices = 256
    /// The most claims (URLs, activities, subscriptions, scene roles, requirements and `after`
    /// entries together) one service may make; a file making more is refused.
    public static let maxClaimsPerService = 256

    static let pluginRecordSize = MemoryLayout<sh_meta_plugin>.size
    static let serviceRecordSize = MemoryLayout<sh_meta_service>.size

    /// Decodes the records of a `servicehost_meta` section.
    ///
    /// Bytes that do not start a record (linker padding) are skipped; record kinds this
    /// host does not know are skipped by their size. Linear in the section's size: more than
    /// ``maxServices`` services, or more than ``maxClaimsPerService`` claims for one service,
    /// are refused.
    public static func decode(_ bytes: [UInt8]) throws(LoadFailure.Reason) -> PluginMetadata {
        var plugin: PluginMetadata?
        var services: [ServiceMetadata] = []
        var claims: [(service: String, kind: UInt32, value: String)] = []
        var claimCount: [String: Int] = [:]
        var offset = 0
        while offset + 16 <= bytes.count {
            guard bytes.u32(offset + 8) == SH_META_MAGIC else {
                offset += 1
                continue
            }
            let size = Int(bytes.u32(offset))
            let kind = bytes.u32(offset + 12)
            guard size >= 16, size <= bytes.count - offset else {
                throw .invalidMetadata(
                    "a record at byte \(offset) claims \(size) bytes; the section has \(bytes.count - offset) left")
            }
            // Each record is read where it lies (its fields at `offset` plus theirs): a copy of
            // each was two arrays per plugin file at every start.
            let record = Record(bytes: bytes, base: offset, count: size)
            switch kind {
            case UInt32(SH_META_KIND_PLUGIN):
                guard plugin == nil else { throw .invalidMetadata("more than one plugin record") }
                plugin = try decodePlugin(record)
            case UInt32(SH_META_KIND_SERVICE):
                guard services.count < maxServices else {
                    throw .invalidMetadata("more than \(maxServices) service records (the limit per plugin file)")
                }
                services.append(try decodeService(record, index: services.count))
            case UInt32(SH_META_KIND_CLAIM):
                let claim = try decodeClaim(record, index: claims.count)
                claimCount[claim.service, default: 0] += 1
                guard claimCount[claim.service]! <= maxClaimsPerService else {
                    throw .invalidMetadata(
                        "service \(claim.service) makes more than \(maxClaimsPerService) claims (the limit per service)"
                    )
                }
                claims.append(claim)
            default:
                break  // a kind from a newer SDK
            }
            offset += size
        }
        guard var result = plugin else {
            throw .invalidMetadata("no plugin record (C: add SH_PLUGIN_METADATA)")
        }
        guard !services.isEmpty else { throw .invalidMetadata("no service records") }
        var indexes: [String: Int] = [:]
        // A file of one service and no claims (most) needs no table: a table per file was
        // ~1200 instructions per plugin at every start (callgrind).
        if services.count > 1 || !claims.isEmpty {
            indexes.reserveCapacity(services.count)
            for (index, service) in services.enumerated() where indexes.updateValue(index, forKey: service.id) != nil {
                throw .invalidMetadata("service id \(service.id) is declared twice")
            }
        }
        // Each service's schema text, its pieces in file order (only for files that declare one).
        var schemas: [Int: String] = [:]
        for (number, claim) in claims.enumerated() {
            let index: Int
            if claim.service.isEmpty {
                // An empty id (C's SH_CLAIM_METADATA) is the file's only service.
                guard services.count == 1 else {
                    throw .invalidMetadata(
                        "claim record \(number + 1) names no service, and the file declares \(services.count) "
                            + "(C: name it with SH_CLAIM_METADATA_ID)")
                }
                index = 0
            } else {
                guard let found = indexes[claim.service] else {
                    throw .invalidMetadata("a claim names service \(claim.service), which the file does not declare")
                }
                index = found
            }
            let service = services[index].id
            switch Int(claim.kind) {
            case SH_CLAIM_REQUIRES:
                let requirement: ServiceRequirement
                do throws(RequirementError) { requirement = try ServiceRequirement(claim: claim.value) } catch {
                    throw .invalidMetadata("service \(service) requires \"\(claim.value)\": \(error.reason)")
                }
                guard requirement.id != service else { throw .invalidMetadata("service \(service) requires itself") }
                services[index].requires.append(requirement)
            case SH_CLAIM_AFTER:
                if let problem = ServiceID.problem(with: claim.value) {
                    throw .invalidMetadata(
                        "service \(service) starts after \"\(claim.value)\": the service id \(problem)")
                }
                guard claim.value != service else { throw .invalidMetadata("service \(service) starts after itself") }
                services[index].after.append(claim.value)
            case SH_CLAIM_SHORTCUT, SH_CLAIM_SHORTCUT_ICON:
                try services[index].claimShortcut(Int(claim.kind), claim.value)
            case SH_CLAIM_SETTINGS_SCHEMA:
                schemas[index, default: ""] += claim.value
            default:
                services[index].claim(claim.kind, claim.value)
            }
        }
        for (index, text) in schemas {
            do throws(SettingsSchemaError) {
                services[index].settingsSchema = try SettingsSchema(parsing: Array(text.utf8))
            } catch {
                throw .invalidMetadata("service \(services[index].id) declares a settings schema: \(error)")
            }
        }
        result.services = services
        return result
    }

    /// One record of a section: `count` bytes of `bytes` from `base`, of at least the size of
    /// its kind's struct (checked before any field is read).
    private struct Record {
        let bytes: [UInt8]
        let base: Int
        let count: Int

        func u32(_ offset: Int) -> UInt32 { bytes.u32(base + offset) }
        func u64(_ offset: Int) -> UInt64 { bytes.u64(base + offset) }
    }

    private static func decodeClaim(_ record: Record, index: Int) throws(LoadFailure.Reason) -> (
        service: String, kind: UInt32, value: String
    ) {
        // Named only in an error: building the words for every record cost a visible part of
        // decoding 1000 cached files.
        func what() -> String { "claim record \(index + 1)" }
        let layout = MemoryLayout<sh_meta_claim>.self
        guard record.count >= layout.size else {
            throw .invalidMetadata("\(what()) has \(record.count) bytes, expected \(layout.size)")
        }
        let service = try field(record, layout.offset(of: \.service_id)!, Int(SH_META_ID_MAX), what(), "service_id")
        let value = try field(record, layout.offset(of: \.value)!, Int(SH_META_CLAIM_MAX), what(), "value")
        guard !value.isEmpty else {
            throw .invalidMetadata(
                "\(what()) of \(service.isEmpty ? "the file's service" : service) has an empty value")
        }
        return (service, record.u32(layout.offset(of: \.claim)!), value)
    }

    private static func decodePlugin(_ record: Record) throws(LoadFailure.Reason) -> PluginMetadata {
        guard record.count >= pluginRecordSize else {
            throw .invalidMetadata("the plugin record has \(record.count) bytes, expected \(pluginRecordSize)")
        }
        let toolchainOffset = MemoryLayout<sh_meta_plugin>.offset(of: \.toolchain)!
        let sdkOffset = MemoryLayout<sh_meta_plugin>.offset(of: \.sdk_version)!
        return PluginMetadata(
            abiVersion: record.u32(MemoryLayout<sh_meta_plugin>.offset(of: \.abi_version)!),
            abiMin: record.u32(MemoryLayout<sh_meta_plugin>.offset(of: \.abi_min)!),
            toolchain: try field(record, toolchainOffset, Int(SH_META_TOOLCHAIN_MAX), "plugin record", "toolchain"),
            sdkVersion: try field(record, sdkOffset, Int(SH_META_SDK_MAX), "plugin record", "sdk_version"),
            services: [])
    }

    private static func decodeService(_ record: Record, index: Int) throws(LoadFailure.Reason) -> ServiceMetadata {
        func what() -> String { "service record \(index + 1)" }
        guard record.count >= serviceRecordSize else {
            throw .invalidMetadata("\(what()) has \(record.count) bytes, expected \(serviceRecordSize)")
        }
        let layout = MemoryLayout<sh_meta_service>.self
        let eventsOffset = layout.offset(of: \.events)!
        var service = ServiceMetadata(
            id: try field(record, layout.offset(of: \.id)!, Int(SH_META_ID_MAX), what(), "id"),
            name: try field(record, layout.offset(of: \.name)!, Int(SH_META_NAME_MAX), what(), "name"),
            version: try field(record, layout.offset(of: \.version)!, Int(SH_META_VERSION_MAX), what(), "version"),
            events: EventMask(record.u64(eventsOffset), record.u64(eventsOffset + 8)),
            priority: Int32(bitPattern: record.u32(layout.offset(of: \.priority)!)))
        service.idOffset = record.base + layout.offset(of: \.id)!
        // Flags this host does not know are ignored: they come from a newer SDK.
        service.lazy = record.u32(layout.offset(of: \.flags)!) & UInt32(SH_META_SERVICE_LAZY) != 0
        if let problem = ServiceID.problem(with: service.id) {
            throw .invalidMetadata("\(what()): service id \"\(service.id)\" \(problem)")
        }
        return service
    }

    /// A NUL-terminated UTF-8 string field of fixed capacity. `what` is built only for an error.
    private static func field(
        _ record: Record, _ offset: Int, _ capacity: Int, _ what: @autoclosure () -> String, _ name: String
    ) throws(LoadFailure.Reason) -> String {
        let start = record.base + offset
        // The terminator by `memchr` and the ASCII test by OR-ing the bytes, in the array's
        // buffer: the generic walks over a slice were ~400 instructions a field, three fields a
        // service, every plugin at every start. (`record` holds `capacity` bytes at `offset`:
        // its size was checked against its struct's.)
        let (length, isASCII) = record.bytes.withUnsafeBufferPointer { buffer -> (Int?, Bool) in
            let base = buffer.baseAddress! + start
            guard let terminator = memchr(base, 0, capacity) else { return (nil, false) }
            let length = UnsafeRawPointer(terminator) - UnsafeRawPointer(base)
            var bits: UInt8 = 0
            for index in 0..<length { bits |= base[index] }
            return (length, bits < 0x80)
        }
        guard let length else {
            throw .invalidMetadata("\(what()): \(name) is not NUL-terminated within its \(capacity) bytes")
        }
        let text = record.bytes[start..<start + length]
        // ASCII (nearly every field) is valid as it is; the generic validation is for the rest.
        if isASCII { return String(decoding: text, as: UTF8.self) }
        guard let valid = String(validating: text, as: UTF8.self) else {
            throw .invalidMetadata("\(what()): \(name) is not valid UTF-8")
        }
        return valid
    }
}

/// The rules for service ids.
public enum ServiceID {
    /// Why `id` is not a valid reverse-DNS service id, or nil when it is.
    ///
    /// Valid: at least two dot-separated labels of ASCII letters, digits, `-` and `_`,
    /// at most 127 bytes. These rules also keep an id safe as a file name.
    public static func problem(with id: String) -> String? {
        if isValid(id) { return nil }
        if id.isEmpty { return "is empty" }
        if id.utf8.count >= Int(SH_META_ID_MAX) { return "is longer than \(SH_META_ID_MAX - 1) bytes" }
        let labels = id.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count < 2 { return "is not reverse-DNS (expected at least two labels, like com.example.name)" }
        if labels.contains(where: \.isEmpty) { return "has an empty label" }
        let allowed = { (c: UInt8) in
            (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || c == 0x2D
                || c == 0x5F
        }
        if !id.utf8.allSatisfy({ $0 == 0x2E || allowed($0) }) {
            return "may hold only ASCII letters, digits, '-', '_' and '.'"
        }
        return nil
    }

    /// The rules of ``problem(with:)`` in one pass over the bytes, allocating nothing: every
    /// plugin file's ids are checked at each start (the registry cache serves the bytes, not
    /// the checked metadata), so the common case must not split the id. Over the string's own
    /// buffer: iterating its UTF-8 view cost ~50 instructions a byte (callgrind), this ~5.
    static func isValid(_ id: String) -> Bool {
        var id = id
        return id.withUTF8 { bytes in
            guard bytes.count < Int(SH_META_ID_MAX) else { return false }
            var labels = 1
            var labelLength = 0
            for c in bytes {
                if c == 0x2E {
                    guard labelLength > 0 else { return false }
                    labels += 1
                    labelLength = 0
                } else if (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c)
                    || c == 0x2D || c == 0x5F
                {
                    labelLength += 1
                } else {
                    return false
                }
            }
            return labelLength > 0 && labels >= 2
        }
    }
}

extension ServiceMetadata {
    /// Adds one claim of `kind` (SH_CLAIM_*); kinds from a newer SDK are ignored.
    fileprivate mutating func claim(_ kind: UInt32, _ value: String) {
        switch Int(kind) {
        case SH_CLAIM_URL: urls.append(value.lowercased())
        case SH_CLAIM_ACTIVITY: activities.append(value)
        case SH_CLAIM_NOTIFICATION: subscriptions.append(value)
        case SH_CLAIM_SCENE_ROLE: sceneRoles.append(value)
        case SH_CLAIM_ANSWER: answers.append(value)
        default: break  // a claim kind from a newer SDK
        }
    }
}
