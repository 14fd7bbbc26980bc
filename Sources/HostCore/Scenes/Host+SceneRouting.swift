import ServiceABI

/// URLs and user activities in a scene: the scene's handlers first (the first claim wins,
/// URL and activity claims apply as for openURL), then, when none claims, the app-level
/// openURL or continueUserActivity handlers, so services written before scenes keep working.
extension Host {
    /// `scene open NAME URL`: sceneOpenURLContexts in the scene named `name`, falling back
    /// to openURL.
    public func open(_ url: OpenURLInput, inScene name: String) throws(SceneError) -> EventOutcome {
        try checkScenesRunning()
        let scene = try scene(named: name)
        let arena = EventArena()
        return withExtendedLifetime(arena) { route(url, data: arena.openURL(url, flags: 0), in: scene, arena: arena) }
    }

    /// `scene activity NAME TYPE`: sceneContinueUserActivity in the scene named `name`,
    /// falling back to continueUserActivity.
    public func continueActivity(_ activity: UserActivityInput, inScene name: String) throws(SceneError) -> EventOutcome {
        try checkScenesRunning()
        let scene = try scene(named: name)
        let arena = EventArena()
        return withExtendedLifetime(arena) {
            route(activity, data: arena.activity(activity, flags: 0), in: scene, arena: arena)
        }
    }

    /// One URL in `scene`; `data` is also what the app-level fallback receives (same flags).
    func route(_ url: OpenURLInput, data: UnsafePointer<sh_open_url>, in scene: SceneRecord,
               arena: EventArena) -> EventOutcome {
        let candidates = claimants(.sceneOpenURLContexts, include: { self.serves($0, role: scene.role) }) { service in
            service.metadata.urls.map(url.match).max()
        }
        let claim = firstClaim(.sceneOpenURLContexts, candidates, data: UnsafeRawPointer(arena.sceneOpenURL(scene, data)),
                               what: "URL \(url.url)", scene: scene.name, quiet: true)
        if claim.handled { return claim }
        log.debug("host", "no scene handler of scene \(scene.name) claimed the URL \(url.url); offering it to openURL")
        var fallback = open(url, data: data)
        fallback.receivers = claim.receivers + fallback.receivers
        return fallback
    }

    /// One user activity in `scene`, routed like a URL by activity type.
    func route(_ activity: UserActivityInput, data: UnsafePointer<sh_user_activity>, in scene: SceneRecord,
               arena: EventArena) -> EventOutcome {
        let candidates = claimants(.sceneContinueUserActivity, include: { self.serves($0, role: scene.role) }) { service in
            activity.match(service.metadata.activities)
        }
        let claim = firstClaim(.sceneContinueUserActivity, candidates,
                               data: UnsafeRawPointer(arena.sceneActivity(scene, data)),
                               what: "activity \(activity.type)", scene: scene.name, quiet: true)
        if claim.handled { return claim }
        log.debug("host", "no scene handler of scene \(scene.name) claimed the activity \(activity.type);"
            + " offering it to continueUserActivity")
        var fallback = continueActivity(activity, data: data)
        fallback.receivers = claim.receivers + fallback.receivers
        return fallback
    }
}
