// A configurable C test service. Compile-time macros choose its behaviour:
//   PROBE_ID            service id (default "test.probe")
//   PROBE_PRIORITY      priority (default 0)
//   PROBE_EVENTS        event mask word 0 (default SH_EVENTS_LIFECYCLE)
//   PROBE_FAIL_KIND     an event kind answered with PROBE_FAIL_RESULT (default SH_ERROR)
//   PROBE_HANG_KIND     an event kind during which the service sleeps forever
//   PROBE_SLEEP_KIND / PROBE_SLEEP_MS   an event kind during which it sleeps a while
//   PROBE_MARK_KIND / PROBE_MARK_FILE   create that file as an event of that kind begins (before
//                       any sleep or hang): a test polls for it to know the service is inside
//   PROBE_ANSWER        the result of openURL / continueUserActivity (default SH_OK)
//   PROBE_COMPLETE      how completions are answered: 0 at once (default), 1 never,
//                       2 twice, 3 from another thread after 50 ms, 4 when the next event
//                       arrives (late, once a test let the deadline pass)
//   PROBE_RESULT        the completion's result (fetch result, presentation options)
//   PROBE_URL_CLAIM, PROBE_ACTIVITY_CLAIM, PROBE_SUBSCRIBE   metadata claims
//   PROBE_SHORTCUT, PROBE_SHORTCUT_ICON   a quick action claim (SH_CLAIM_SHORTCUT, e.g. "compose New
//                       entry") and its icon (SH_CLAIM_SHORTCUT_ICON, e.g. "compose document-new");
//                       performActionForShortcutItem is answered PROBE_ANSWER
//   PROBE_SCENE_ROLE    a scene role claim (SH_CLAIM_SCENE_ROLE), e.g. "car"
//   PROBE_VERSION       the version in its metadata (default "0.1.0")
//   PROBE_REQUIRES, PROBE_REQUIRES_2   requires claims (SH_CLAIM_REQUIRES), e.g. "test.b >=1.2 <2"
//   PROBE_AFTER         an after claim (SH_CLAIM_AFTER), e.g. "test.b"
//   PROBE_CONFIGURATION the configuration name answered to configurationForConnecting (SH_OK);
//                       without it the probe passes (SH_FALSE). PROBE_CONFIGURATION_ROLE and
//                       PROBE_CONFIGURATION_SETTINGS (JSON text) complete the answer
//   PROBE_SCENE_ANSWER  the result of sceneOpenURLContexts / sceneContinueUserActivity
//                       (default PROBE_ANSWER)
//   PROBE_POST_ON_KIND / PROBE_POST_NAME   post a notification while handling that kind
//   PROBE_REGISTER_ON_KIND  ask for the device token while handling that kind
//   PROBE_REQUEST_AUTHORIZATION  SH_AUTHORIZE_* options asked for in didFinishLaunching
//                       (logs "authorization request -> STATUS")
//   PROBE_RESTORATION   a restoration activity (JSON text) saved at sceneDidEnterBackground;
//                       PROBE_RESTORATION_PAD N pads its userInfo to N bytes (logs
//                       "restoration saved -> RESULT")
//   PROBE_CONSTRUCTOR_MARKER  an ELF constructor creates the file named by $PROBE_MARKER;
//                       with PROBE_CONSTRUCTOR_SLEEP_MS it then sleeps that long (a slow load)
//   PROBE_ABI_MIN / PROBE_ABI_MAX  the ABI range declared in metadata and answered
//   PROBE_NO_METADATA   leave out the metadata section
//   PROBE_FLAGS         SH_META_SERVICE_* flags of its metadata (default 0), e.g. SH_META_SERVICE_LAZY
//   PROBE_UNDEFINED     reference a symbol nothing defines (dlopen fails)
//   PROBE_EXPORT_OTHER_ID  export a service id the metadata does not declare
//   PROBE_EXPORT_TWICE  export its service twice (the same descriptor listed twice)
//   PROBE_DECLARE_ALSO  a second service id its metadata declares but it never exports
//   PROBE_ANSWER_ABI    the ABI version servicehost_entry answers, whatever the offer (default:
//                       the newest in both the offer and PROBE_ABI_MIN..PROBE_ABI_MAX)
//   PROBE_SHAPE         1: sh_plugin and sh_service say exactly their version-1 sizes
//                       (SH_*_SIZE_V1); 2: a plugin built against a future header whose
//                       sh_plugin and sh_service grew (version 2, extra members), which
//                       reads the host's structs only within their sizes
//   PROBE_ANSWERS       a request name it answers (SH_CLAIM_ANSWER); it completes a request
//                       (as PROBE_COMPLETE says) with {"by":ID,"from":FROM,"name":NAME,"payload":P}
//   PROBE_ASK_ON_KIND / PROBE_ASK_NAME   send the request PROBE_ASK_NAME (sh_host.request, payload
//                       {"n":1}) while handling that kind; logs "probe ID: reply RESULT JSON";
//                       PROBE_ASK_PAD N sends {"pad":"xxx…"} of about N bytes instead
//   PROBE_CRASH_KIND    an event kind during which the service aborts
//   PROBE_CHECK_NUL     log whether each JSON buffer handed over is NUL-terminated
//   PROBE_HEALTH_MARKER healthCheck is answered SH_HEALTH_UNHEALTHY ("marker present") while that
//                       file exists, SH_HEALTH_HEALTHY otherwise
//   PROBE_STATE         willReload hands over "gen=N", N one more than the generation it was launched
//                       with (0 without a restored state); a launch with a restored state logs
//                       "probe ID: restored STATE from ID VERSION"
//   PROBE_STATE_PAD     with PROBE_STATE, hand over that many bytes of 's' instead
//   PROBE_SETTINGS_SCHEMA, PROBE_SETTINGS_SCHEMA_2   the pieces of a settings schema
//                       (SH_CLAIM_SETTINGS_SCHEMA claims, put together in this order)
//   PROBE_REPORT_HEALTH a file: at each notification a thread reports through the health extension
//                       SH_HEALTH_UNHEALTHY ("reported unhealthy") while it exists, SH_HEALTH_HEALTHY
//                       otherwise
// Every event is logged as "probe ID: event KIND state S host-state H seq N" plus its data.
#define _POSIX_C_SOURCE 200809L
#include <servicehost.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef PROBE_ID
#define PROBE_ID "test.probe"
#endif
#ifndef PROBE_PRIORITY
#define PROBE_PRIORITY 0
#endif
#ifndef PROBE_EVENTS
#define PROBE_EVENTS SH_EVENTS_LIFECYCLE
#endif
#ifndef PROBE_FAIL_RESULT
#define PROBE_FAIL_RESULT SH_ERROR
#endif
#ifndef PROBE_ANSWER
#define PROBE_ANSWER SH_OK
#endif
#ifndef PROBE_COMPLETE
#define PROBE_COMPLETE 0
#endif
#ifndef PROBE_RESULT
#define PROBE_RESULT 0
#endif
#ifndef PROBE_SCENE_ANSWER
#define PROBE_SCENE_ANSWER PROBE_ANSWER
#endif
#ifndef PROBE_ABI_MIN
#define PROBE_ABI_MIN SH_ABI_VERSION_MIN
#endif
#ifndef PROBE_ABI_MAX
#define PROBE_ABI_MAX SH_ABI_VERSION
#endif

