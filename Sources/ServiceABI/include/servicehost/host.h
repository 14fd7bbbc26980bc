/*
 * servicehost/host.h — the table of functions the host gives each service.
 *
 * Rationale: the table is append-only (as SQLite's sqlite3_api_routines and
 * CLAP's clap_host). A member is only ever added at the end, together with a
 * new SH_HOST_VERSION; a service that needs a newer member checks `size`
 * before calling it. Growth that is not for everyone goes through
 * get_extension instead.
 *
 * From version 4 on the table is frozen: new host functions grow only through
 * get_extension, as CLAP's host extensions do. Each extension is a table of
 * its own under a versioned string id ("dev.servicehost.background-tasks/1"),
 * declared in a header of its own, starting with its size and version and
 * append-only like this one; an incompatible change is a new id
 * (".../2"), offered beside the old one for as long as services use it.
 */
#ifndef SERVICEHOST_HOST_H
#define SERVICEHOST_HOST_H

#include "version.h"
#include "events.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2: notification_settings, request_authorization, set_scene_restoration.
 * 3: control (named for what it takes: a control request; the name request
 *    is kept for requests between services).
 * 4: request (request/reply between services). */
#define SH_HOST_VERSION 4u
/* sizeof(sh_host) in version 1, frozen (layout.h). */
#define SH_HOST_SIZE_V1 112u
/* sizeof(sh_host) in version 2 (layout.h). */
#define SH_HOST_SIZE_V2 136u
/* sizeof(sh_host) in version 3 (layout.h). */
#define SH_HOST_SIZE_V3 144u
/* sizeof(sh_host) in version 4 (layout.h). */
#define SH_HOST_SIZE_V4 152u

/* The largest restoration activity set_scene_restoration keeps, in bytes. */
#define SH_RESTORATION_ACTIVITY_MAX 65536u

/* Called by store_keys once per key, on the calling thread, in byte order,
 * before store_keys returns. key is host-owned, NUL-terminated and valid only
 * during the call; context is the caller's, as given to store_keys. */
typedef void (*sh_store_key_fn)(void *context, const char *key);

/* Called by the host exactly once per accepted sh_host.control, on the host's
 * main thread, with the reply: one JSON object of reply_len bytes (also
 * NUL-terminated), the object the control socket would write for the same
 * request ("ok", and "error" or the event's "handled", "receivers", ...).
 * reply is host-owned and valid only during the call; copy what you keep. */
typedef void (*sh_control_reply_fn)(void *context, const char *reply,
                                    size_t reply_len);

/* Called by the host exactly once per accepted sh_host.request, on the host's
 * main thread. result is SH_OK with the answerer's reply in json (json_len
 * bytes, also NUL-terminated; NULL when it replied without one), or an error:
 * SH_NOT_FOUND when no service answers the name, SH_INVALID when the request
 * was refused (a payload over --max-payload, JSON that does not parse),
 * SH_ERROR when the answerer failed, missed its deadline or its worker
 * crashed; then json is {"error": "..."} saying why. json is host-owned and
 * valid only during the call; copy what you keep. */
typedef void (*sh_request_reply_fn)(void *context, int32_t result,
                                    const char *json, size_t json_len);

/* The host's functions, one table per service: the host knows which service
 * calls from the table it uses. Every member checks its arguments the same
 * way, in the host and in a worker process alike: a pointer that is NULL with
 * a non-zero length (json with json_len, value with length, buffer with
 * capacity), or a length past INT64_MAX, is refused with SH_INVALID before
 * anything else happens.
 * Owner: the host. Valid: from sh_service.attach until the process exits (the
 * host never frees it, so a service may keep the pointer in a global).
 * Thread: each member says. */
