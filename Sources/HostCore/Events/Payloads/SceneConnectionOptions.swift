import ServiceABI

/// `sh_scene_connection_options`: a scene connection's URLs and activities (sceneWillConnect,
/// configurationForConnecting).
extension sh_scene_connection_options: EventPayload {
    static var currentVersion: UInt32 { SH_SCENE_CONNECTION_OPTIONS_VERSION }

    static func fields<Coder: PayloadCoder>(_ o: inout Self, _ c: inout Coder) throws(WireError) {
        try c.u32(&o.flags, "options flags")
        try c.u32(&o.reserved, "options reserved")
        try c.payloads(&o.url_contexts, &o.url_context_count, "url context")
        try c.payloads(&o.user_activities, &o.user_activity_count, "user activity")
        try c.optionalPayload(&o.restoration_activity, "restoration activity")
    }
}

// Built by EventArena.sceneConnectionOptions (Scenes/EventData+Scenes.swift); its scene
// events' other structs (sh_scene, sh_scene_connection, sh_scene_open_url,
// sh_scene_user_activity) cross in EventCodec+Scenes: the worker keeps one sh_scene per
// connection across events, and configurationForConnecting's out-struct comes back.
