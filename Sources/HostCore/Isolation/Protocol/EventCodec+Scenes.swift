import ServiceABI

/// Scene events on the wire.
///
/// Every scene event carries its scene's whole state (`sh_scene`: id, name, role, state,
/// configuration, settings text and tape), so a worker that started after the scene
/// connected (a restart) still sees it exactly; the worker keeps one `sh_scene` per id
/// (WorkerScenes) and updates it in place. Then the kind's own data:
///
/// - configurationForConnecting, sceneWillConnect: the connection options (flags, each URL
///   context, each user activity, the restoration activity if any), then whether there is a configuration to fill and, when
///   there is, its fixed fields as the host emptied them, `settings_capacity` and
///   `settings_len`, and the settings buffer's first `settings_len` bytes.
/// - sceneOpenURLContexts: the URL; sceneContinueUserActivity: the activity.
/// - the lifecycle events: nothing more (their data is the `sh_scene`).
///
/// The answer to configurationForConnecting follows the result in the `result` frame: the
/// fixed `name` and `role` arrays as the service left them, its `settings_len`, and the
/// bytes it wrote to the settings buffer (at most `settings_capacity`). The host copies them
/// into its own out-struct, within the struct's `size`, and then checks them as it checks an
/// in-process answer.
extension EventCodec {
    /// The worker's out-struct of configurationForConnecting, and the buffer it gave as
    /// `settings` (read from there even if the service moved the pointer, as the host does).
    struct ConfigurationAnswer {
        let configuration: UnsafeMutablePointer<sh_scene_configuration>
        let buffer: UnsafePointer<UInt8>
        let capacity: Int
    }

    // MARK: Encoding (host side)

    static func sceneData(_ kind: EventKind, _ data: UnsafeRawPointer, _ w: inout WireWriter) {
        switch kind.data {
        case .sceneConnection:
            let c = data.assumingMemoryBound(to: sh_scene_connection.self).pointee
            scene(c.scene.pointee, &w)
            w.payload(c.options.pointee)
            w.bool(c.configuration != nil)
            if let configuration = c.configuration { question(configuration.pointee, &w) }
        case .sceneOpenURL:
            let u = data.assumingMemoryBound(to: sh_scene_open_url.self).pointee
            scene(u.scene.pointee, &w)
            w.payload(u.url.pointee)
        case .sceneUserActivity:
            let a = data.assumingMemoryBound(to: sh_scene_user_activity.self).pointee
            scene(a.scene.pointee, &w)
            w.payload(a.activity.pointee)
        default:
            scene(data.assumingMemoryBound(to: sh_scene.self).pointee, &w)
        }
    }

    private static func scene(_ s: sh_scene, _ w: inout WireWriter) {
        w.u64(s.id)
        w.cString(s.name)
        w.cString(s.role)
        w.i32(s.state)
        w.u32(s.reserved)
        w.optionalCString(s.configuration)
        w.bool(s.settings_json != nil)
        if s.settings_json != nil { w.blob(s.settings_json, count: s.settings_len) }
        w.bool(s.settings != nil)
        if let settings = s.settings { tape(settings.pointee, &w) }
    }

    /// The out-struct as the host prepared it.
    private static func question(_ c: sh_scene_configuration, _ w: inout WireWriter) {
        withUnsafeBytes(of: c.name) { w.blob($0) }
        withUnsafeBytes(of: c.role) { w.blob($0) }
        w.u64(UInt64(c.settings_capacity))
        w.u64(UInt64(c.settings_len))
        w.blob(c.settings.map { UnsafeRawPointer($0) }, count: min(c.settings_len, c.settings_capacity))
    }

