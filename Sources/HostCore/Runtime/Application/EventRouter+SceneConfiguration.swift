import ServiceABI
import ServiceJSON

/// configurationForConnecting: the first service (in service order) whose answer is valid
/// chooses the configuration a scene connects with.
extension EventRouter {
    /// The bytes a service may write as a configuration's settings (`settings_capacity`).
    static let sceneSettingsCapacity = 16384

    /// Asks the services that handle configurationForConnecting and serve the scene's role,
    /// in order, until one answers `SH_OK` with a valid configuration; an invalid answer is
    /// logged with the service's id and the next service is asked. Without an answer the
    /// scene gets the default: configuration "default", the role asked for (else "main").
    func chooseConfiguration(
        for scene: SceneRecord, requestedRole: String?,
        options: UnsafePointer<sh_scene_connection_options>,
        arena: EventArena
    ) -> SceneConfigurationChoice {
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: Self.sceneSettingsCapacity)
        let answer = UnsafeMutablePointer<sh_scene_configuration>.allocate(capacity: 1)
        defer {
            buffer.deallocate()
            answer.deallocate()
        }
        let data = UnsafeRawPointer(arena.sceneConnection(scene.raw, options, configuration: answer))
        dormant.wake(.configurationForConnecting, "scene \(scene.name)") { Self.serves($0, role: scene.role) }
        for index in dispatcher.handlers(.configurationForConnecting) where serves(index, role: scene.role) {
            var empty = sh_scene_configuration()
            empty.size = UInt32(MemoryLayout<sh_scene_configuration>.size)
            empty.version = SH_SCENE_CONFIGURATION_VERSION
            empty.settings = buffer
            empty.settings_capacity = Self.sceneSettingsCapacity
            answer.initialize(to: empty)
            guard dispatcher.call(index, .configurationForConnecting, data, scene: scene.name).result == SH_OK else {
                continue
            }
            do throws(InputError) {
                var choice = try Self.read(answer.pointee, settings: buffer, requestedRole: requestedRole)
                choice.service = dispatcher.services[index].id
                return choice
            } catch {
                let message =
                    "configurationForConnecting: the configuration for scene \(scene.name) is refused: \(error)"
                dispatcher.services[index].lastError = message
                log.error(
                    dispatcher.services[index].id, message, event: .sceneConfigurationRefused,
                    .string("scene", scene.name))
            }
        }
        return SceneConfigurationChoice(name: "default", role: requestedRole ?? "main", settings: nil, service: nil)
    }

    /// A service's answer, checked: a NUL-terminated name and role, a known role that is
    /// the one asked for (if any), settings that are a JSON object within the buffer.
    static func read(
        _ answer: sh_scene_configuration, settings buffer: UnsafePointer<CChar>,
        requestedRole: String?
    ) throws(InputError) -> SceneConfigurationChoice {
        guard let name = fixedText(answer.name) else {
            throw InputError("its name is not NUL-terminated UTF-8 within \(SH_SCENE_CONFIGURATION_NAME_MAX) bytes")
        }
        guard let role = fixedText(answer.role) else {
            throw InputError("its role is not NUL-terminated UTF-8 within \(SH_SCENE_ROLE_MAX) bytes")
        }
        var chosenRole = requestedRole ?? "main"
        if !role.isEmpty {
            try SceneRequest.check(role: role)
            if let requestedRole, role != requestedRole {
                throw InputError("it chose role \(role) for a scene connected as \(requestedRole)")
            }
            chosenRole = role
        }
        var settings: (value: JSONValue, text: [UInt8])?
        if answer.settings_len > 0 {
            guard answer.settings_len <= sceneSettingsCapacity else {
                throw InputError(
                    "settings_len is \(answer.settings_len), over the \(sceneSettingsCapacity) bytes of the buffer")
            }
            let text = Array(UnsafeRawBufferPointer(start: buffer, count: answer.settings_len))
            guard let value = try? JSONValue(parsing: text), case .object = value else {
                throw InputError("its settings are not a JSON object")
            }
            settings = (value, text)
        }
        return SceneConfigurationChoice(
            name: name.isEmpty ? "default" : name, role: chosenRole,
            settings: settings, service: nil)
    }

    /// The text of a fixed-size C char array, up to its NUL; nil without one, or for bad UTF-8.
    private static func fixedText<T>(_ field: T) -> String? {
        withUnsafeBytes(of: field) { bytes in
            guard let end = bytes.firstIndex(of: 0) else { return nil }
            return String(validating: bytes[..<end], as: UTF8.self)
        }
    }
}
