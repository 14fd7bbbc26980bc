/*
 * servicehost/scenes.h — scenes: several UI sessions of one app, each with its
 * own lifecycle (UIKit's UISceneDelegate beside the UIApplicationDelegate).
 *
 * A scene has a name (unique among connected scenes), a role (a phone window
 * "main", a CarPlay screen "car", an "external" display) and a state:
 *
 *     unattached → foregroundInactive ⇄ foregroundActive
 *                  foregroundInactive ⇄ background
 *     any state  → unattached (disconnect)
 *
 * Once a scene has connected, the app's state follows its scenes: active
 * when any scene is foreground-active, inactive when some scene is in the
 * foreground but none is active, background when every scene is in the
 * background (or none is connected). The app events (didBecomeActive,
 * willResignActive, didEnterBackground, willEnterForeground) are delivered
 * right after the scene event that changes the app's state, as UIKit posts
 * them. An app in which no scene ever connected runs exactly as without
 * this header.
 *
 * Connecting a scene delivers, in order: configurationForConnecting (until
 * one service chooses), sceneWillConnect, sceneWillEnterForeground,
 * sceneDidBecomeActive (then the app's didBecomeActive if the app was not
 * active), then each URL context and user activity of the connection options
 * once, through sceneOpenURLContexts or sceneContinueUserActivity, flagged
 * SH_FROM_CONNECTION: a service never has to replay connection options
 * itself, so a cold-start deep link cannot be lost. A URL or activity that no
 * scene handler claims is offered to the app-level openURL or
 * continueUserActivity handlers (first claim wins), so services written
 * before scenes keep working.
 *
 * Service order: as the app events (priority order; sceneWillResignActive,
 * sceneDidEnterBackground and sceneDidDisconnect in reverse).
 */
#ifndef SERVICEHOST_SCENES_H
#define SERVICEHOST_SCENES_H

#include "events.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A scene's state, as UIScene.ActivationState. */
typedef enum sh_scene_state {
    /* Connecting (configurationForConnecting, sceneWillConnect), or
     * disconnected (sceneDidDisconnect). */
    SH_SCENE_UNATTACHED = 0,
    /* On screen, not receiving events. */
    SH_SCENE_FOREGROUND_INACTIVE = 1,
    /* On screen and receiving events. */
    SH_SCENE_FOREGROUND_ACTIVE = 2,
    /* Off screen. */
    SH_SCENE_BACKGROUND = 3,
} sh_scene_state;

/* The roles this host knows (as UISceneSession.Role). A role is a string so
 * that new ones can appear without a new layout: treat one you do not know
 * as a scene that is not yours. */
#define SH_SCENE_ROLE_MAIN "main"          /* the app's own window */
#define SH_SCENE_ROLE_CAR "car"            /* a CarPlay screen */
#define SH_SCENE_ROLE_EXTERNAL "external"  /* an external display */

/* Field sizes of sh_scene_configuration, each including the NUL. */
#define SH_SCENE_CONFIGURATION_NAME_MAX 64
#define SH_SCENE_ROLE_MAX 32

/* Every scene event, as word 0 of a mask (the manifest group "scenes"). */
#define SH_EVENTS_SCENES                                                        \
    (SH_EVENT_BIT(SH_EVENT_CONFIGURATION_FOR_CONNECTING) |                      \
     SH_EVENT_BIT(SH_EVENT_SCENE_WILL_CONNECT) |                                \
     SH_EVENT_BIT(SH_EVENT_SCENE_WILL_ENTER_FOREGROUND) |                       \
     SH_EVENT_BIT(SH_EVENT_SCENE_DID_BECOME_ACTIVE) |                           \
     SH_EVENT_BIT(SH_EVENT_SCENE_WILL_RESIGN_ACTIVE) |                          \
     SH_EVENT_BIT(SH_EVENT_SCENE_DID_ENTER_BACKGROUND) |                        \
     SH_EVENT_BIT(SH_EVENT_SCENE_DID_DISCONNECT) |                              \
     SH_EVENT_BIT(SH_EVENT_SCENE_OPEN_URL_CONTEXTS) |                           \
     SH_EVENT_BIT(SH_EVENT_SCENE_CONTINUE_USER_ACTIVITY))

#define SH_SCENE_VERSION 1u
/* sizeof(sh_scene) in version 1, frozen (layout.h). */
#define SH_SCENE_SIZE_V1 72u

