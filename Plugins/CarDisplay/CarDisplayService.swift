import ServiceKit

/// The app's CarPlay screen (seed 003): a service that serves only scenes of role `car`.
///
/// - Chooses the configuration `car` (settings `{"template":"map"}`) for a scene
///   connected with role `car`; any other scene it leaves to other services.
/// - Logs its scene's lifecycle, one line per event:
///   `cardisplay: car sceneDidBecomeActive`, and at connection
///   `cardisplay: car connects with configuration car, template map (1 URL, 0 activities)`
///   (the template from the configuration's settings, as every service sees them).
/// - Handles `myapp://drive/<destination>` opened in a car scene:
///   `cardisplay: car drives to <destination>`, with ` (connection)` when the URL came
///   with the scene's connection options (a cold-start deep link) and ` (launch)` when it
///   launched the app. Other URLs it passes, and the host offers them to the app-level
///   openURL handlers (DeepLinks).
///
/// Its manifest claims the role `car` (`sceneRoles`) and the URLs `myapp://drive`, so the
/// host never asks it about other scenes or other URLs.
final class CarDisplayService: SceneConfiguring, SceneURLHandling {
    func configuration(forConnecting scene: Scene, options: SceneConnectionOptions) -> SceneConfiguration? {
        guard scene.role == .car else { return nil }
        return SceneConfiguration(name: "car", settings: ["template": "map"])
    }

    func scene(_ scene: Scene, willConnectWith options: SceneConnectionOptions) {
        let urls = options.urlContexts.count
        let activities = options.userActivities.count
        let template = scene.settings?["template"]?.stringValue ?? "none"
        host.log(
            .info,
            "cardisplay: \(scene.name) connects with configuration \(scene.configurationName), "
                + "template \(template) (\(urls) URL\(urls == 1 ? "" : "s"), \(activities) activit\(activities == 1 ? "y" : "ies"))"
        )
    }

    func sceneWillEnterForeground(_ scene: Scene) { log(scene, "sceneWillEnterForeground") }
    func sceneDidBecomeActive(_ scene: Scene) { log(scene, "sceneDidBecomeActive") }
    func sceneWillResignActive(_ scene: Scene) { log(scene, "sceneWillResignActive") }
    func sceneDidEnterBackground(_ scene: Scene) { log(scene, "sceneDidEnterBackground") }
    func sceneDidDisconnect(_ scene: Scene) { log(scene, "sceneDidDisconnect") }

    func scene(_ scene: Scene, open url: OpenURL) -> Bool {
        guard url.scheme == "myapp", url.host == "drive" else { return false }
        let destination = url.pathComponents.isEmpty ? "home" : url.pathComponents.joined(separator: "/")
        let origin = (url.isFromConnection ? " (connection)" : "") + (url.isFromLaunch ? " (launch)" : "")
        host.log(.info, "cardisplay: \(scene.name) drives to \(destination)\(origin)")
        return true
    }

    private func log(_ scene: Scene, _ event: String) {
        host.log(.info, "cardisplay: \(scene.name) \(event)")
    }
}