#ifndef PROBE_NO_METADATA
SH_META_ATTRIBUTES static const sh_meta_plugin plugin_meta = {
    {sizeof(sh_meta_plugin), SH_META_PLUGIN_VERSION, SH_META_MAGIC, SH_META_KIND_PLUGIN},
    PROBE_ABI_MAX, PROBE_ABI_MIN, "c", ""};
#ifndef PROBE_FLAGS
#define PROBE_FLAGS 0
#endif
#ifndef PROBE_VERSION
#define PROBE_VERSION "0.1.0"
#endif
SH_SERVICE_METADATA_FLAGS(probe_meta, PROBE_ID, "Probe", PROBE_VERSION, PROBE_EVENTS, PROBE_PRIORITY, PROBE_FLAGS);
#ifdef PROBE_DECLARE_ALSO
SH_SERVICE_METADATA_FLAGS(probe_meta_also, PROBE_DECLARE_ALSO, "Probe", PROBE_VERSION, PROBE_EVENTS, PROBE_PRIORITY, PROBE_FLAGS);
#endif
#ifdef PROBE_REQUIRES
SH_CLAIM_METADATA_ID(probe_requires, PROBE_ID, SH_CLAIM_REQUIRES, PROBE_REQUIRES);
#endif
#ifdef PROBE_REQUIRES_2
SH_CLAIM_METADATA_ID(probe_requires_2, PROBE_ID, SH_CLAIM_REQUIRES, PROBE_REQUIRES_2);
#endif
#ifdef PROBE_AFTER
SH_CLAIM_METADATA_ID(probe_after, PROBE_ID, SH_CLAIM_AFTER, PROBE_AFTER);
#endif
#ifdef PROBE_URL_CLAIM
SH_CLAIM_METADATA_ID(probe_url, PROBE_ID, SH_CLAIM_URL, PROBE_URL_CLAIM);
#endif
#ifdef PROBE_ACTIVITY_CLAIM
SH_CLAIM_METADATA_ID(probe_activity, PROBE_ID, SH_CLAIM_ACTIVITY, PROBE_ACTIVITY_CLAIM);
#endif
#ifdef PROBE_SUBSCRIBE
SH_CLAIM_METADATA_ID(probe_subscribe, PROBE_ID, SH_CLAIM_NOTIFICATION, PROBE_SUBSCRIBE);
#endif
#ifdef PROBE_SCENE_ROLE
SH_CLAIM_METADATA_ID(probe_scene_role, PROBE_ID, SH_CLAIM_SCENE_ROLE, PROBE_SCENE_ROLE);
#endif
#ifdef PROBE_SHORTCUT
SH_CLAIM_METADATA_ID(probe_shortcut, PROBE_ID, SH_CLAIM_SHORTCUT, PROBE_SHORTCUT);
#endif
#ifdef PROBE_SHORTCUT_ICON
SH_CLAIM_METADATA_ID(probe_shortcut_icon, PROBE_ID, SH_CLAIM_SHORTCUT_ICON, PROBE_SHORTCUT_ICON);
#endif
#ifdef PROBE_ANSWERS
SH_CLAIM_METADATA_ID(probe_answers, PROBE_ID, SH_CLAIM_ANSWER, PROBE_ANSWERS);
#endif
#ifdef PROBE_SETTINGS_SCHEMA
SH_CLAIM_METADATA_ID(probe_schema, PROBE_ID, SH_CLAIM_SETTINGS_SCHEMA, PROBE_SETTINGS_SCHEMA);
#endif
#ifdef PROBE_SETTINGS_SCHEMA_2
SH_CLAIM_METADATA_ID(probe_schema_2, PROBE_ID, SH_CLAIM_SETTINGS_SCHEMA, PROBE_SETTINGS_SCHEMA_2);
#endif
#endif