/* One connected scene: the data of the scene lifecycle events.
 * Owner: the host. Valid: from configurationForConnecting until
 * sceneDidDisconnect returns. Every event of one connection carries the same
 * pointer (compare it, or id, to tell scenes apart); its members change
 * between events, so copy what you keep: what a pointer member (name, role,
 * configuration, settings_json, settings) points to is valid during the event
 * that delivered it only.
 * Thread: read it on the thread that received the event, during the event. */
typedef struct sh_scene {
    /* sizeof(sh_scene) as the host compiled it. */
    uint32_t size;
    /* SH_SCENE_VERSION as the host compiled it. */
    uint32_t version;
    /* This connection's number, unique for the process lifetime: a scene
     * disconnected and connected again under its name gets a new one. */
    uint64_t id;
    /* The scene's name, NUL-terminated UTF-8: "main", "car". */
    const char *name;
    /* Its role (SH_SCENE_ROLE_*), NUL-terminated. During
     * configurationForConnecting: the role the connection asked for, or ""
     * when it left the role to the configuration. */
    const char *role;
    /* An sh_scene_state while the event is handled: will-events see the old
     * state (sceneWillResignActive: SH_SCENE_FOREGROUND_ACTIVE), did-events
     * the new one (sceneDidEnterBackground: SH_SCENE_BACKGROUND). */
    int32_t state;
    /* Reserved, zero. */
    uint32_t reserved;
    /* The configuration chosen in configurationForConnecting, NUL-terminated:
     * "car", or "default" when no service chose one. NULL during
     * configurationForConnecting. */
    const char *configuration;
    /* The configuration's settings as a JSON object (UTF-8, NUL-terminated;
     * settings_len excludes the NUL), or NULL when it has none. */
    const char *settings_json;
    size_t settings_len;
    /* The same settings parsed once by the host (json.h), or NULL. */
    const struct sh_json *settings;
} sh_scene;

/* 2: restoration_activity. */
#define SH_SCENE_CONNECTION_OPTIONS_VERSION 2u
/* sizeof(sh_scene_connection_options) in version 1, frozen (layout.h). */
#define SH_SCENE_CONNECTION_OPTIONS_SIZE_V1 48u
/* sizeof(sh_scene_connection_options) in version 2 (layout.h). */
#define SH_SCENE_CONNECTION_OPTIONS_SIZE_V2 56u

/* What a scene was connected with (UIScene.ConnectionOptions).
 * Owner: the host, with everything its members point to. Valid: until
 * handle_event returns; copy what you keep.
 * Thread: read it on the thread that received the event.
 * Rationale: the lists hold pointers, not structs, so the structs they point
 * to can grow without changing how a service walks the list. */
typedef struct sh_scene_connection_options {
    /* sizeof(sh_scene_connection_options) as the host compiled it. */
    uint32_t size;
    /* SH_SCENE_CONNECTION_OPTIONS_VERSION as the host compiled it. */
    uint32_t version;
    /* SH_FROM_LAUNCH when the scene connected at start-up with the launch URL
     * or activity (host --launch-scene), else 0. */
    uint32_t flags;
    /* Reserved, zero. */
    uint32_t reserved;
    /* url_context_count URL contexts (UIOpenURLContext), in the order given;
     * NULL when there are none. Each has SH_FROM_CONNECTION set (and
     * SH_FROM_LAUNCH for a launch scene) and is delivered once more after the
     * scene became active, through sceneOpenURLContexts: act on it there. */
    const sh_open_url *const *url_contexts;
    size_t url_context_count;
    /* user_activity_count user activities, in the order given; NULL when
     * there are none. Flagged and delivered once more like url_contexts,
     * through sceneContinueUserActivity, after the URL contexts. */
    const sh_user_activity *const *user_activities;
    size_t user_activity_count;
    /* Version 2 (read it only if size covers it). The state restoration
     * activity a service saved for a scene of this name
     * (sh_host.set_scene_restoration) when it last went to the background
     * or disconnected, as UISceneSession.stateRestorationActivity; NULL when
     * none was saved. Present in this one connection (the host then forgets
     * it), not delivered as an event: restore from it in sceneWillConnect. */
    const sh_user_activity *restoration_activity;
} sh_scene_connection_options;

#define SH_SCENE_CONFIGURATION_VERSION 1u
/* sizeof(sh_scene_configuration) in version 1, frozen (layout.h). */
#define SH_SCENE_CONFIGURATION_SIZE_V1 128u

