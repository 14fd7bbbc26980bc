/*
 * servicehost/events.h — what the host tells a service, and how a service answers.
 *
 * Every event reaches a service through one function, sh_service.handle_event,
 * as a tagged sh_event. New kinds get new numbers and, where they carry data,
 * new payload structs; existing layouts never change.
 */
#ifndef SERVICEHOST_EVENTS_H
#define SERVICEHOST_EVENTS_H

#include "version.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Event kinds. The numbers are part of the ABI: never reuse or renumber one.
 * The names in comments are the names used in traces, logs and docs. */
typedef enum sh_event_kind {
    /* "willFinishLaunching": data is const sh_launch_options *. Answer with
     * SH_OK or SH_FALSE. */
    SH_EVENT_WILL_FINISH_LAUNCHING = 1,
    /* "didFinishLaunching": data is const sh_launch_options *. Answer with
     * SH_OK or SH_FALSE. */
    SH_EVENT_DID_FINISH_LAUNCHING = 2,
    /* "didBecomeActive": data is NULL. */
    SH_EVENT_DID_BECOME_ACTIVE = 3,
    /* "willResignActive": data is NULL. */
    SH_EVENT_WILL_RESIGN_ACTIVE = 4,
    /* "didEnterBackground": data is NULL. */
    SH_EVENT_DID_ENTER_BACKGROUND = 5,
    /* "willEnterForeground": data is NULL. */
    SH_EVENT_WILL_ENTER_FOREGROUND = 6,
    /* "willTerminate": data is NULL. The last event a service receives. */
    SH_EVENT_WILL_TERMINATE = 7,
    /* "notification": a service-to-service notification posted with
     * sh_host.post; data is const sh_notification *. Delivered only to
     * services subscribed to its name (metadata or sh_host.subscribe). */
    SH_EVENT_NOTIFICATION = 8,
    /* "didReceiveMemoryWarning": data is NULL. Free what you can. */
    SH_EVENT_DID_RECEIVE_MEMORY_WARNING = 9,
    /* "willPresentNotification": a push arrived while the app is active.
     * data is const sh_push *; completion is set: complete it with a
     * combination of SH_PRESENT_* flags as result (0: do not present). */
    SH_EVENT_WILL_PRESENT_NOTIFICATION = 10,
    /* "didReceiveNotificationResponse": the user acted on a notification
     * (tapped it, dismissed it, chose an action). data is const sh_push *
     * with action_id set; completion is set: complete it with SH_OK once
     * the response is handled. */
    SH_EVENT_DID_RECEIVE_NOTIFICATION_RESPONSE = 11,
    /* "didReceiveRemoteNotification": a push with content-available: 1 (a
     * background fetch). data is const sh_push *; completion is set:
     * complete it with an SH_FETCH_* result. */
    SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION = 12,
    /* "didRegisterForRemoteNotifications": data is const sh_device_token *. */
    SH_EVENT_DID_REGISTER_FOR_REMOTE_NOTIFICATIONS = 13,
    /* "didFailToRegisterForRemoteNotifications": data is const
     * sh_error_info *. */
    SH_EVENT_DID_FAIL_TO_REGISTER_FOR_REMOTE_NOTIFICATIONS = 14,
    /* "openURL": data is const sh_open_url *. Answer SH_OK to claim the URL
     * (no later service is asked) or SH_FALSE to pass. */
    SH_EVENT_OPEN_URL = 15,
    /* "continueUserActivity": data is const sh_user_activity *. Answer SH_OK
     * to claim it (no later service is asked) or SH_FALSE to pass. */
    SH_EVENT_CONTINUE_USER_ACTIVITY = 16,

    /* Scene events (17-25): the data structs are in scenes.h. Each is
     * delivered only to services whose scene role claims (SH_CLAIM_SCENE_ROLE)
     * include the scene's role, or that have none. */
    /* "configurationForConnecting": data is sh_scene_connection * (its
     * configuration member is set). Answer SH_OK after filling
     * configuration to choose it (no later service is asked), SH_FALSE to
     * pass. */
    SH_EVENT_CONFIGURATION_FOR_CONNECTING = 17,
    /* "sceneWillConnect": data is const sh_scene_connection *. */
    SH_EVENT_SCENE_WILL_CONNECT = 18,
    /* "sceneWillEnterForeground": data is const sh_scene *. */
    SH_EVENT_SCENE_WILL_ENTER_FOREGROUND = 19,
    /* "sceneDidBecomeActive": data is const sh_scene *. */
    SH_EVENT_SCENE_DID_BECOME_ACTIVE = 20,
    /* "sceneWillResignActive": data is const sh_scene *. */
    SH_EVENT_SCENE_WILL_RESIGN_ACTIVE = 21,
    /* "sceneDidEnterBackground": data is const sh_scene *. */
    SH_EVENT_SCENE_DID_ENTER_BACKGROUND = 22,
    /* "sceneDidDisconnect": data is const sh_scene *. The last event of one
     * scene connection. */
    SH_EVENT_SCENE_DID_DISCONNECT = 23,
    /* "sceneOpenURLContexts": data is const sh_scene_open_url *. Answer SH_OK
     * to claim the URL or SH_FALSE to pass; a URL no scene handler claims is
     * offered to openURL handlers. */
    SH_EVENT_SCENE_OPEN_URL_CONTEXTS = 24,
    /* "sceneContinueUserActivity": data is const sh_scene_user_activity *.
     * Answer like sceneOpenURLContexts; unclaimed, it is offered to
     * continueUserActivity handlers. */
    SH_EVENT_SCENE_CONTINUE_USER_ACTIVITY = 25,

    /* "didChangeNotificationAuthorization": the notification authorization
     * changed (the user toggled it: host ctl authorization, or a
     * request_authorization was answered). data is const
     * sh_notification_settings *. Delivered in service order, after the
     * change was stored. */
    SH_EVENT_DID_CHANGE_NOTIFICATION_AUTHORIZATION = 26,

    /* "request": another service (or host ctl request) asks this one, through
     * sh_host.request, for a name this service answers (SH_CLAIM_ANSWER).
     * data is const sh_request *; completion is set: complete it exactly once
     * within the host's deadline (--request-timeout, default 5 s) with SH_OK
     * and the reply's JSON, or SH_ERROR (json may say why). A late or
     * missing answer is logged and the asker gets an error reply; a second
     * answer is logged and ignored (the asker had its one reply).
     * Delivered on the main thread after the event during which it was
     * asked, never re-entrantly. */
    SH_EVENT_REQUEST = 27,

    /* "didChangeSettings": the service's settings in the configuration file
     * changed (an edit picked up by a reload) while it runs. data is const
     * sh_settings_change *: the settings before and after. A service that
     * handles it keeps running with the new settings (its later launch
     * options carry them); one that does not is restarted with them. A
     * negative result is logged; the settings are still the new ones.
     * Delivered after the reload's other changes, in service order. */
    SH_EVENT_DID_CHANGE_SETTINGS = 40,
    /* "performActionForShortcutItem": the user chose a quick action (UIKit's
     * application(_:performActionFor:completionHandler:); host action ID,
     * host ctl action ID, or --launch-shortcut ID at launch). data is const
     * sh_shortcut_item *. Delivered to the services that claim the id
     * (SH_CLAIM_SHORTCUT, metadata.h), in service order; an id no service
     * claims goes to the services that claim no quick action (as URLs).
     * Answer SH_OK when handled (no later service is asked) or SH_FALSE to
     * pass. */
    SH_EVENT_PERFORM_ACTION_FOR_SHORTCUT_ITEM = 44,
    /* "healthCheck": the host asks whether the service is healthy, every
     * healthCheck.interval seconds of its entry in the configuration file
     * (services.json; never without one). data is NULL; completion is set:
     * complete it within healthCheck.timeout with SH_HEALTH_HEALTHY,
     * SH_HEALTH_DEGRADED or SH_HEALTH_UNHEALTHY; json (may be NULL) is the
     * reason, a JSON string (e.g. "\"broker unreachable\""), at most 1024
     * bytes kept. A missed deadline, a negative result or any other code
     * counts as unhealthy. healthCheck.unhealthyAfter unhealthy answers in a
     * row make the host act (healthCheck.onUnhealthy: restart the service,
     * or report it). Never sent while a check of the service is pending. */
    SH_EVENT_HEALTH_CHECK = 45,
    /* "dependencyWillStop": a service this one requires (configuration
     * requires/bindsTo/partOf, or SH_CLAIM_REQUIRES) is about to stop: stopped
     * or restarted by request, replaced or removed by a reload; or it stopped
     * on its own (its worker crashed or was killed for a hang: then told after
     * the fact). data is const sh_dependency * (its id and version). Delivered
     * to the running dependents that handle it, in service order, before the
     * required service is taken down. */
    SH_EVENT_DEPENDENCY_WILL_STOP = 46,
    /* "dependencyDidStart": a service this one requires started again (started
     * or restarted by request, a reload's new version, a new worker after a
     * crash), caught up to the app's state. data is const sh_dependency *.
     * Delivered to the running dependents that handle it, in service order,
     * after the required service's catch-up; never to a dependent that started
     * in the same catch-up (it launched after its requirement anyway). */
    SH_EVENT_DEPENDENCY_DID_START = 47,
    /* "willReload": the service is about to be replaced while the host runs:
     * a reload loads a new version of its file or starts it again with a
     * changed configuration, or it is restarted by request (host ctl service
     * restart; an unhealthy restart), in the host's process or in a worker
     * (then its new worker). Never for a crash (nothing is left to ask) nor
     * at termination. data is NULL; completion is set: complete it BEFORE
     * handle_event returns, with SH_OK and the state to hand over in json
     * (any bytes, not only JSON; at most SH_RELOAD_STATE_MAX), or SH_FALSE
     * with none. The host hands the bytes to the replacing instance in its
     * launch options (restored_state, with this instance's id and version),
     * then takes this one down as before. A state over SH_RELOAD_STATE_MAX is
     * refused (logged with the service and its size): the replacement starts
     * without one. A completion after handle_event returned is too late (it
     * is logged and dropped). A service that does not ask for the event is
     * caught up as before, without a state (Erlang/OTP's code_change, CLAP's
     * state save/load). */
    SH_EVENT_WILL_RELOAD = 48,
    /* "protectedDataWillBecomeUnavailable": the user's session is about to
     * lock (UIKit's applicationProtectedDataWillBecomeUnavailable; on Linux
     * logind's Lock signal or LockedHint becoming true for the host's
     * session). data is NULL. Delivered in service order, before the app
     * resigns active (willResignActive). */
    SH_EVENT_PROTECTED_DATA_WILL_BECOME_UNAVAILABLE = 49,
    /* "protectedDataDidBecomeAvailable": the session was unlocked (logind's
     * Unlock or LockedHint false). data is NULL. Delivered in service order,
     * before the app becomes active again (didBecomeActive). */
    SH_EVENT_PROTECTED_DATA_DID_BECOME_AVAILABLE = 50,
    /* "significantTimeChange": the wall clock was set, the time zone changed,
     * or local midnight passed (UIKit's applicationSignificantTimeChange).
     * data is NULL. Delivered in service order; read the clock again. */
    SH_EVENT_SIGNIFICANT_TIME_CHANGE = 51,
} sh_event_kind;

