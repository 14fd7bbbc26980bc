import ServiceABI
import ServiceJSON

/// One connected scene as the host keeps it, with its `sh_scene` at one stable address
/// from configurationForConnecting until sceneDidDisconnect returns.
///
/// Every event of the scene points at that one struct; a lifecycle step only stores the
/// new state in it, so scene lifecycle events allocate nothing. Main thread only.
final class SceneRecord {
    /// The connection's number (`sh_scene.id`).
    let id: UInt64
    let name: String
    /// The role, or "" while configurationForConnecting decides it.
    private(set) var role: String
    private(set) var state: SceneState = .unattached
    /// The chosen configuration's name; nil until it is chosen.
    private(set) var configuration: String?
    /// The service whose configuration was chosen; nil for the default.
    private(set) var configuredBy: String?
    private(set) var settings: JSONValue?

    /// The scene's C struct, read by services during its events.
    let raw: UnsafeMutablePointer<sh_scene>
    // Owns the strings and the settings tape `raw` points to.
    private let arena = EventArena()

    init(id: UInt64, name: String, role: String) {
        self.id = id
        self.name = name
        self.role = role
        raw = .allocate(capacity: 1)
        raw.initialize(
            to: sh_scene(
                size: UInt32(MemoryLayout<sh_scene>.size), version: SH_SCENE_VERSION, id: id,
                name: arena.string(name), role: arena.string(role), state: SceneState.unattached.rawValue, reserved: 0,
                configuration: nil, settings_json: nil, settings_len: 0, settings: nil))
    }

    deinit { raw.deallocate() }

    /// Records the chosen configuration (role, name, settings) in the C struct.
    func configure(_ choice: SceneConfigurationChoice) {
        role = choice.role
        configuration = choice.name
        configuredBy = choice.service
        settings = choice.settings?.value
        raw.pointee.role = arena.string(choice.role)
        raw.pointee.configuration = arena.string(choice.name)
        if let settings = choice.settings {
            let tape = JSONTape(value: settings.value, text: settings.text)
            raw.pointee.settings_json = UnsafePointer(tape.text.baseAddress)
            raw.pointee.settings_len = tape.textLength
            raw.pointee.settings = arena.keep(tape)
        }
    }

    /// Stores a new state: no allocation.
    func setState(_ next: SceneState) {
        state = next
        raw.pointee.state = next.rawValue
    }

    /// What `scene list` shows.
    var info: SceneInfo {
        SceneInfo(
            name: name, role: role, state: state, configuration: configuration ?? "default",
            configuredBy: configuredBy, settings: settings)
    }
}

/// The configuration a scene connects with: the first service's valid answer to
/// configurationForConnecting, or the default.
struct SceneConfigurationChoice {
    var name: String
    var role: String
    var settings: (value: JSONValue, text: [UInt8])?
    var service: String?
}

/// A connected scene as `scene list` and replies show it.
public struct SceneInfo: Sendable, Equatable {
    /// The scene's name.
    public let name: String
    /// Its role: `main`, `car`, `external`.
    public let role: String
    /// Its state.
    public let state: SceneState
    /// The configuration it connected with; `default` when no service chose one.
    public let configuration: String
    /// The service that chose the configuration, or nil for the default.
    public let configuredBy: String?
    /// The configuration's settings, or nil.
    public let settings: JSONValue?
}
