import ServiceABI
import ServiceVocabulary

/// One payload struct of events.h or scenes.h, declared once: its version, and its fields in
/// the order they cross to a worker. The same `fields` function encodes (WireWriter reads
/// each field into a frame) and decodes (PayloadReader sets each field from a frame, its
/// strings, bytes, tapes and nested structs copied into the event's arena), so the two sides
/// cannot disagree on an order or a presence byte. The host builds the struct from `empty`,
/// in the payload's file, beside this declaration.
///
/// A new event with data: its struct in the header, a row in EventKind (and an EventData
/// case), one file here (this conformance, a row in `EventData.payload`, and the EventArena
/// method that builds it from the host's input), the SDK's method, and a test.
protocol EventPayload {
    /// The header's SH_*_VERSION of the struct.
    static var currentVersion: UInt32 { get }
    /// Every field that crosses to a worker, in wire order (`size` and `version` never do:
    /// the worker's struct has its own, the same binary's).
    static func fields<Coder: PayloadCoder>(_ value: inout Self, _ coder: inout Coder) throws(WireError)

    /// The C struct, zero-filled (imported from C).
    init()
    var size: UInt32 { get set }
    var version: UInt32 { get set }

    /// Writes the struct at `data` (EventCodec, by an event's EventData).
    static func write(_ data: UnsafeRawPointer, into w: inout WireWriter)
    /// Reads a struct into the reader's arena (EventCodec, by an event's EventData).
    static func read(_ reader: inout PayloadReader) throws(WireError) -> UnsafeRawPointer
}

extension EventPayload {
    /// The struct with `size` and `version` set and every other field zero.
    static var empty: Self {
        var value = Self()
        value.size = UInt32(MemoryLayout<Self>.size)
        value.version = currentVersion
        return value
    }

    static func write(_ data: UnsafeRawPointer, into w: inout WireWriter) {
        w.payload(data.assumingMemoryBound(to: Self.self).pointee)
    }

    static func read(_ reader: inout PayloadReader) throws(WireError) -> UnsafeRawPointer {
        UnsafeRawPointer(try reader.read(Self.self))
    }
}

/// The payload of each EventData: the one table from the event vocabulary to the structs.
extension EventData {
    /// The struct `sh_event.data` points at; nil for `none` and for the scene payloads, whose
    /// `sh_scene` lives in the worker across events (EventCodec+Scenes).
    var payload: (any EventPayload.Type)? {
        switch self {
        case .none, .sceneConnection, .scene, .sceneOpenURL, .sceneUserActivity: nil
        case .launchOptions: sh_launch_options.self
        case .notification: sh_notification.self
        case .push: sh_push.self
        case .deviceToken: sh_device_token.self
        case .errorInfo: sh_error_info.self
        case .openURL: sh_open_url.self
        case .userActivity: sh_user_activity.self
        case .notificationSettings: sh_notification_settings.self
        case .request: sh_request.self
        case .settingsChange: sh_settings_change.self
        case .dependency: sh_dependency.self
        case .shortcutItem: sh_shortcut_item.self
        }
    }
}

/// Visits a payload's fields: a writer reads them, a reader sets them. `what` names the field
/// in a decoding error.
protocol PayloadCoder {
    mutating func u32(_ value: inout UInt32, _ what: String) throws(WireError)
    mutating func i32(_ value: inout Int32, _ what: String) throws(WireError)
    /// A NUL-terminated string, never NULL (byte for byte, even invalid UTF-8).
    mutating func string(_ value: inout UnsafePointer<CChar>?, _ what: String) throws(WireError)
    /// A NUL-terminated string or NULL: a presence byte first.
    mutating func optionalString(_ value: inout UnsafePointer<CChar>?, _ what: String) throws(WireError)
    /// `count` bytes at `pointer` (decoded NUL-terminated, so JSON text is a C string too).
    mutating func buffer<T>(_ pointer: inout UnsafePointer<T>?, _ count: inout Int, _ what: String) throws(WireError)
    /// The same, or NULL with a count of 0: a presence byte first.
    mutating func optionalBuffer<T>(_ pointer: inout UnsafePointer<T>?, _ count: inout Int, _ what: String)
        throws(WireError)
    /// A parsed JSON tape or NULL, node for node: a presence byte first.
    mutating func tape(_ value: inout UnsafePointer<sh_json>?, _ what: String) throws(WireError)
    /// A nested payload, never NULL.
    mutating func payload<P: EventPayload>(_ value: inout UnsafePointer<P>?, _ what: String) throws(WireError)
    /// A nested payload or NULL: a presence byte first.
    mutating func optionalPayload<P: EventPayload>(_ value: inout UnsafePointer<P>?, _ what: String) throws(WireError)
    /// An array of `count` nested payloads: a u64 count first.
    mutating func payloads<P: EventPayload>(
        _ items: inout UnsafePointer<UnsafePointer<P>?>?, _ count: inout Int, _ what: String
    ) throws(WireError)
}