/* A service's health, the answer to SH_EVENT_HEALTH_CHECK (as Greengrass's
 * and IoT Edge's module health). Beware: SH_HEALTH_HEALTHY equals SH_OK and
 * SH_HEALTH_DEGRADED equals SH_FALSE. */
enum {
    /* Working. */
    SH_HEALTH_HEALTHY = 0,
    /* Working in part (a fallback in use, a backlog growing): shown, never acted on. */
    SH_HEALTH_DEGRADED = 1,
    /* Alive but useless (its connection dead, its queue stuck). */
    SH_HEALTH_UNHEALTHY = 2,
};

/* The largest state a service hands over on willReload: 1 MiB. */
#define SH_RELOAD_STATE_MAX (1u << 20)

/* The notification authorization status (as UNAuthorizationStatus). */
typedef enum sh_authorization_status {
    /* Never asked: nothing is presented until the app asks
     * (sh_host.request_authorization) and the user answers. */
    SH_AUTHORIZATION_NOT_DETERMINED = 0,
    /* The user refused: no banner, sound or badge. */
    SH_AUTHORIZATION_DENIED = 1,
    /* The user allowed notifications. */
    SH_AUTHORIZATION_AUTHORIZED = 2,
    /* Allowed quietly (delivered to the list only, no banner or sound). */
    SH_AUTHORIZATION_PROVISIONAL = 3,
} sh_authorization_status;

