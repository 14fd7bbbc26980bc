/// The app's connected scenes, in connection order, and whether the app uses scenes.
///
/// The app uses scenes from the moment its first scene connects, and from then on its
/// state follows its scenes (even with none connected: then it is in the background).
/// An app in which no scene ever connected keeps UIKit's app-only lifecycle.
@MainActor
public final class SceneTable {
    /// The scenes, in connection order.
    private(set) var records: [SceneRecord] = []
    /// Whether a scene ever connected: the app's state then follows its scenes.
    public private(set) var areInUse = false
    private var lastID: UInt64 = 0

    /// Every connected scene, in connection order.
    public var list: [SceneInfo] { records.map(\.info) }

    /// The connected scene named `name`.
    public subscript(name: String) -> SceneInfo? { record(named: name)?.info }

    /// The app state the scenes imply (see ``AppState/derived(from:)``).
    var derivedAppState: AppState { AppState.derived(from: records.lazy.map(\.state)) }

    func record(named name: String) -> SceneRecord? { records.first { $0.name == name } }

    /// A new scene, last in connection order; the app uses scenes from now on.
    func add(name: String, role: String) -> SceneRecord {
        areInUse = true
        lastID += 1
        let record = SceneRecord(id: lastID, name: name, role: role)
        records.append(record)
        return record
    }

    func remove(_ record: SceneRecord) { records.removeAll { $0 === record } }
}