typedef struct sh_host {
    /* sizeof(sh_host) as the host compiled it. Check it before using a member
     * added after version 1. */
    uint32_t size;
    /* SH_HOST_VERSION as the host compiled it. */
    uint32_t version;
    /* Host-owned; identifies the service to the host. Do not touch. */
    void *host_data;
    /* The host's name and version, NUL-terminated, e.g. "servicehost 0.1.0".
     * Host-owned and static: valid for the process lifetime, on any thread. */
    const char *host_version;

    /* [thread-safe] Log one line at an SH_LOG_* level. The host prefixes the
     * level and the service id and copies message (NUL-terminated UTF-8)
     * before returning. */
    void (*log)(const struct sh_host *host, int32_t level, const char *message);

    /* [thread-safe] Post a notification to the services that handle
     * SH_EVENT_NOTIFICATION. Delivery happens later on the main thread, after
     * the event being handled now (never re-entrantly), in service order; the
     * poster does not receive its own notification. name is NUL-terminated;
     * json (may be NULL) is a JSON payload of json_len bytes. Both are copied
     * before returning. Returns SH_OK, or SH_INVALID for an empty name. */
    int32_t (*post)(const struct sh_host *host, const char *name,
                    const char *json, size_t json_len);

    /* [thread-safe] The app's current sh_app_state. */
    int32_t (*app_state)(const struct sh_host *host);

    /* [main-thread] Read the value of key from this service's persistent
     * store into buffer (capacity bytes) and write its length to *length.
     * key (NUL-terminated), buffer and length are the caller's: read and
     * written during the call only, never kept.
     * Returns SH_OK, SH_NOT_FOUND, SH_TOO_SMALL (with *length set to the
     * size needed), SH_INVALID, SH_ERROR (logged) or SH_UNSUPPORTED when the
     * host has no store. */
    int32_t (*store_get)(const struct sh_host *host, const char *key,
                         void *buffer, size_t capacity, size_t *length);

    /* [main-thread] Set key to length bytes of value, atomically and
     * durably. key (NUL-terminated) and value are the caller's, copied before
     * returning. Returns SH_OK; SH_INVALID when the request breaks a limit
     * (key over 255 bytes, value over 1 MiB, over 10 000 keys, a NUL in the
     * key: the host logs which); SH_ERROR when the disk fails (logged); or
     * SH_UNSUPPORTED when the host runs without a store. */
    int32_t (*store_set)(const struct sh_host *host, const char *key,
                         const void *value, size_t length);

    /* [main-thread] Remove key (the caller's, NUL-terminated, read during the
     * call only). Returns SH_OK, SH_NOT_FOUND or SH_UNSUPPORTED. */
    int32_t (*store_remove)(const struct sh_host *host, const char *key);

    /* [main-thread] Call each(context, key) for every key of this service's
     * store, on the calling thread, before returning (sh_store_key_fn); each
     * and context are the caller's and not kept. Returns SH_OK or
     * SH_UNSUPPORTED. */
    int32_t (*store_keys)(const struct sh_host *host, sh_store_key_fn each,
                          void *context);

    /* [thread-safe] An extension of the host by its versioned id
     * ("vendor.name/1"), or NULL when this host does not offer it (this host
     * offers SH_BACKGROUND_TASKS_ID, background_tasks.h, and SH_HEALTH_EXTENSION_ID, health.h). id is the caller's, NUL-terminated,
     * read during the call only. An extension is a table of the host's own
     * functions: host-owned, valid for the process lifetime, starting with its
     * size and version and append-only like this table, each member saying
     * which thread may call it. */
    const void *(*get_extension)(const struct sh_host *host, const char *id);

    /* [thread-safe] Subscribe this service to notifications named name
     * (NUL-terminated, copied before returning; "*" for every name), in
     * addition to the names its metadata lists. Takes effect for
     * notifications delivered after the call. Returns SH_OK or SH_INVALID for
     * an empty name. */
    int32_t (*subscribe)(const struct sh_host *host, const char *name);

    /* [thread-safe] Undo subscribe (names from the metadata stay); name is
     * read during the call only. Returns SH_OK or SH_NOT_FOUND. */
    int32_t (*unsubscribe)(const struct sh_host *host, const char *name);

    /* [thread-safe] Ask for the device token, as
     * registerForRemoteNotifications(): when the host knows a token it
     * delivers didRegisterForRemoteNotifications to this service (on the
     * main thread, after the current event); otherwise the service hears
     * when one arrives. Returns SH_OK. */
    int32_t (*register_for_remote_notifications)(const struct sh_host *host);

    /* Version 2 (check size before calling these). */

    /* [thread-safe] The notification authorization, as
     * getNotificationSettings: returns an sh_authorization_status and, when
     * allowed (the caller's) is not NULL, writes the SH_PRESENT_* options a
     * push may be presented with to it before returning. */
    int32_t (*notification_settings)(const struct sh_host *host,
                                     uint32_t *allowed);

    /* [thread-safe] Ask for notification authorization with SH_AUTHORIZE_*
     * options, as requestAuthorization(options:). The host answers with its
     * policy (host --notification-authorization prompt|grant|deny) while the
     * status is not determined: grant and deny decide at once; prompt leaves
     * it not determined until the user decides (host ctl authorization).
     * A decided status never changes here, as iOS asks once. Returns the
     * sh_authorization_status after the answer; a change is also delivered
     * as didChangeNotificationAuthorization, on the main thread after the
     * current event. */
    int32_t (*request_authorization)(const struct sh_host *host,
                                     uint32_t options);

    /* [main-thread] Save the state restoration activity of the connected
     * scene scene_id (sh_scene.id), as UIKit's
     * stateRestorationActivity(for:): call it while handling
     * sceneDidEnterBackground or sceneDidDisconnect (or at any moment the
     * scene is connected). json is a JSON object of json_len bytes,
     * {"type": "...", "url": "...", "userInfo": {...}} (type required, the
     * others optional), copied and stored in the state directory under the
     * scene's name; NULL clears it. When a scene of that name connects again,
     * even at the next launch, the activity is in its connection options
     * (restoration_activity), once. Returns SH_OK; SH_NOT_FOUND when no
     * scene with that id is connected (a scene is connected until its
     * sceneDidDisconnect returns); SH_INVALID when json is not such an
     * object or is over SH_RESTORATION_ACTIVITY_MAX bytes (the host logs
     * why); SH_ERROR when the disk fails (logged); SH_UNSUPPORTED without a
     * state directory. */
    int32_t (*set_scene_restoration)(const struct sh_host *host,
                                     uint64_t scene_id, const char *json,
                                     size_t json_len);

    /* Version 3 (check size before calling it). */

    /* [thread-safe] Hand the host one control request, exactly as a line on
     * the control socket: json is a request object of json_len bytes
     * ({"command":"push","payload":{...}}, "open" with "url", "post" with
     * "name" and "payload", ...), copied before returning. It is parsed and
     * checked by the socket's parser with the socket's limits (--max-payload),
     * carried out on the main thread after the current event, in the order
     * the service made its requests, by the same handler (a push follows the
     * app state; requests during launch wait until it is active; after
     * termination began they are refused), and answered by calling
     * reply(context, ...) once on the main thread with the socket's reply
     * object; a refused request is answered too ("ok": false, "error" says
     * why). The reply comes only after the host carried the request out: a
     * service that acknowledges something upstream on the reply never
     * acknowledges an event the host did not take.
     * Rationale: not a back door. The configuration grants it per service,
     * "requests": "events" (state, list, push, open, activity, action,
     * post, request, memory-warning) or "all" (everything the socket takes but
     * watch, which streams on a connection); without a grant
     * every request is answered with an error naming the service and the key.
     * Deploys go through here too ("all"), as MQTTBridge's fleet state does
     * (issue 41): {"command":"deploy","directory":ABS,"seconds":N} deploys a
     * folder with probation and rollback; "action":"status" reports it;
     * "action":"verify" with "path" (absolute), "size", "sha256" (64 hex
     * digits) and "signature" (a minisign signature file's text) checks a
     * file's size, digest and signature by the host's trustedKeys and answers
     * "bundle": {"verified", "reason", "detail", "keyId", "trustedComment"};
     * "action":"digests" answers "digests": {service id: SHA-256 of its file}.
     * Returns SH_OK when the reply will come; SH_INVALID for a NULL json or
     * reply, or json_len 0; SH_UNSUPPORTED where the host takes no requests
     * (a service in a worker process); reply is never called then.
     * context is the caller's, passed back untouched to reply; keep it valid
     * until reply is called, which is always after this function returned,
     * never during it. */
    int32_t (*control)(const struct sh_host *host, const char *json,
                       size_t json_len, sh_control_reply_fn reply,
                       void *context);

    /* Version 4 (check size before calling it). */

    /* [thread-safe] Ask the service that answers name (SH_CLAIM_ANSWER) and
     * get its reply: the host delivers SH_EVENT_REQUEST to the answerer on
     * the main thread after the current event (opening it first when it is
     * lazy, in its worker when it is isolated) and calls reply(context, ...)
     * exactly once on the main thread: with the answer, or with an error
     * when nobody answers the name, the answerer fails or misses the
     * deadline (--request-timeout, default 5 s). name is NUL-terminated;
     * json (may be NULL) is a JSON payload of json_len bytes, at most
     * --max-payload. Both are copied before returning. context is the
     * caller's, passed back untouched to reply; keep it valid until reply is
     * called, which is always after this function returned, never during it.
     * Returns SH_OK when the reply will come; SH_INVALID for an empty name or
     * a NULL reply (reply is never called then).
     * Rationale: this, not a table of function pointers (what get_extension
     * hands out for the host's own extensions), is how services offer each
     * other APIs. Such a table lives in one address space: it cannot cross
     * into a worker process (--isolation process), and a call through another
     * service's table would run that service's code on the caller's thread,
     * re-entrantly, past the host's watchdog and crash isolation. A request
     * is data (a name and JSON): it crosses a process boundary, is delivered
     * on the main thread like every event, opens a lazy answerer, and has a
     * deadline. */
    int32_t (*request)(const struct sh_host *host, const char *name,
                       const char *json, size_t json_len,
                       sh_request_reply_fn reply, void *context);
} sh_host;

#ifdef __cplusplus
}
#endif

#endif /* SERVICEHOST_HOST_H */