/* What a service asks for in sh_host.request_authorization (as
 * UNAuthorizationOptions). */
enum {
    SH_AUTHORIZE_BADGE = 1u << 0,
    SH_AUTHORIZE_SOUND = 1u << 1,
    SH_AUTHORIZE_ALERT = 1u << 2,
    /* Ask for provisional authorization: granted at once, quietly. */
    SH_AUTHORIZE_PROVISIONAL = 1u << 6,
};

/* Presentation options, the answer to willPresentNotification (as
 * UNNotificationPresentationOptions). */
enum {
    SH_PRESENT_BADGE = 1u << 0,
    SH_PRESENT_SOUND = 1u << 1,
    SH_PRESENT_LIST = 1u << 2,
    SH_PRESENT_BANNER = 1u << 3,
};

/* Background fetch results, the answer to didReceiveRemoteNotification (as
 * UIBackgroundFetchResult). The host merges answers: new data wins over no
 * data, which wins over failed. */
enum {
    SH_FETCH_NEW_DATA = 0,
    SH_FETCH_NO_DATA = 1,
    SH_FETCH_FAILED = 2,
};

/* The largest kind number a mask can hold (sh_meta_service.events has two
 * 64-bit words). */
#define SH_EVENT_KIND_LIMIT 128u

/* The bit for one kind in word (kind / 64) of an event mask. */
#define SH_EVENT_BIT(kind) (UINT64_C(1) << ((unsigned)(kind) % 64u))

