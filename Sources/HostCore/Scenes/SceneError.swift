/// A scene request the host cannot carry out; `message` says why and what to do instead.
public struct SceneError: Error, CustomStringConvertible, Equatable {
    /// What kind of refusal it is.
    public enum Code: Sendable, Equatable {
        /// No connected scene has the name.
        case unknownScene
        /// A connected scene already has the name.
        case duplicateName
        /// The scene's state has no such move (resigning a scene in the background).
        case illegalTransition
        /// The app is not running (before launch, or terminated).
        case notRunning
    }

    /// What kind of refusal it is.
    public let code: Code
    /// The sentence for the user.
    public let message: String

    public var description: String { message }

    static func unknownScene(_ name: String, connected: [String]) -> SceneError {
        let known = connected.isEmpty ? "no scene is connected" : "connected: \(connected.joined(separator: ", "))"
        return SceneError(code: .unknownScene, message: "unknown scene \"\(name)\" (\(known))")
    }

    static func duplicateName(_ name: String) -> SceneError {
        SceneError(
            code: .duplicateName,
            message:
                "a scene named \"\(name)\" is already connected (disconnect it first, or choose another name)")
    }

    static func illegalTransition(_ move: SceneMove, scene: String, state: SceneState) -> SceneError {
        let rule =
            switch move {
            case .resign: "only a foregroundActive scene resigns"
            case .foreground: "only a scene in the background comes to the foreground"
            default: "it cannot \(move.rawValue) from there"
            }
        return SceneError(
            code: .illegalTransition,
            message:
                "cannot \(move.rawValue) scene \"\(scene)\": it is \(state.name), and \(rule)")
    }

    static func notRunning(_ reason: String) -> SceneError {
        SceneError(code: .notRunning, message: "cannot change scenes: \(reason)")
    }
}