#ifdef PROBE_CONSTRUCTOR_MARKER
__attribute__((constructor)) static void leave_marker(void) {
    const char *path = getenv("PROBE_MARKER");
    if (path) close(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
#ifdef PROBE_CONSTRUCTOR_SLEEP_MS
    struct timespec pause = {PROBE_CONSTRUCTOR_SLEEP_MS / 1000, (PROBE_CONSTRUCTOR_SLEEP_MS % 1000) * 1000000L};
    while (nanosleep(&pause, &pause) != 0) {}
#endif
}
#endif

#ifdef PROBE_UNDEFINED
extern void servicehost_probe_missing_function(void);
#endif

static const sh_host *host;  // set in attach, on the main thread

#if PROBE_SHAPE == 2
/* What a future header's structs could look like: version 1's members, then more. */
typedef struct probe_service_v2 {
    sh_service v1;
    int32_t (*detach)(const sh_service *service);
    uint64_t v2_flags;
} probe_service_v2;
typedef struct probe_plugin_v2 {
    sh_plugin v1;
    const char *v2_homepage;
    uint64_t v2_reserved[4];
} probe_plugin_v2;
/* A host table member a v2 header would append after register_for_remote_notifications. */
typedef struct probe_host_v2 {
    sh_host v1;
    int32_t (*v2_open_settings)(const sh_host *host);
} probe_host_v2;
#endif

static int32_t probe_attach(const sh_service *service, const sh_host *h) {
    (void)service;
    host = h;
#if PROBE_SHAPE == 2
    char line[160];
    snprintf(line, sizeof line, "probe %s: shape 2 attached: host table %u bytes, v2 member %s", PROBE_ID, h->size,
             SH_HAS_MEMBER(h, probe_host_v2, v2_open_settings) ? "present" : "absent");
    h->log(h, SH_LOG_INFO, line);
#endif
    return SH_OK;
}

static void sleep_ms(long ms) {
    struct timespec pause_for = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause_for, NULL);
}

