import ServiceABI

/// An `sh_event` and its data on the wire, so a service in a worker sees the same bytes it
/// would see in the host: strings byte for byte (even invalid UTF-8), JSON text and the
/// parsed tape node for node, flags, sequence number and app state.
///
/// Payload of an `event` frame: u32 service index, u32 kind, i32 app state, u64 seq,
/// u32 completion id (0: none), then the kind's data (nothing for kinds without data): the
/// fields its payload declares (EventPayload, Events/Payloads), in that order, for both sides.
/// Scene events carry their scene's whole state (EventCodec+Scenes.swift); the `result`
/// frame of configurationForConnecting carries the service's filled configuration back.
enum EventCodec {
    // MARK: Encoding (host side)

    /// Writes `event` for the service at `service` in its worker.
    static func encode(_ event: UnsafePointer<sh_event>, service: UInt32, completion: UInt32, into w: inout WireWriter)
    {
        let e = event.pointee
        w.u32(service)
        w.u32(e.kind)
        w.i32(e.app_state)
        w.u64(e.seq)
        w.u32(completion)
        guard let data = e.data, let kind = EventKind(rawValue: e.kind) else {
            w.bool(false)
            return
        }
        w.bool(true)
        // By the kind's data, so a new kind with an existing payload needs nothing here.
        if let payload = kind.data.payload {
            payload.write(data, into: &w)
        } else {
            sceneData(kind, data, &w)
        }
    }

    /// The tape node by node: type, count, next, then a string's bytes or a number's bits.
    static func tape(_ json: sh_json, _ w: inout WireWriter) {
        w.u64(UInt64(json.count))
        for index in 0..<json.count {
            let node = json.nodes[index]
            w.u32(node.type)
            w.u32(node.count)
            w.u32(node.next)
            switch node.type {
            case SH_JSON_STRING.rawValue: w.blob(node.string, count: node.length)
            case SH_JSON_NUMBER.rawValue: w.f64(node.number)
            default: break
            }
        }
    }

    // MARK: Decoding (worker side)

    /// One event read back, its data built in `arena`.
    struct Decoded {
        var service: Int
        var kind: UInt32
        var appState: Int32
        var seq: UInt64
        var completion: UInt32
        var data: UnsafeRawPointer?
        /// configurationForConnecting: the out-struct the service fills, sent back with the result.
        var answer: ConfigurationAnswer?
    }

    /// Reads an `event` frame's payload; the data's C structs live in `arena`, except each
    /// scene's `sh_scene`, which lives in `scenes` (one stable struct per connection).
    static func decode(_ r: inout WireReader, arena: EventArena, scenes: WorkerScenes) throws(WireError) -> Decoded {
        var decoded = Decoded(
            service: Int(try r.u32("service")), kind: try r.u32("kind"), appState: try r.i32("app state"),
            seq: try r.u64("seq"), completion: try r.u32("completion"), data: nil)
        // A scene whose sceneDidDisconnect returned is freed before any other event.
        if EventKind(rawValue: decoded.kind)?.isSceneEvent != true { scenes.retire() }
        guard try r.bool("data presence") else {
            try r.finish("the event")
            return decoded
        }
        guard let kind = EventKind(rawValue: decoded.kind) else {
            throw .malformed("data for unknown event kind \(decoded.kind)")
        }
        if kind.data == .none { throw .malformed("\(kind.name) carries no data") }
        if let payload = kind.data.payload {
            var reader = PayloadReader(r: r, arena: arena)
            decoded.data = try payload.read(&reader)
            r = reader.r
        } else {
            try sceneData(kind, &r, arena, scenes, into: &decoded)
        }
        try r.finish("the event")
        return decoded
    }

    static func charPointer(_ bytes: UnsafePointer<UInt8>) -> UnsafePointer<CChar> {
        UnsafeRawPointer(bytes).assumingMemoryBound(to: CChar.self)
    }

    /// Rebuilds a tape: one block of strings, one array of nodes pointing into it.
    static func tape(_ r: inout WireReader, _ arena: EventArena) throws(WireError) -> UnsafePointer<sh_json> {
        let count = try r.u64("tape size")
        // Every node takes at least 12 bytes on the wire: a count the rest of the payload cannot
        // hold is a lie, refused before anything is reserved for it.
        guard count <= UInt64(r.remaining / 12) else {
            throw .malformed("a tape of \(count) nodes in \(r.remaining) bytes")
        }
        var nodes: [sh_json_node] = []
        nodes.reserveCapacity(Int(count))
        var strings: [UInt8] = []
        var stringOffsets: [Int: Int] = [:]  // node index → offset in strings
        for index in 0..<Int(count) {
            var node = sh_json_node()
            node.type = try r.u32("node type")
            node.count = try r.u32("node count")
            node.next = try r.u32("node next")
            guard node.next > index && node.next <= count else {
                throw .malformed("tape node \(index) jumps to \(node.next)")
            }
            switch node.type {
            case SH_JSON_STRING.rawValue:
                let bytes = try r.blob("string node")
                stringOffsets[index] = strings.count
                node.length = bytes.count
                strings += bytes
                strings.append(0)
            case SH_JSON_NUMBER.rawValue:
                node.number = try r.f64("number node")
            case SH_JSON_NULL.rawValue, SH_JSON_FALSE.rawValue, SH_JSON_TRUE.rawValue, SH_JSON_ARRAY.rawValue,
                SH_JSON_OBJECT.rawValue:
                break
            default:
                throw .malformed("tape node type \(node.type)")
            }
            nodes.append(node)
        }
        let block = strings.isEmpty ? nil : charPointer(arena.bytes(strings))
        for (index, offset) in stringOffsets { nodes[index].string = block.map { $0 + offset } }
        let nodeBytes = nodes.withUnsafeBytes { Array($0) }
        let stored = UnsafeRawPointer(arena.bytes(nodeBytes)).assumingMemoryBound(to: sh_json_node.self)
        return arena.box(
            sh_json(
                size: UInt32(MemoryLayout<sh_json>.size), version: SH_JSON_VERSION,
                nodes: nodes.isEmpty ? nil : stored, count: nodes.count))
    }
}
