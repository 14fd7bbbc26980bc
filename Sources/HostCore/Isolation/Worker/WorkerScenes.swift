import ServiceABI

/// The worker's `sh_scene`s: one per scene connection, keyed by its id (`sh_scene.id`,
/// unique for the host's lifetime), at one stable address from the first event of the
/// connection the worker sees until sceneDidDisconnect returned, as in the host.
///
/// Every scene event carries the scene's whole state; the struct is updated in place (a
/// string is stored again only when its bytes changed). After sceneDidDisconnect the scene
/// is retired: freed when the next event arrives that is not that scene's sceneDidDisconnect
/// (several services of one worker each receive it, with the same pointer). Main thread only.
final class WorkerScenes {
    final class Slot {
        let raw: UnsafeMutablePointer<sh_scene>
        /// Owns the strings, settings and tape `raw` points to.
        let arena = EventArena()
        var name: [UInt8]?
        var role: [UInt8]?
        var configuration: [UInt8]??
        var settings: [UInt8]??
        var disconnected = false

        init(id: UInt64) {
            raw = .allocate(capacity: 1)
            raw.initialize(
                to: sh_scene(
                    size: UInt32(MemoryLayout<sh_scene>.size), version: SH_SCENE_VERSION, id: id, name: nil, role: nil,
                    state: 0, reserved: 0, configuration: nil, settings_json: nil, settings_len: 0, settings: nil))
        }

        deinit { raw.deallocate() }

        /// `bytes` as a NUL-terminated string in the slot's arena.
        func store(_ bytes: [UInt8]) -> UnsafePointer<CChar> {
            UnsafeRawPointer(arena.bytes(bytes + [0])).assumingMemoryBound(to: CChar.self)
        }
    }

    private var slots: [UInt64: Slot] = [:]

    /// How many scenes the worker holds (connected, or disconnected and not yet retired).
    var count: Int { slots.count }

    /// The scene `id`, made on its first event. Frees the scenes that disconnected, except
    /// this one while its sceneDidDisconnect is still being delivered.
    func slot(_ id: UInt64, for kind: EventKind) -> Slot {
        retire(except: kind == .sceneDidDisconnect ? id : nil)
        if let slot = slots[id] {
            if kind != .sceneDidDisconnect { slot.disconnected = false }
            return slot
        }
        let slot = Slot(id: id)
        slots[id] = slot
        return slot
    }

    /// Marks the scene disconnected once its sceneDidDisconnect is decoded.
    func noteDisconnect(_ id: UInt64) { slots[id]?.disconnected = true }

    /// Frees every disconnected scene but `keep`.
    func retire(except keep: UInt64? = nil) {
        guard slots.values.contains(where: { $0.disconnected }) else { return }
        slots = slots.filter { !$0.value.disconnected || $0.key == keep }
    }
}