/* A service's answer to configurationForConnecting (UISceneConfiguration):
 * fill it, then return SH_OK.
 * Owner: the host. Valid: until handle_event returns.
 * Thread: the thread that received the event (the host's main thread).
 * Before asking each service the host empties name, role and settings_len;
 * it reads them only after an SH_OK. An answer it cannot use (a name or role
 * without its NUL, an unknown role, a role other than the one the connection
 * asked for, settings that are not a JSON object) is refused with a log line
 * naming the service, and the next service is asked. */
typedef struct sh_scene_configuration {
    /* sizeof(sh_scene_configuration) as the host compiled it. */
    uint32_t size;
    /* SH_SCENE_CONFIGURATION_VERSION as the host compiled it. */
    uint32_t version;
    /* [out] The configuration's name, NUL-terminated UTF-8: "car". Empty
     * means "default". */
    char name[SH_SCENE_CONFIGURATION_NAME_MAX];
    /* [out] The scene's role, NUL-terminated: empty to keep the role the
     * connection asked for ("main" when it asked for none), or an
     * SH_SCENE_ROLE_* (only when the connection asked for none, or for the
     * same one). */
    char role[SH_SCENE_ROLE_MAX];
    /* [out] A host-owned buffer of settings_capacity bytes: write the
     * configuration's settings there as a JSON object (UTF-8, no NUL needed)
     * and their length to settings_len. Leave settings_len 0 for none. */
    char *settings;
    size_t settings_capacity;
    size_t settings_len;
} sh_scene_configuration;

#define SH_SCENE_CONNECTION_VERSION 1u
/* sizeof(sh_scene_connection) in version 1, frozen (layout.h). */
#define SH_SCENE_CONNECTION_SIZE_V1 32u

/* The data of configurationForConnecting and sceneWillConnect.
 * Owner: the host. Valid: until handle_event returns (scene: see sh_scene).
 * Thread: the thread that received the event. */
typedef struct sh_scene_connection {
    /* sizeof(sh_scene_connection) as the host compiled it. */
    uint32_t size;
    /* SH_SCENE_CONNECTION_VERSION as the host compiled it. */
    uint32_t version;
    /* The scene, SH_SCENE_UNATTACHED. */
    const sh_scene *scene;
    /* What it is connected with. Never NULL. */
    const sh_scene_connection_options *options;
    /* configurationForConnecting: where to write the answer. NULL in
     * sceneWillConnect, where scene->configuration holds the choice. */
    sh_scene_configuration *configuration;
} sh_scene_connection;

#define SH_SCENE_OPEN_URL_VERSION 1u
/* sizeof(sh_scene_open_url) in version 1, frozen (layout.h). */
#define SH_SCENE_OPEN_URL_SIZE_V1 24u

/* The data of sceneOpenURLContexts: one URL context for one scene.
 * Rationale: one URL per event (UIKit passes a set), so each URL is claimed,
 * or falls back to openURL, on its own.
 * Owner: the host. Valid: until handle_event returns (scene: see sh_scene);
 * copy what you keep. Thread: read it on the thread that received the event. */
typedef struct sh_scene_open_url {
    /* sizeof(sh_scene_open_url) as the host compiled it. */
    uint32_t size;
    /* SH_SCENE_OPEN_URL_VERSION as the host compiled it. */
    uint32_t version;
    /* The scene the URL is opened in. */
    const sh_scene *scene;
    /* The URL; flags say whether it came from the connection options
     * (SH_FROM_CONNECTION) of a launch scene (SH_FROM_LAUNCH). */
    const sh_open_url *url;
} sh_scene_open_url;

#define SH_SCENE_USER_ACTIVITY_VERSION 1u
/* sizeof(sh_scene_user_activity) in version 1, frozen (layout.h). */
#define SH_SCENE_USER_ACTIVITY_SIZE_V1 24u

/* The data of sceneContinueUserActivity.
 * Owner: the host. Valid: until handle_event returns (scene: see sh_scene);
 * copy what you keep. Thread: read it on the thread that received the event. */
typedef struct sh_scene_user_activity {
    /* sizeof(sh_scene_user_activity) as the host compiled it. */
    uint32_t size;
    /* SH_SCENE_USER_ACTIVITY_VERSION as the host compiled it. */
    uint32_t version;
    /* The scene the activity continues in. */
    const sh_scene *scene;
    /* The activity; flags as in sh_scene_open_url.url. */
    const sh_user_activity *activity;
} sh_scene_user_activity;

#ifdef __cplusplus
}
#endif

#endif /* SERVICEHOST_SCENES_H */