/* A two-word event mask for SH_SERVICE_METADATA (metadata.h): word0 holds
 * kinds 0-63, word1 kinds 64-127 (SH_EVENT_BIT of a kind goes in word
 * kind / 64). A mask given without SH_EVENT_WORDS is word 0 alone:
 *     SH_EVENT_WORDS(SH_EVENTS_LIFECYCLE, SH_EVENT_BIT(70))               */
#define SH_EVENT_WORDS(word0, word1) (word0), (word1)

/* Every lifecycle event, as word 0 of a mask (the manifest group "lifecycle"). */
#define SH_EVENTS_LIFECYCLE                                                     \
    (SH_EVENT_BIT(SH_EVENT_WILL_FINISH_LAUNCHING) |                             \
     SH_EVENT_BIT(SH_EVENT_DID_FINISH_LAUNCHING) |                              \
     SH_EVENT_BIT(SH_EVENT_DID_BECOME_ACTIVE) |                                 \
     SH_EVENT_BIT(SH_EVENT_WILL_RESIGN_ACTIVE) |                                \
     SH_EVENT_BIT(SH_EVENT_DID_ENTER_BACKGROUND) |                              \
     SH_EVENT_BIT(SH_EVENT_WILL_ENTER_FOREGROUND) |                             \
     SH_EVENT_BIT(SH_EVENT_WILL_TERMINATE))

/* Every push event, as word 0 of a mask (the manifest group "push"): the
 * three notification events, the two device token events and
 * didChangeNotificationAuthorization. */
#define SH_EVENTS_PUSH                                                          \
    (SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION) |                         \
     SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_NOTIFICATION_RESPONSE) |                 \
     SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION) |                   \
     SH_EVENT_BIT(SH_EVENT_DID_REGISTER_FOR_REMOTE_NOTIFICATIONS) |             \
     SH_EVENT_BIT(SH_EVENT_DID_FAIL_TO_REGISTER_FOR_REMOTE_NOTIFICATIONS) |     \
     SH_EVENT_BIT(SH_EVENT_DID_CHANGE_NOTIFICATION_AUTHORIZATION))

/* The application's state, as UIApplication.State plus the states around it. */
typedef enum sh_app_state {
    /* Not launched yet, or terminated. */
    SH_APP_NOT_RUNNING = 0,
    /* Running in the foreground, not receiving events (launching, resigning). */
    SH_APP_INACTIVE = 1,
    /* Running in the foreground and receiving events. */
    SH_APP_ACTIVE = 2,
    /* Running in the background. */
    SH_APP_BACKGROUND = 3,
} sh_app_state;

/* Flags of sh_launch_options.flags. */
enum {
    /* This is the first launch of the host with this state directory. */
    SH_LAUNCH_FIRST_HOST_LAUNCH = 1u << 0,
    /* This is the first launch of this service (its id was never seen). */
    SH_LAUNCH_FIRST_SERVICE_LAUNCH = 1u << 1,
    /* The service was restarted (after a crash or a reload), not launched
     * with the host. */
    SH_LAUNCH_RESTART = 1u << 2,
    /* The service is lazy (SH_META_SERVICE_LAZY) and was opened on its first
     * event, not with the host: its launch events come just before that
     * event, and the app may already be active. */
    SH_LAUNCH_LAZY = 1u << 3,
};

/* Version 2 adds the state handed over by willReload (restored_state…). */
#define SH_LAUNCH_OPTIONS_VERSION 2u
/* sizeof(sh_launch_options) in version 1, frozen (layout.h). */
#define SH_LAUNCH_OPTIONS_SIZE_V1 56u
/* sizeof(sh_launch_options) in version 2, frozen (layout.h). */
#define SH_LAUNCH_OPTIONS_SIZE_V2 88u

