import ServiceABI
import ServiceJSON

/// Scene state restoration (UIKit's `stateRestorationActivity(for:)` and
/// `UISceneSession.stateRestorationActivity`): the user activity a scene service saved for a
/// scene, kept per scene name in the state directory (`scenes/NAME.json`) and handed to the
/// next connection of a scene of that name, once, in its connection options.
@MainActor
final class SceneRestorations {
    /// The largest activity kept, in bytes (`SH_RESTORATION_ACTIVITY_MAX`).
    static let limit = Int(SH_RESTORATION_ACTIVITY_MAX)
    static let folder = "scenes"

    /// The file scene `name`'s activity is saved in.
    private static func path(of name: String, in stateDirectory: StateDirectory) -> String {
        stateDirectory.path + "/\(folder)/\(file(name))"
    }

    private let stateDirectory: StateDirectory?
    private let log: Log

    init(stateDirectory: StateDirectory?, log: Log) {
        self.stateDirectory = stateDirectory
        self.log = log
    }

    /// Reads an activity as a service hands it over: a JSON object with `type` (a non-empty
    /// string), and optionally `url` (a URL) and `userInfo` (an object), within ``limit``.
    static func activity(_ bytes: [UInt8]) throws(InputError) -> UserActivityInput {
        guard bytes.count <= limit else {
            throw InputError("the restoration activity is \(bytes.count) bytes, over the limit of \(limit) bytes")
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: bytes) } catch {
            throw InputError("the restoration activity is not valid JSON: \(error)")
        }
        guard let object = value.objectValue else { throw InputError("the restoration activity must be a JSON object") }
        if let unknown = object.keys.sorted().first(where: { !["type", "url", "userInfo"].contains($0) }) {
            throw InputError("the restoration activity has an unknown member \"\(unknown)\" (type, url, userInfo)")
        }
        guard let type = object["type"]?.stringValue else {
            throw InputError("the restoration activity needs a \"type\" string")
        }
        if let url = object["url"], url.stringValue == nil {
            throw InputError("the restoration activity's \"url\" must be a string")
        }
        return try UserActivityInput(type: type, webpageURL: object["url"]?.stringValue, userInfo: object["userInfo"])
    }

    /// Saves (or, for nil, forgets) the activity `service` set for scene `name`; answers as
    /// `sh_host.set_scene_restoration` does and logs why a request was refused. A refused
    /// request leaves what was saved before.
    func save(_ bytes: [UInt8]?, scene name: String, service: String) -> Int32 {
        guard let stateDirectory else { return Int32(SH_UNSUPPORTED) }
        if let bytes {
            do { _ = try Self.activity(bytes) } catch {
                log.warn(
                    service,
                    "scene \(name): restoration activity refused: \(error.message); what was saved before stays",
                    event: .sceneRestorationRefused, .string("scene", name), .string("reason", error.message))
                return Int32(SH_INVALID)
            }
        }
        do {
            let folder = try stateDirectory.subdirectory(Self.folder)
            try StorageError.wrapping { () throws(SystemError) in
                if let bytes {
                    try bytes.withUnsafeBytes { buffer in
                        Result { () throws(SystemError) in try folder.replace(Self.file(name), with: buffer) }
                    }.get()
                } else {
                    _ = try folder.remove(Self.file(name))
                }
            }
            return Int32(SH_OK)
        } catch {
            log.error(
                service, "scene \(name): cannot save the restoration activity: \(error)",
                event: .sceneRestorationFailed, .string("scene", name),
                .string("path", Self.path(of: name, in: stateDirectory)), .int("errno", Int(error.errno ?? 0)))
            return Int32(SH_ERROR)
        }
    }

    /// The activity saved for scene `name`, forgotten as it is handed out (delivered once).
    /// A saved file that cannot be read is logged and removed: the scene connects without it.
    func take(_ name: String) -> UserActivityInput? {
        guard let stateDirectory else { return nil }
        let path = Self.path(of: name, in: stateDirectory)
        do {
            let folder = try stateDirectory.subdirectory(Self.folder)
            // Limit + 1 KiB: a file over the limit is reported as such, not as unreadable.
            guard let bytes = try folder.read(Self.file(name), limit: Self.limit + 1024) else { return nil }
            defer { _ = try? folder.remove(Self.file(name)) }
            do { return try Self.activity(bytes) } catch {
                throw StorageError(path: path, code: .corrupt(detail: error.message))
            }
        } catch {
            log.error(
                "host",
                "scene \(name): the saved restoration activity cannot be used (\(error)); the scene connects without it",
                event: .sceneRestorationUnreadable, .string("scene", name), .string("path", path),
                .string("reason", (error as? StorageError)?.reason(about: path) ?? "\(error)"))
            return nil
        }
    }

    /// The names of the scenes with a saved activity, in name order.
    func savedNames() -> [String] {
        guard let stateDirectory, let folder = try? stateDirectory.subdirectory(Self.folder),
            let names = try? folder.names()
        else { return [] }
        return names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(DirectoryHandle.temporaryPrefix) }
            .map { String($0.dropLast(5)) }.sorted()
    }

    private static func file(_ name: String) -> String { name + ".json" }
}