/* The JSON a completion carries: a request's reply, else none. Written on the main thread
 * before the completion is handed to another thread. */
static char reply_json[2048];
static size_t reply_len;

static void *complete_later(void *completion) {
    sleep_ms(50);
    const sh_completion *c = completion;
    c->complete(c, PROBE_RESULT, reply_len ? reply_json : NULL, reply_len);
    return NULL;
}

/* PROBE_COMPLETE 4: the completion held until the next event. */
static const sh_completion *held;

static void answer(const sh_completion *c) {
    const char *json = reply_len ? reply_json : NULL;
    if (PROBE_COMPLETE == 4) {
        held = c;
        return;
    }
    switch (PROBE_COMPLETE) {
    case 0: c->complete(c, PROBE_RESULT, json, reply_len); break;
    case 1: break;  // never
    case 2: c->complete(c, PROBE_RESULT, json, reply_len); c->complete(c, PROBE_RESULT, json, reply_len); break;
    case 3: {
        pthread_t thread;
        pthread_create(&thread, NULL, complete_later, (void *)c);
        pthread_detach(thread);
        break;
    }
    }
}

/* " scene=NAME role=ROLE scene-state=S configuration=C settings=JSON" */
static int describe_scene(const sh_scene *scene, char *out, size_t size) {
    return snprintf(out, size, " scene=%s role=%s scene-state=%d configuration=%s settings=%s", scene->name,
                    scene->role, scene->state, scene->configuration ? scene->configuration : "-",
                    scene->settings_json ? scene->settings_json : "-");
}

/* Connection options: " urls=U1,U2 activities=T1,T2 options-flags=F url-flags=F" */
static void describe_options(const sh_scene_connection_options *o, char *out, size_t size) {
    size_t used = (size_t)snprintf(out, size, " urls=");
    for (size_t i = 0; i < o->url_context_count && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? "," : "", o->url_contexts[i]->url);
    if (used < size) used += (size_t)snprintf(out + used, size - used, " activities=");
    for (size_t i = 0; i < o->user_activity_count && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? "," : "", o->user_activities[i]->type);
    if (used < size)
        used += (size_t)snprintf(out + used, size - used, " options-flags=%u url-flags=%u", o->flags,
                 o->url_context_count ? o->url_contexts[0]->flags
                                      : (o->user_activity_count ? o->user_activities[0]->flags : 0u));
    const sh_user_activity *r = o->size >= sizeof *o ? o->restoration_activity : NULL;
    if (used < size)
        snprintf(out + used, size - used, " restoration=%s restoration-info=%s", r ? r->type : "-",
                 r && r->user_info_json ? r->user_info_json : "-");
}

#ifdef PROBE_RESTORATION
static void save_restoration(const sh_scene *scene) {
#ifdef PROBE_RESTORATION_PAD
    static char json[PROBE_RESTORATION_PAD + 64];
    int used = snprintf(json, sizeof json, "{\"type\":\"test.padded\",\"userInfo\":{\"pad\":\"");
    while (used < PROBE_RESTORATION_PAD) json[used++] = 'x';
    snprintf(json + used, sizeof json - (size_t)used, "\"}}");
#else
    const char *json = PROBE_RESTORATION;
#endif
    char line[200];
    int32_t result = host->set_scene_restoration(host, scene->id, json, strlen(json));
    snprintf(line, sizeof line, "probe %s: restoration saved -> %d", PROBE_ID, result);
    host->log(host, SH_LOG_INFO, line);
}
#endif

#ifdef PROBE_CONFIGURATION
static int32_t configure(const sh_scene_connection *connection) {
    sh_scene_configuration *c = connection->configuration;
    snprintf(c->name, sizeof c->name, "%s", PROBE_CONFIGURATION);
#ifdef PROBE_CONFIGURATION_ROLE
    snprintf(c->role, sizeof c->role, "%s", PROBE_CONFIGURATION_ROLE);
#endif
#ifdef PROBE_CONFIGURATION_SETTINGS
    int length = snprintf(c->settings, c->settings_capacity, "%s", PROBE_CONFIGURATION_SETTINGS);
    c->settings_len = length < 0 ? 0 : (size_t)length;
#endif
    return SH_OK;
}
#endif