/* The data of willFinishLaunching and didFinishLaunching, like UIKit's
 * launchOptions dictionary.
 * Owner: the host. Valid: until handle_event returns; copy what you keep.
 * Thread: read it on the thread that received the event. */
typedef struct sh_launch_options {
    /* sizeof(sh_launch_options) as the host compiled it. Read a member added
     * after version 1 only when size covers it (SH_HAS_MEMBER). */
    uint32_t size;
    /* SH_LAUNCH_OPTIONS_VERSION as the host compiled it. */
    uint32_t version;
    /* SH_LAUNCH_* flags. */
    uint32_t flags;
    /* Reserved, zero. */
    uint32_t reserved;
    /* The service's settings as a JSON object (UTF-8, NUL-terminated;
     * settings_len excludes the NUL), or NULL when it has none. */
    const char *settings_json;
    /* Length of settings_json in bytes. */
    size_t settings_len;
    /* The push notification that launched the app (UIKit's
     * .remoteNotification key), or NULL. It is also delivered once, after
     * the app becomes active, as didReceiveNotificationResponse with
     * action_id SH_ACTION_DEFAULT and SH_FROM_LAUNCH; a background push
     * (content-available: 1) launches the app into the background instead
     * (app_state SH_APP_BACKGROUND) and is delivered once, right after
     * didFinishLaunching, as didReceiveRemoteNotification with SH_FROM_LAUNCH. */
    const struct sh_push *notification;
    /* The URL that launched the app (UIKit's .url key), or NULL. Also
     * delivered once, after the app becomes active, as openURL; when a scene
     * is launched with it (host --launch-scene), through that scene instead
     * (sceneOpenURLContexts, falling back to openURL; see scenes.h). */
    const struct sh_open_url *url;
    /* The user activity that launched the app (UIKit's .userActivityDictionary
     * key), or NULL. Also delivered once, after the app becomes active, as
     * continueUserActivity; with a launch scene, through that scene instead
     * (sceneContinueUserActivity, falling back to continueUserActivity). */
    const struct sh_user_activity *activity;
    /* Version 2 (read it only when size >= SH_LAUNCH_OPTIONS_SIZE_V2; an older
     * host's struct ends before it): the state the instance this one replaces
     * handed over when asked willReload (a reload's new version, a restart by
     * request, its new worker), restored_state_len bytes, followed by a NUL
     * the length excludes; NULL when none was handed over (a first launch, a
     * crash, a service that does not handle willReload, a state refused).
     * Owner: the host. Valid: until handle_event returns; copy what you keep.
     * Given with both launch events of that one start. */
    const uint8_t *restored_state;
    /* Length of restored_state in bytes (0 when NULL); at most SH_RELOAD_STATE_MAX. */
    size_t restored_state_len;
    /* The id of the instance that handed restored_state over (NUL-terminated),
     * or NULL with it. */
    const char *restored_from_id;
    /* That instance's version (its metadata's, e.g. "1.2.0"), or NULL with it:
     * read the state as that version wrote it. */
    const char *restored_from_version;
} sh_launch_options;

/* Flags of the event data below. */
enum {
    /* The data came from the launch options: this is its one delivery after
     * the launch (after the app became active; a background push that
     * launched the app into the background, right after didFinishLaunching). */
    SH_FROM_LAUNCH = 1u << 0,
    /* The data came from a scene's connection options (scenes.h): this is
     * its one delivery after the scene became active. */
    SH_FROM_CONNECTION = 1u << 1,
};

/* The standard action ids of sh_push.action_id (as UNNotificationResponse). */
#define SH_ACTION_DEFAULT "com.apple.UNNotificationDefaultActionIdentifier"
#define SH_ACTION_DISMISS "com.apple.UNNotificationDismissActionIdentifier"

#define SH_PUSH_VERSION 1u
/* sizeof(sh_push) in version 1, frozen (layout.h). */
#define SH_PUSH_SIZE_V1 48u

/* A push notification: an APNs-shaped JSON payload (aps.alert, aps.badge,
 * aps.sound, aps.category, aps.content-available, custom keys).
 * Owner: the host. Valid: until handle_event returns; copy what you keep.
 * Thread: read it on the thread that received the event. */
typedef struct sh_push {
    /* sizeof(sh_push) as the host compiled it. */
    uint32_t size;
    /* SH_PUSH_VERSION as the host compiled it. */
    uint32_t version;
    /* SH_FROM_LAUNCH or 0. */
    uint32_t flags;
    /* Reserved, zero. */
    uint32_t reserved;
    /* The payload as JSON text (UTF-8), NUL-terminated; json_len excludes
     * the NUL. */
    const char *json;
    size_t json_len;
    /* The same payload, parsed once by the host for every service (see
     * json.h). Never NULL. */
    const struct sh_json *parsed;
    /* didReceiveNotificationResponse: the action the user chose
     * (SH_ACTION_DEFAULT, SH_ACTION_DISMISS or a custom id), NUL-terminated.
     * NULL for other events. */
    const char *action_id;
} sh_push;

