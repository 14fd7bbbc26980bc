import ServiceABI

/// URLs and user activities in a scene: the scene's handlers first (the first claim wins,
/// URL and activity claims apply as for openURL), then, when none claims, the app-level
/// openURL or continueUserActivity handlers, so services written before scenes keep working.
extension EventRouter {
    /// One URL in `scene`; `data` is also what the app-level fallback receives (same flags).
    func route(
        _ url: OpenURLInput, data: UnsafePointer<sh_open_url>, in scene: SceneRecord,
        arena: EventArena
    ) -> EventOutcome {
        let candidates = claimants(
            .sceneOpenURLContexts, for: "URL \(url.url)", include: { Self.serves($0, role: scene.role) },
            score: { service in service.urls.map(url.match).max() })
        let claim = firstClaim(
            .sceneOpenURLContexts, candidates, data: UnsafeRawPointer(arena.sceneOpenURL(scene, data)),
            what: "URL \(url.url)", scene: scene.name, quiet: true)
        if claim.handled { return claim }
        log.debug("host", "no scene handler of scene \(scene.name) claimed the URL \(url.url); offering it to openURL")
        var fallback = open(url, data: data)
        fallback.receivers = claim.receivers + fallback.receivers
        return fallback
    }

    /// One user activity in `scene`, routed like a URL by activity type.
    func route(
        _ activity: UserActivityInput, data: UnsafePointer<sh_user_activity>, in scene: SceneRecord,
        arena: EventArena
    ) -> EventOutcome {
        let candidates = claimants(
            .sceneContinueUserActivity, for: "activity \(activity.type)",
            include: { Self.serves($0, role: scene.role) },
            score: { service in activity.match(service.activities) })
        let claim = firstClaim(
            .sceneContinueUserActivity, candidates,
            data: UnsafeRawPointer(arena.sceneActivity(scene, data)),
            what: "activity \(activity.type)", scene: scene.name, quiet: true)
        if claim.handled { return claim }
        log.debug(
            "host",
            "no scene handler of scene \(scene.name) claimed the activity \(activity.type);"
                + " offering it to continueUserActivity")
        var fallback = continueActivity(activity, data: data)
        fallback.receivers = claim.receivers + fallback.receivers
        return fallback
    }
}

extension EventRouter {
    /// Whether service `index` receives events of scenes of `role`: it claims no role, or
    /// this one ("" while configurationForConnecting decides the role: every service).
    func serves(_ index: Int, role: String) -> Bool { Self.serves(dispatcher.services[index].metadata, role: role) }

    /// Whether a service with `metadata` receives events of scenes of `role`.
    static func serves(_ metadata: ServiceMetadata, role: String) -> Bool {
        metadata.sceneRoles.isEmpty || role.isEmpty || metadata.sceneRoles.contains(role)
    }
}