#ifdef PROBE_CHECK_NUL
/* Appends " NAME-nul=1" when text[length] is the NUL the header promises, else " NAME-nul=0". */
static void terminated(char *out, size_t size, const char *name, const char *text, size_t length) {
    size_t used = strlen(out);
    if (used < size) snprintf(out + used, size - used, " %s-nul=%d", name, text[length] == 0);
}
#endif

static void describe(const sh_event *event, char *out, size_t size) {
    out[0] = 0;
    switch (event->kind) {
    case SH_EVENT_CONFIGURATION_FOR_CONNECTING:
    case SH_EVENT_SCENE_WILL_CONNECT: {
        const sh_scene_connection *c = event->data;
        int used = describe_scene(c->scene, out, size);
        if (used > 0 && (size_t)used < size) describe_options(c->options, out + used, size - (size_t)used);
        break;
    }
    case SH_EVENT_SCENE_WILL_ENTER_FOREGROUND:
    case SH_EVENT_SCENE_DID_BECOME_ACTIVE:
    case SH_EVENT_SCENE_WILL_RESIGN_ACTIVE:
    case SH_EVENT_SCENE_DID_ENTER_BACKGROUND:
    case SH_EVENT_SCENE_DID_DISCONNECT:
        describe_scene(event->data, out, size);
        break;
    case SH_EVENT_SCENE_OPEN_URL_CONTEXTS: {
        const sh_scene_open_url *u = event->data;
        int used = describe_scene(u->scene, out, size);
        if (used > 0 && (size_t)used < size)
            snprintf(out + used, size - (size_t)used, " url=%s flags=%u", u->url->url, u->url->flags);
        break;
    }
    case SH_EVENT_SCENE_CONTINUE_USER_ACTIVITY: {
        const sh_scene_user_activity *a = event->data;
        int used = describe_scene(a->scene, out, size);
        if (used > 0 && (size_t)used < size)
            snprintf(out + used, size - (size_t)used, " type=%s flags=%u", a->activity->type, a->activity->flags);
        break;
    }
    case SH_EVENT_WILL_FINISH_LAUNCHING:
    case SH_EVENT_DID_FINISH_LAUNCHING: {
        const sh_launch_options *o = event->data;
        snprintf(out, size, " launch flags=%u settings=%.*s url=%s activity=%s notification=%s", o->flags,
                 (int)o->settings_len, o->settings_json ? o->settings_json : "", o->url ? o->url->url : "-",
                 o->activity ? o->activity->type : "-", o->notification ? o->notification->json : "-");
#ifdef PROBE_CHECK_NUL
        if (o->settings_json) terminated(out, size, "settings", o->settings_json, o->settings_len);
#endif
        break;
    }
    case SH_EVENT_NOTIFICATION: {
        const sh_notification *n = event->data;
        // Version 2's tape, read only when the host's struct has it.
        const sh_json *tape = n->size >= SH_NOTIFICATION_SIZE_V2 ? n->parsed : NULL;
        const sh_json_node *first = tape && tape->count > 1 && tape->nodes[0].type == SH_JSON_OBJECT ? &tape->nodes[1] : NULL;
        snprintf(out, size, " name=%s sender=%s nodes=%zu key=%s json=%.*s", n->name, n->sender, tape ? tape->count : 0,
                 first ? first->string : "-", (int)n->json_len, n->json ? n->json : "");
#ifdef PROBE_CHECK_NUL
        if (n->json) terminated(out, size, "json", n->json, n->json_len);
#endif
        break;
    }
    case SH_EVENT_OPEN_URL: {
        const sh_open_url *u = event->data;
        snprintf(out, size, " url=%s scheme=%s host=%s launch=%u", u->url, u->scheme, u->host,
                 u->flags & SH_FROM_LAUNCH);
        break;
    }
    case SH_EVENT_PERFORM_ACTION_FOR_SHORTCUT_ITEM: {
        const sh_shortcut_item *item = event->data;
        snprintf(out, size, " shortcut=%s title=%s launch=%u", item->id, item->title, item->flags & SH_FROM_LAUNCH);
        break;
    }
    case SH_EVENT_CONTINUE_USER_ACTIVITY: {
        const sh_user_activity *a = event->data;
        snprintf(out, size, " type=%s url=%s info=%s launch=%u", a->type, a->webpage_url ? a->webpage_url : "-",
                 a->user_info_json ? a->user_info_json : "-", a->flags & SH_FROM_LAUNCH);
        break;
    }
    case SH_EVENT_WILL_PRESENT_NOTIFICATION:
    case SH_EVENT_DID_RECEIVE_NOTIFICATION_RESPONSE:
    case SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION: {
        const sh_push *p = event->data;
        snprintf(out, size, " action=%s launch=%u nodes=%zu json=%s", p->action_id ? p->action_id : "-",
                 p->flags & SH_FROM_LAUNCH, p->parsed->count, p->json);
        break;
    }
    case SH_EVENT_DID_REGISTER_FOR_REMOTE_NOTIFICATIONS:
        snprintf(out, size, " token=%s", ((const sh_device_token *)event->data)->hex);
        break;
    case SH_EVENT_DID_CHANGE_NOTIFICATION_AUTHORIZATION: {
        const sh_notification_settings *n = event->data;
        snprintf(out, size, " status=%d allowed=%u", n->status, n->allowed);
        break;
    }
    case SH_EVENT_DID_FAIL_TO_REGISTER_FOR_REMOTE_NOTIFICATIONS:
        snprintf(out, size, " error=%s", ((const sh_error_info *)event->data)->message);
        break;
    case SH_EVENT_REQUEST: {
        const sh_request *r = event->data;
        snprintf(out, size, " request=%s from=%s nodes=%zu json=%.*s", r->name, r->from,
                 r->parsed ? r->parsed->count : 0, (int)r->json_len, r->json ? r->json : "-");
        break;
    }
    case SH_EVENT_DEPENDENCY_WILL_STOP:
    case SH_EVENT_DEPENDENCY_DID_START: {
        const sh_dependency *d = event->data;
        snprintf(out, size, " dependency=%s version=%s", d->id, d->service_version);
        break;
    }
    case SH_EVENT_DID_CHANGE_SETTINGS: {
        const sh_settings_change *c = event->data;
        snprintf(out, size, " old=%.*s new=%.*s", (int)(c->old_json ? c->old_len : 1), c->old_json ? c->old_json : "-",
                 (int)(c->new_json ? c->new_len : 1), c->new_json ? c->new_json : "-");
        break;
    }
    }
}