#define SH_DEVICE_TOKEN_VERSION 1u
/* sizeof(sh_device_token) in version 1, frozen (layout.h). */
#define SH_DEVICE_TOKEN_SIZE_V1 32u

/* The data of didRegisterForRemoteNotifications.
 * Owner: the host. Valid: until handle_event returns; copy what you keep.
 * Thread: read it on the thread that received the event. */
typedef struct sh_device_token {
    uint32_t size;
    uint32_t version;
    /* The token's bytes. */
    const uint8_t *bytes;
    size_t length;
    /* The same bytes as lowercase hex, NUL-terminated. */
    const char *hex;
} sh_device_token;

#define SH_ERROR_INFO_VERSION 1u
/* sizeof(sh_error_info) in version 1, frozen (layout.h). */
#define SH_ERROR_INFO_SIZE_V1 16u

/* The data of didFailToRegisterForRemoteNotifications.
 * Owner: the host. Valid: until handle_event returns; copy what you keep.
 * Thread: read it on the thread that received the event. */
typedef struct sh_error_info {
    uint32_t size;
    uint32_t version;
    /* What went wrong, NUL-terminated UTF-8. */
    const char *message;
} sh_error_info;

#define SH_OPEN_URL_VERSION 1u
/* sizeof(sh_open_url) in version 1, frozen (layout.h). */
#define SH_OPEN_URL_SIZE_V1 40u

/* The data of openURL, and a URL context of a scene (scenes.h).
 * Owner: the host. Valid: until handle_event returns; copy what you keep.
 * Thread: read it on the thread that received the event. */
typedef struct sh_open_url {
    uint32_t size;
    uint32_t version;
    /* SH_FROM_LAUNCH, SH_FROM_CONNECTION, both, or 0. */
    uint32_t flags;
    uint32_t reserved;
    /* The whole URL, NUL-terminated: "myapp://item/42?ref=push". */
    const char *url;
    /* Its scheme, lowercased, NUL-terminated: "myapp". */
    const char *scheme;
    /* Its host, lowercased, NUL-terminated; "" when it has none. */
    const char *host;
} sh_open_url;

#define SH_USER_ACTIVITY_VERSION 1u
/* sizeof(sh_user_activity) in version 1, frozen (layout.h). */
#define SH_USER_ACTIVITY_SIZE_V1 56u

/* The data of continueUserActivity (as NSUserActivity), and a user activity
 * of a scene (scenes.h).
 * Owner: the host. Valid: until handle_event returns; copy what you keep.
 * Thread: read it on the thread that received the event. */
typedef struct sh_user_activity {
    uint32_t size;
    uint32_t version;
    /* SH_FROM_LAUNCH, SH_FROM_CONNECTION, both, or 0. */
    uint32_t flags;
    uint32_t reserved;
    /* The activity type, NUL-terminated: "com.example.view-item". */
    const char *type;
    /* The activity's web page URL, NUL-terminated, or NULL. */
    const char *webpage_url;
    /* userInfo as a JSON object (UTF-8, NUL-terminated), or NULL. */
    const char *user_info_json;
    size_t user_info_len;
    /* userInfo parsed by the host, or NULL when there is none. */
    const struct sh_json *user_info;
} sh_user_activity;

#define SH_SHORTCUT_ITEM_VERSION 1u
/* sizeof(sh_shortcut_item) in version 1, frozen (layout.h). */
#define SH_SHORTCUT_ITEM_SIZE_V1 32u

/* The data of performActionForShortcutItem (as UIApplicationShortcutItem).
 * Owner: the host. Valid: until handle_event returns; copy what you keep.
 * Thread: read it on the thread that received the event. */
typedef struct sh_shortcut_item {
    uint32_t size;
    uint32_t version;
    /* SH_FROM_LAUNCH (the launch's --launch-shortcut: its one delivery after
     * the app became active) or 0. */
    uint32_t flags;
    uint32_t reserved;
    /* The action's id (UIKit's type), NUL-terminated: "compose". */
    const char *id;
    /* Its title as the claiming service declared it, NUL-terminated UTF-8:
     * "New entry" (the id when it declared none). */
    const char *title;
} sh_shortcut_item;

