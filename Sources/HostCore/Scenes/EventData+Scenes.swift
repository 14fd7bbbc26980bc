import ServiceABI

/// The C structs of scene events, built in an arena that outlives their deliveries.
extension EventArena {
    /// A scene's connection options, and each of its URL contexts and activities (the
    /// same structs are delivered once more after the scene became active).
    /// `restoration`: the state restoration activity saved for the scene's name, if any.
    func sceneConnectionOptions(_ request: SceneRequest, restoration: UserActivityInput? = nil) -> SceneConnectionData {
        let flags = UInt32(SH_FROM_CONNECTION) | (request.isFromLaunch ? UInt32(SH_FROM_LAUNCH) : 0)
        let urls = request.urls.map { openURL($0, flags: flags) }
        let activities = request.activities.map { activity($0, flags: flags) }
        let options = box(
            sh_scene_connection_options(
                size: UInt32(MemoryLayout<sh_scene_connection_options>.size),
                version: SH_SCENE_CONNECTION_OPTIONS_VERSION,
                flags: request.isFromLaunch ? UInt32(SH_FROM_LAUNCH) : 0, reserved: 0,
                url_contexts: array(urls.map(Optional.some)), url_context_count: urls.count,
                user_activities: array(activities.map(Optional.some)), user_activity_count: activities.count,
                restoration_activity: restoration.map { activity($0, flags: UInt32(SH_FROM_CONNECTION)) }))
        return SceneConnectionData(options: options, urls: urls, activities: activities)
    }

    /// The data of configurationForConnecting (with `configuration`) and sceneWillConnect.
    func sceneConnection(
        _ scene: UnsafePointer<sh_scene>, _ options: UnsafePointer<sh_scene_connection_options>,
        configuration: UnsafeMutablePointer<sh_scene_configuration>?
    ) -> UnsafePointer<sh_scene_connection> {
        box(
            sh_scene_connection(
                size: UInt32(MemoryLayout<sh_scene_connection>.size), version: SH_SCENE_CONNECTION_VERSION,
                scene: scene, options: options, configuration: configuration))
    }

    func sceneOpenURL(_ scene: SceneRecord, _ url: UnsafePointer<sh_open_url>) -> UnsafePointer<sh_scene_open_url> {
        box(
            sh_scene_open_url(
                size: UInt32(MemoryLayout<sh_scene_open_url>.size), version: SH_SCENE_OPEN_URL_VERSION,
                scene: UnsafePointer(scene.raw), url: url))
    }

    func sceneActivity(_ scene: SceneRecord, _ activity: UnsafePointer<sh_user_activity>)
        -> UnsafePointer<sh_scene_user_activity>
    {
        box(
            sh_scene_user_activity(
                size: UInt32(MemoryLayout<sh_scene_user_activity>.size), version: SH_SCENE_USER_ACTIVITY_VERSION,
                scene: UnsafePointer(scene.raw), activity: activity))
    }
}

/// A scene's connection options in C, with pointers to each URL context and activity.
struct SceneConnectionData {
    let options: UnsafePointer<sh_scene_connection_options>
    let urls: [UnsafePointer<sh_open_url>]
    let activities: [UnsafePointer<sh_user_activity>]
}