#ifdef PROBE_ASK_ON_KIND
static void log_reply(void *context, int32_t result, const char *json, size_t json_len) {
    (void)context;
    char line[700];
    snprintf(line, sizeof line, "probe %s: reply %d %.*s", PROBE_ID, result, (int)json_len, json ? json : "-");
    host->log(host, SH_LOG_INFO, line);
}
#endif

#ifdef PROBE_REPORT_HEALTH
static void *report_health(void *unused) {
    (void)unused;
    const sh_health_reporting *health = host->get_extension(host, SH_HEALTH_EXTENSION_ID);
    if (!health) return NULL;
    if (access(PROBE_REPORT_HEALTH, F_OK) == 0)
        health->report(host, SH_HEALTH_UNHEALTHY, "reported unhealthy");
    else
        health->report(host, SH_HEALTH_HEALTHY, NULL);
    return NULL;
}
#endif

#ifdef PROBE_STATE
static int generation;  // main thread only

static void restore(const sh_event *event) {
    if (event->kind != SH_EVENT_WILL_FINISH_LAUNCHING) return;
    const sh_launch_options *o = event->data;
    if (o->size < SH_LAUNCH_OPTIONS_SIZE_V2 || !o->restored_state) return;
    char line[300];
    snprintf(line, sizeof line, "probe %s: restored %.*s from %s %s", PROBE_ID,
             (int)(o->restored_state_len > 100 ? 100 : o->restored_state_len), (const char *)o->restored_state,
             o->restored_from_id, o->restored_from_version);
    host->log(host, SH_LOG_INFO, line);
    sscanf((const char *)o->restored_state, "gen=%d", &generation);
}