/* Version 2 adds `parsed`. */
#define SH_NOTIFICATION_VERSION 2u
/* sizeof(sh_notification) in version 1, frozen (layout.h). */
#define SH_NOTIFICATION_SIZE_V1 40u
/* sizeof(sh_notification) in version 2, frozen (layout.h). */
#define SH_NOTIFICATION_SIZE_V2 48u

/* The data of SH_EVENT_NOTIFICATION.
 * Owner: the host. Valid: until handle_event returns; copy what you keep.
 * Thread: read it on the thread that received the event. */
typedef struct sh_notification {
    /* sizeof(sh_notification) as the host compiled it. */
    uint32_t size;
    /* SH_NOTIFICATION_VERSION as the host compiled it. */
    uint32_t version;
    /* The notification's name, NUL-terminated UTF-8. */
    const char *name;
    /* The id of the service that posted it, NUL-terminated; "host" when the
     * host itself (or a control client) posted it. */
    const char *sender;
    /* The payload as JSON (UTF-8, NUL-terminated; json_len excludes the
     * NUL), or NULL. */
    const char *json;
    /* Length of json in bytes, without the NUL. */
    size_t json_len;
    /* Version 2 (read it only when size >= SH_NOTIFICATION_SIZE_V2; an older
     * host's struct ends before it): the same payload parsed once by the host
     * for every receiver (json.h), members in document order; NULL when there
     * is no payload or it is not valid JSON (the host logs why).
     * Owner: the host. Valid: until handle_event returns, like the struct.
     * Thread: read-only, on the thread that received the event. */
    const struct sh_json *parsed;
} sh_notification;

#define SH_REQUEST_VERSION 1u
/* sizeof(sh_request) in version 1, frozen (layout.h). */
#define SH_REQUEST_SIZE_V1 48u

/* The data of SH_EVENT_REQUEST: what another service asks.
 * Owner: the host. Valid: until the event's completion is called or its
 * deadline passes (the answer may come later, from any thread); copy what
 * you keep longer. Thread: any, read-only. */
typedef struct sh_request {
    /* sizeof(sh_request) as the host compiled it. */
    uint32_t size;
    /* SH_REQUEST_VERSION as the host compiled it. */
    uint32_t version;
    /* The request's name, NUL-terminated UTF-8: one of this service's
     * SH_CLAIM_ANSWER values ("geo.locate"). */
    const char *name;
    /* The id of the asking service, NUL-terminated; "host" for host ctl
     * request. */
    const char *from;
    /* The payload as JSON (UTF-8, NUL-terminated; json_len excludes the
     * NUL), or NULL when the asker sent none. At most --max-payload bytes. */
    const char *json;
    /* Length of json in bytes, without the NUL. */
    size_t json_len;
    /* json parsed by the host, or NULL when there is none. */
    const struct sh_json *parsed;
} sh_request;

#define SH_SETTINGS_CHANGE_VERSION 1u
/* sizeof(sh_settings_change) in version 1, frozen (layout.h). */
#define SH_SETTINGS_CHANGE_SIZE_V1 40u

/* The data of didChangeSettings: the service's `settings` object before and
 * after, as compact JSON (UTF-8, NUL-terminated; the _len members exclude
 * the NUL), as settings_json in sh_launch_options carries them.
 * Owner: the host. Valid: until handle_event returns; copy what you keep.
 * Thread: read it on the thread that received the event. */
typedef struct sh_settings_change {
    /* sizeof(sh_settings_change) as the host compiled it. */
    uint32_t size;
    /* SH_SETTINGS_CHANGE_VERSION as the host compiled it. */
    uint32_t version;
    /* The settings before, or NULL when the service had none. */
    const char *old_json;
    /* Length of old_json in bytes, without the NUL (0 when NULL). */
    size_t old_len;
    /* The settings now, or NULL when the configuration gives none. */
    const char *new_json;
    /* Length of new_json in bytes, without the NUL (0 when NULL). */
    size_t new_len;
} sh_settings_change;

#define SH_DEPENDENCY_VERSION 1u
/* sizeof(sh_dependency) in version 1, frozen (layout.h). */
#define SH_DEPENDENCY_SIZE_V1 24u

/* The data of dependencyWillStop and dependencyDidStart: the required
 * service. Owner: the host. Valid: until handle_event returns; copy what you
 * keep. Thread: read it on the thread that received the event. */
