import ServiceABI

@testable import ServiceKit

/// An `sh_completion` whose `complete` records each result in this box.
final class CompletionBox {
    private(set) var results: [Int32] = []

    /// An `sh_completion` of `size` bytes pointing at this box; the box must outlive it.
    func completion(size: UInt32) -> sh_completion {
        sh_completion(
            size: size, version: SH_COMPLETION_VERSION, host_data: Unmanaged.passUnretained(self).toOpaque(),
            complete: { completion, result, _, _ in
                guard let data = completion?.pointee.host_data else { return }
                Unmanaged<CompletionBox>.fromOpaque(data).takeUnretainedValue().results.append(result)
            })
    }
}

/// A service that records what the SDK called; every completion is called at once.
final class RecordingService: SceneConfiguring, SceneURLHandling, PushPresenting, BackgroundFetching,
    DeviceTokenErrorHandling
{
    var calls: [String] = []
    var launchOptions: [LaunchOptions] = []
    var registrationErrors: [String] = []
    var scenes: [Scene] = []
    var connectionOptions: [SceneConnectionOptions] = []
    var configuration: SceneConfiguration?

    func willFinishLaunching(_ options: LaunchOptions) -> Bool {
        calls.append("willFinishLaunching")
        launchOptions.append(options)
        return true
    }

    func willPresent(_ notification: PushNotification, completion: PresentationCompletion) {
        calls.append("willPresent")
        completion([])
    }

    func didReceiveRemoteNotification(_ notification: PushNotification, completion: FetchCompletion) {
        calls.append("didReceiveRemoteNotification")
        completion(.newData)
    }

    func didFailToRegisterForRemoteNotifications(error: String) {
        registrationErrors.append(error)
    }

    func configuration(forConnecting scene: Scene, options: SceneConnectionOptions) -> SceneConfiguration? {
        calls.append("configuration \(scene.name)")
        connectionOptions.append(options)
        return configuration
    }

    func scene(_ scene: Scene, willConnectWith options: SceneConnectionOptions) {
        calls.append("willConnect \(scene.name)")
        scenes.append(scene)
        connectionOptions.append(options)
    }

    func sceneDidBecomeActive(_ scene: Scene) {
        calls.append("didBecomeActive \(scene.name)")
        scenes.append(scene)
    }

    func scene(_ scene: Scene, open url: OpenURL) -> Bool {
        calls.append("open \(url)")
        return true
    }
}