static void hand_over(const sh_event *event) {
#ifdef PROBE_STATE_PAD
    char *state = malloc(PROBE_STATE_PAD);
    memset(state, 's', PROBE_STATE_PAD);
    event->completion->complete(event->completion, SH_OK, state, PROBE_STATE_PAD);
    free(state);
#else
    char state[32];
    int length = snprintf(state, sizeof state, "gen=%d", generation + 1);
    event->completion->complete(event->completion, SH_OK, state, (size_t)length);
#endif
}
#endif

static int32_t probe_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
#ifdef PROBE_UNDEFINED
    servicehost_probe_missing_function();
#endif
    char detail[700], line[900];
    describe(event, detail, sizeof detail);
    snprintf(line, sizeof line, "probe %s: event %u state %d host-state %d seq %llu%s", PROBE_ID, event->kind,
             event->app_state, host->app_state(host), (unsigned long long)event->seq, detail);
    host->log(host, SH_LOG_INFO, line);
#ifdef PROBE_POST_ON_KIND
    if (event->kind == PROBE_POST_ON_KIND) host->post(host, PROBE_POST_NAME, "{\"from\":\"" PROBE_ID "\"}", 10 + sizeof PROBE_ID);
#endif
    if (held) {
        held->complete(held, PROBE_RESULT, NULL, 0);
        held = NULL;
    }
#ifdef PROBE_ASK_ON_KIND
#ifdef PROBE_ASK_PAD
    if (event->kind == PROBE_ASK_ON_KIND) {
        char *pad = malloc(PROBE_ASK_PAD + 16);
        int used = snprintf(pad, 16, "{\"pad\":\"");
        memset(pad + used, 'x', PROBE_ASK_PAD);
        memcpy(pad + used + PROBE_ASK_PAD, "\"}", 2);
        host->request(host, PROBE_ASK_NAME, pad, (size_t)used + PROBE_ASK_PAD + 2, log_reply, NULL);
        free(pad);
    }
#else
    if (event->kind == PROBE_ASK_ON_KIND) host->request(host, PROBE_ASK_NAME, "{\"n\":1}", 7, log_reply, NULL);
#endif
#endif
#ifdef PROBE_CRASH_KIND
    if (event->kind == PROBE_CRASH_KIND) abort();
#endif
    reply_len = 0;
    if (event->kind == SH_EVENT_REQUEST) {
        const sh_request *r = event->data;
        int used = snprintf(reply_json, sizeof reply_json, "{\"by\":\"%s\",\"from\":\"%s\",\"name\":\"%s\",\"payload\":%.*s}",
                            PROBE_ID, r->from, r->name, (int)(r->json ? r->json_len : 4), r->json ? r->json : "null");
        reply_len = used > 0 && (size_t)used < sizeof reply_json ? (size_t)used : 0;
    }
#ifdef PROBE_REGISTER_ON_KIND
    if (event->kind == PROBE_REGISTER_ON_KIND) host->register_for_remote_notifications(host);
#endif
#ifdef PROBE_MARK_KIND
    if (event->kind == PROBE_MARK_KIND) close(open(PROBE_MARK_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0644));
#endif
#ifdef PROBE_REQUEST_AUTHORIZATION
    if (event->kind == SH_EVENT_DID_FINISH_LAUNCHING) {
        char answer[120];
        snprintf(answer, sizeof answer, "probe %s: authorization request -> %d", PROBE_ID,
                 host->request_authorization(host, PROBE_REQUEST_AUTHORIZATION));
        host->log(host, SH_LOG_INFO, answer);
    }
#endif
#ifdef PROBE_RESTORATION
    if (event->kind == SH_EVENT_SCENE_DID_ENTER_BACKGROUND) save_restoration(event->data);
#endif
#ifdef PROBE_SLEEP_KIND
    if (event->kind == PROBE_SLEEP_KIND) sleep_ms(PROBE_SLEEP_MS);
#endif
#ifdef PROBE_HANG_KIND
    if (event->kind == PROBE_HANG_KIND) for (;;) pause();
#endif
#ifdef PROBE_FAIL_KIND
    if (event->kind == PROBE_FAIL_KIND) return PROBE_FAIL_RESULT;
#endif
#ifdef PROBE_REPORT_HEALTH
    if (event->kind == SH_EVENT_NOTIFICATION) {
        pthread_t thread;
        pthread_create(&thread, NULL, report_health, NULL);
        pthread_detach(thread);
    }