/// Writes a payload's fields into the frame (host side).
extension WireWriter: PayloadCoder {
    /// Writes `value`'s fields.
    mutating func payload<P: EventPayload>(_ value: P) {
        var copy = value
        try? P.fields(&copy, &self)  // a writer never throws
    }

    mutating func u32(_ value: inout UInt32, _ what: String) { u32(value) }
    mutating func i32(_ value: inout Int32, _ what: String) { i32(value) }

    mutating func string(_ value: inout UnsafePointer<CChar>?, _ what: String) {
        if let value { cString(value) } else { blob([]) }
    }

    mutating func optionalString(_ value: inout UnsafePointer<CChar>?, _ what: String) {
        optionalCString(value)
    }

    mutating func buffer<T>(_ pointer: inout UnsafePointer<T>?, _ count: inout Int, _ what: String) {
        blob(pointer.map { UnsafeRawPointer($0) }, count: count)
    }

    mutating func optionalBuffer<T>(_ pointer: inout UnsafePointer<T>?, _ count: inout Int, _ what: String) {
        bool(pointer != nil)
        if pointer != nil { buffer(&pointer, &count, what) }
    }

    mutating func tape(_ value: inout UnsafePointer<sh_json>?, _ what: String) {
        bool(value != nil)
        if let value { EventCodec.tape(value.pointee, &self) }
    }

    mutating func payload<P: EventPayload>(_ value: inout UnsafePointer<P>?, _ what: String) {
        if let value { payload(value.pointee) }
    }

    mutating func optionalPayload<P: EventPayload>(_ value: inout UnsafePointer<P>?, _ what: String) {
        bool(value != nil)
        payload(&value, what)
    }

    mutating func payloads<P: EventPayload>(
        _ items: inout UnsafePointer<UnsafePointer<P>?>?, _ count: inout Int, _ what: String
    ) {
        u64(UInt64(count))
        for index in 0..<count {
            var item = items?[index]
            payload(&item, what)
        }
    }
}

/// Sets a payload's fields from a frame (worker side), in `arena`; every read is checked, so a
/// corrupt frame is a WireError with a reason, never a trap.
struct PayloadReader: PayloadCoder {
    var r: WireReader
    let arena: EventArena

    /// Reads a `P` and boxes it in the arena.
    mutating func read<P: EventPayload>(_: P.Type) throws(WireError) -> UnsafePointer<P> {
        var value = P.empty
        try P.fields(&value, &self)
        return arena.box(value)
    }

    mutating func u32(_ value: inout UInt32, _ what: String) throws(WireError) { value = try r.u32(what) }
    mutating func i32(_ value: inout Int32, _ what: String) throws(WireError) { value = try r.i32(what) }

    mutating func string(_ value: inout UnsafePointer<CChar>?, _ what: String) throws(WireError) {
        value = EventCodec.charPointer(arena.bytes(try r.blob(what) + [0]))
    }

    mutating func optionalString(_ value: inout UnsafePointer<CChar>?, _ what: String) throws(WireError) {
        value = nil
        if try r.bool(what + " presence") { try string(&value, what) }
    }

    mutating func buffer<T>(_ pointer: inout UnsafePointer<T>?, _ count: inout Int, _ what: String) throws(WireError) {
        let bytes = try r.blob(what)
        pointer = UnsafeRawPointer(arena.bytes(bytes + [0])).assumingMemoryBound(to: T.self)
        count = bytes.count
    }

    mutating func optionalBuffer<T>(_ pointer: inout UnsafePointer<T>?, _ count: inout Int, _ what: String)
        throws(WireError)
    {
        pointer = nil
        count = 0
        if try r.bool(what + " presence") { try buffer(&pointer, &count, what) }
    }

    mutating func tape(_ value: inout UnsafePointer<sh_json>?, _ what: String) throws(WireError) {
        value = try r.bool(what + " presence") ? try EventCodec.tape(&r, arena) : nil
    }

    mutating func payload<P: EventPayload>(_ value: inout UnsafePointer<P>?, _ what: String) throws(WireError) {
        value = try read(P.self)
    }

    mutating func optionalPayload<P: EventPayload>(_ value: inout UnsafePointer<P>?, _ what: String) throws(WireError) {
        value = try r.bool(what + " presence") ? try read(P.self) : nil
    }

    mutating func payloads<P: EventPayload>(
        _ items: inout UnsafePointer<UnsafePointer<P>?>?, _ count: inout Int, _ what: String
    ) throws(WireError) {
        // Every item takes more than 12 bytes on the wire: a count the rest of the payload
        // cannot hold is a lie, refused before anything is reserved for it.
        let declared = try r.u64(what + " count")
        guard declared <= UInt64(r.remaining / 12) else {
            throw .malformed("\(declared) of \(what) in \(r.remaining) bytes")
        }
        var list: [UnsafePointer<P>?] = []
        for _ in 0..<declared { list.append(try read(P.self)) }
        items = arena.array(list)
        count = list.count
    }
}