    /// Copies the worker's answer (after the result in a `result` frame) into the host's
    /// out-struct of `event`; nothing is read for other events.
    static func readAnswer(_ r: inout WireReader, for event: UnsafePointer<sh_event>) throws(WireError) {
        guard event.pointee.kind == EventKind.configurationForConnecting.rawValue, let data = event.pointee.data else {
            return
        }
        let out = data.assumingMemoryBound(to: sh_scene_connection.self).pointee.configuration
        guard try r.bool("answer presence") else {
            if out != nil { throw .malformed("no answer for the configuration") }
            return
        }
        let name = try r.blob("configuration name")
        let role = try r.blob("configuration role")
        let length = try r.u64("settings length")
        let settings = try r.blob("settings")
        guard let out else { throw .malformed("an answer to no configuration") }
        guard name.count == Int(SH_SCENE_CONFIGURATION_NAME_MAX), role.count == Int(SH_SCENE_ROLE_MAX) else {
            throw .malformed("a configuration answer of \(name.count) and \(role.count) bytes")
        }
        guard length <= UInt64(Int.max) else { throw .malformed("settings length \(length)") }
        // Only the fields within the size the host's struct declares.
        let size = Int(out.pointee.size)
        func fits<Value>(_ field: PartialKeyPath<sh_scene_configuration>, _: Value.Type) -> Bool {
            guard let offset = MemoryLayout<sh_scene_configuration>.offset(of: field) else { return false }
            return offset + MemoryLayout<Value>.size <= size
        }
        if fits(\sh_scene_configuration.name, type(of: out.pointee.name)) {
            withUnsafeMutableBytes(of: &out.pointee.name) { $0.copyBytes(from: name) }
        }
        if fits(\sh_scene_configuration.role, type(of: out.pointee.role)) {
            withUnsafeMutableBytes(of: &out.pointee.role) { $0.copyBytes(from: role) }
        }
        if fits(\sh_scene_configuration.settings_len, Int.self),
            fits(\sh_scene_configuration.settings_capacity, Int.self),
            fits(\sh_scene_configuration.settings, UnsafeMutablePointer<CChar>?.self)
        {
            // The host's buffer takes what fits; a settings_len beyond it is kept, so the
            // host refuses the answer as it would refuse it from an in-process service.
            if let buffer = out.pointee.settings, !settings.isEmpty {
                let count = min(settings.count, out.pointee.settings_capacity)
                settings.withUnsafeBytes {
                    UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: count)
                }
            }
            out.pointee.settings_len = Int(length)
        }
    }

    // MARK: Decoding (worker side)

    static func sceneData(
        _ kind: EventKind, _ r: inout WireReader, _ arena: EventArena, _ scenes: WorkerScenes,
        into decoded: inout Decoded
    ) throws(WireError) {
        let scene = try scene(&r, kind, arena, scenes)
        switch kind.data {
        case .sceneConnection:
            let options = try read(sh_scene_connection_options.self, &r, arena)
            var configuration: UnsafeMutablePointer<sh_scene_configuration>?
            if try r.bool("configuration presence") {
                guard kind == .configurationForConnecting else {
                    throw .malformed("a configuration to fill in \(kind.name)")
                }
                let answer = try question(&r, arena)
                configuration = answer.configuration
                decoded.answer = answer
            }
            decoded.data = UnsafeRawPointer(
                arena.box(
                    sh_scene_connection(
                        size: UInt32(MemoryLayout<sh_scene_connection>.size), version: SH_SCENE_CONNECTION_VERSION,
                        scene: scene, options: options, configuration: configuration)))
        case .sceneOpenURL:
            decoded.data = UnsafeRawPointer(
                arena.box(
                    sh_scene_open_url(
                        size: UInt32(MemoryLayout<sh_scene_open_url>.size), version: SH_SCENE_OPEN_URL_VERSION,
                        scene: scene, url: try read(sh_open_url.self, &r, arena))))
        case .sceneUserActivity:
            decoded.data = UnsafeRawPointer(
                arena.box(
                    sh_scene_user_activity(
                        size: UInt32(MemoryLayout<sh_scene_user_activity>.size),
                        version: SH_SCENE_USER_ACTIVITY_VERSION,
                        scene: scene, activity: try read(sh_user_activity.self, &r, arena))))
        default:
            decoded.data = UnsafeRawPointer(scene)
        }
    }

    /// A payload read from `r` into `arena`.
    private static func read<P: EventPayload>(_: P.Type, _ r: inout WireReader, _ arena: EventArena) throws(WireError)
        -> UnsafePointer<P>
    {
        var reader = PayloadReader(r: r, arena: arena)
        defer { r = reader.r }
        return try reader.read(P.self)
    }

    /// The scene's one `sh_scene` in the worker, updated in place.
    private static func scene(
        _ r: inout WireReader, _ kind: EventKind, _ arena: EventArena,
        _ scenes: WorkerScenes
    ) throws(WireError) -> UnsafePointer<sh_scene> {
        let id = try r.u64("scene id")
        let name = try r.blob("scene name")
        let role = try r.blob("scene role")
        let state = try r.i32("scene state")
        let reserved = try r.u32("scene reserved")
        let configuration = try r.optionalBlob("scene configuration")
        let settings = try r.optionalBlob("scene settings")
        let hasTape = try r.bool("scene settings tape presence")
        let slot = scenes.slot(id, for: kind)
        let raw = slot.raw
        if slot.name != name {
            raw.pointee.name = slot.store(name)
            slot.name = name
        }
        if slot.role != role {
            raw.pointee.role = slot.store(role)
            slot.role = role
        }
        if slot.configuration != .some(configuration) {
            raw.pointee.configuration = configuration.map(slot.store)
            slot.configuration = configuration
        }
        let settingsChanged = slot.settings != .some(settings) || hasTape != (raw.pointee.settings != nil)
        if settingsChanged {
            raw.pointee.settings_json = settings.map(slot.store)
            raw.pointee.settings_len = settings?.count ?? 0
            slot.settings = settings
        }
        // The tape is read either way; it replaces the scene's only when the settings changed.
        let parsed = hasTape ? try tape(&r, settingsChanged ? slot.arena : arena) : nil
        if settingsChanged { raw.pointee.settings = parsed }
        raw.pointee.state = state
        raw.pointee.reserved = reserved
        if kind == .sceneDidDisconnect { scenes.noteDisconnect(id) }
        return UnsafePointer(raw)
    }

    /// The out-struct for the service, as the host prepared it, with a buffer of the host's capacity.
    private static func question(_ r: inout WireReader, _ arena: EventArena) throws(WireError) -> ConfigurationAnswer {
        let name = try r.blob("configuration name")
        let role = try r.blob("configuration role")
        guard name.count == Int(SH_SCENE_CONFIGURATION_NAME_MAX), role.count == Int(SH_SCENE_ROLE_MAX) else {
            throw .malformed("a configuration of \(name.count) and \(role.count) bytes")
        }
        let capacity = try r.u64("settings capacity")
        let length = try r.u64("settings length")
        // The answer carries the settings back: they must fit in a frame.
        guard capacity <= UInt64(Wire.maxPayload / 2), length <= UInt64(Int.max) else {
            throw .malformed("a settings buffer of \(capacity) bytes")
        }
        var buffer = [UInt8](repeating: 0, count: Int(capacity))
        let initial = try r.blob("settings")
        guard initial.count <= buffer.count else {
            throw .malformed("\(initial.count) bytes of settings in \(capacity)")
        }
        buffer.replaceSubrange(0..<initial.count, with: initial)
        let storage = arena.bytes(buffer)
        var c = sh_scene_configuration()
        c.size = UInt32(MemoryLayout<sh_scene_configuration>.size)
        c.version = SH_SCENE_CONFIGURATION_VERSION
        withUnsafeMutableBytes(of: &c.name) { $0.copyBytes(from: name) }
        withUnsafeMutableBytes(of: &c.role) { $0.copyBytes(from: role) }
        c.settings = UnsafeMutableRawPointer(mutating: storage).assumingMemoryBound(to: CChar.self)
        c.settings_capacity = Int(capacity)
        c.settings_len = Int(length)
        return ConfigurationAnswer(
            configuration: UnsafeMutablePointer(mutating: arena.box(c)), buffer: storage,
            capacity: Int(capacity))
    }

    /// Writes the service's answer after the result (configurationForConnecting only).
    static func writeAnswer(_ decoded: Decoded, into w: inout WireWriter) {
        guard decoded.kind == EventKind.configurationForConnecting.rawValue, decoded.data != nil else { return }
        w.bool(decoded.answer != nil)
        guard let answer = decoded.answer else { return }
        let c = answer.configuration.pointee
        withUnsafeBytes(of: c.name) { w.blob($0) }
        withUnsafeBytes(of: c.role) { w.blob($0) }
        w.u64(UInt64(c.settings_len))
        w.blob(UnsafeRawPointer(answer.buffer), count: min(c.settings_len, answer.capacity))
    }
}