#endif
#ifdef PROBE_STATE
    restore(event);
    if (event->kind == SH_EVENT_WILL_RELOAD && event->completion) {
        hand_over(event);
        return SH_OK;
    }
#endif
#ifdef PROBE_HEALTH_MARKER
    if (event->kind == SH_EVENT_HEALTH_CHECK && event->completion) {
        static const char reason[] = "\"marker present\"";
        if (access(PROBE_HEALTH_MARKER, F_OK) == 0)
            event->completion->complete(event->completion, SH_HEALTH_UNHEALTHY, reason, sizeof reason - 1);
        else
            event->completion->complete(event->completion, SH_HEALTH_HEALTHY, NULL, 0);
        return SH_OK;
    }
#endif
    if (event->completion) answer(event->completion);
    if (event->kind == SH_EVENT_OPEN_URL || event->kind == SH_EVENT_CONTINUE_USER_ACTIVITY ||
        event->kind == SH_EVENT_PERFORM_ACTION_FOR_SHORTCUT_ITEM)
        return PROBE_ANSWER;
    if (event->kind == SH_EVENT_SCENE_OPEN_URL_CONTEXTS || event->kind == SH_EVENT_SCENE_CONTINUE_USER_ACTIVITY)
        return PROBE_SCENE_ANSWER;
    if (event->kind == SH_EVENT_CONFIGURATION_FOR_CONNECTING) {
#ifdef PROBE_CONFIGURATION
        return configure(event->data);
#else
        return SH_FALSE;
#endif
    }
    return SH_OK;
}

#ifdef PROBE_EXPORT_OTHER_ID
#define PROBE_RUNTIME_ID "test.undeclared"
#else
#define PROBE_RUNTIME_ID PROBE_ID
#endif

#ifndef PROBE_SHAPE
#define PROBE_SHAPE 0
#endif

#if PROBE_SHAPE == 2
static const probe_service_v2 probe_service_grown = {
    {sizeof(probe_service_v2), 2, PROBE_RUNTIME_ID, NULL, probe_attach, probe_handle_event}, NULL, ~UINT64_C(0),
};
static const sh_service *const services[] = {&probe_service_grown.v1};
static probe_plugin_v2 plugin_grown = {
    {sizeof(probe_plugin_v2), 2, PROBE_ABI_MAX, 1, services, NULL}, "https://example.com", {1, 2, 3, 4},
};
static sh_plugin *const answer_plugin = &plugin_grown.v1;
#else
#if PROBE_SHAPE == 1
#define PROBE_SERVICE_SIZE SH_SERVICE_SIZE_V1
#define PROBE_PLUGIN_SIZE SH_PLUGIN_SIZE_V1
#else
#define PROBE_SERVICE_SIZE sizeof(sh_service)
#define PROBE_PLUGIN_SIZE sizeof(sh_plugin)
#endif
static const sh_service probe_service = {
    PROBE_SERVICE_SIZE, SH_SERVICE_VERSION, PROBE_RUNTIME_ID, NULL, probe_attach, probe_handle_event,
};
#ifdef PROBE_EXPORT_TWICE
static const sh_service *const services[] = {&probe_service, &probe_service};
#else
static const sh_service *const services[] = {&probe_service};
#endif
static sh_plugin plugin = {
    PROBE_PLUGIN_SIZE, SH_PLUGIN_VERSION, PROBE_ABI_MAX, sizeof services / sizeof services[0], services, NULL,
};
static sh_plugin *const answer_plugin = &plugin;
#endif

/* Negotiates as the header says: the newest version in both the offer and this file's range. */
SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
#ifdef PROBE_ANSWER_ABI
    (void)offer;
    answer_plugin->abi_version = PROBE_ANSWER_ABI;
#else
    uint32_t chosen = offer->abi_max < PROBE_ABI_MAX ? offer->abi_max : PROBE_ABI_MAX;
    if (chosen < offer->abi_min || chosen < PROBE_ABI_MIN) {
        answer_plugin->abi_version = PROBE_ABI_MAX;
        answer_plugin->service_count = 0;
        answer_plugin->error = "no ABI version in common";
    } else {
        answer_plugin->abi_version = chosen;
    }
#endif
    return answer_plugin;
}