typedef struct sh_dependency {
    /* sizeof(sh_dependency) as the host compiled it. */
    uint32_t size;
    /* SH_DEPENDENCY_VERSION as the host compiled it. */
    uint32_t version;
    /* The required service's id (NUL-terminated UTF-8). */
    const char *id;
    /* Its version as its metadata says ("1.2.0"; NUL-terminated): the version
     * that stops, or the one that started. */
    const char *service_version;
} sh_dependency;

#define SH_NOTIFICATION_SETTINGS_VERSION 1u
/* sizeof(sh_notification_settings) in version 1, frozen (layout.h). */
#define SH_NOTIFICATION_SETTINGS_SIZE_V1 16u

/* The data of didChangeNotificationAuthorization (as UNNotificationSettings).
 * Owner: the host. Valid: until handle_event returns; copy what you keep.
 * Thread: read it on the thread that received the event. */
typedef struct sh_notification_settings {
    /* sizeof(sh_notification_settings) as the host compiled it. */
    uint32_t size;
    /* SH_NOTIFICATION_SETTINGS_VERSION as the host compiled it. */
    uint32_t version;
    /* An sh_authorization_status. */
    int32_t status;
    /* The SH_PRESENT_* options a push may be presented with: the host
     * presents the union of the willPresentNotification answers within
     * these only (denied and not determined: none). */
    uint32_t allowed;
} sh_notification_settings;

#define SH_COMPLETION_VERSION 1u
/* sizeof(sh_completion) in version 1, frozen (layout.h). */
#define SH_COMPLETION_SIZE_V1 24u

/* A completion: how a service answers an event whose answer may come later
 * (a background fetch, a presentation choice). Events that need one carry it
 * in sh_event.completion; all others have NULL there.
 * Owner: the host. Valid: the struct stays readable for the process lifetime,
 * on any thread. Call complete() exactly once: the host ignores and logs a
 * second call or one after the deadline (--fetch-timeout; for
 * SH_EVENT_REQUEST, --request-timeout), and counts a missing answer as
 * failed. Rationale: the host reuses a completion's memory only after 8192
 * later completions were answered or timed out, so a late or second call
 * within that window is still detected (after it, a call may be taken for a
 * newer event's answer: never call twice). A handle_event that returns a
 * negative result for such an event says it will not complete: the host
 * counts it as failed at once.
 * Beware: SH_FETCH_NEW_DATA equals SH_OK and SH_FETCH_NO_DATA equals
 * SH_FALSE; pass the SH_FETCH_* names to complete(). */
typedef struct sh_completion {
    /* sizeof(sh_completion) as the host compiled it. */
    uint32_t size;
    /* SH_COMPLETION_VERSION as the host compiled it. */
    uint32_t version;
    /* Host-owned; do not touch. */
    void *host_data;
    /* [thread-safe] Deliver the answer: result is one of SH_OK, SH_FALSE,
     * SH_ERROR or an event-specific code; json (may be NULL) is an
     * event-specific answer the host copies before returning. */
    void (*complete)(const struct sh_completion *completion, int32_t result,
                     const char *json, size_t json_len);
} sh_completion;

#define SH_EVENT_VERSION 1u
/* sizeof(sh_event) in version 1, frozen (layout.h). */
#define SH_EVENT_SIZE_V1 40u

/* One event for one service.
 * Owner: the host. Valid: until handle_event returns (except completion, see
 * above, and the sh_request of SH_EVENT_REQUEST, valid until its completion;
 * see sh_request). Thread: the host's main thread (sh_request: any). */
typedef struct sh_event {
    /* sizeof(sh_event) as the host compiled it. */
    uint32_t size;
    /* SH_EVENT_VERSION as the host compiled it. */
    uint32_t version;
    /* An sh_event_kind. A service must answer SH_UNSUPPORTED to a kind it
     * does not know (the host only sends kinds the service asked for, but a
     * newer host may grow a kind's meaning). */
    uint32_t kind;
    /* The app's sh_app_state while the service handles the event, as
     * UIApplication.applicationState reads then: launch events and
     * did-events see the new state (didBecomeActive: SH_APP_ACTIVE,
     * didEnterBackground: SH_APP_BACKGROUND), will-events the old one
     * (willResignActive: still SH_APP_ACTIVE). */
    int32_t app_state;
    /* A host-wide counter, increasing by one per delivery; matches the trace. */
    uint64_t seq;
    /* Kind-specific data (see sh_event_kind), or NULL. */
    const void *data;
    /* The completion for events that need a later answer, or NULL. */
    const sh_completion *completion;
} sh_event;

#ifdef __cplusplus
}
#endif

#endif /* SERVICEHOST_EVENTS_H */
