/* Earlier public example: Plugins/Uptime/uptime.c at commit 68da293 (2026-11-23), copied unchanged below.
 */
// Uptime: a bundled service written in plain C against servicehost.h alone.
// It measures how long the app spends in each state and reports it at termination.
#include <servicehost.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(uptime_meta, "dev.servicehost.uptime", "Uptime", "1.0.0",
                    SH_EVENTS_LIFECYCLE | SH_EVENT_BIT(SH_EVENT_NOTIFICATION), 0);
// `host ctl post uptime.report '{"label":"…"}'` logs the figures so far (the id is not repeated:
// the claim names the metadata variable).
SH_CLAIM_METADATA(uptime_report, uptime_meta, SH_CLAIM_NOTIFICATION, "uptime.report");

// Touched only from the host's main thread (attach and handle_event are [main-thread]).
static struct {
    const sh_host *host;
    double launched;       // seconds, CLOCK_MONOTONIC
    double entered;        // when the current state began
    int32_t state;         // sh_app_state since `entered`
    double seconds[4];     // time spent per sh_app_state
} uptime;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void enter_state(int32_t state) {
    double t = now();
    if (uptime.state >= 0 && uptime.state < 4) uptime.seconds[uptime.state] += t - uptime.entered;
    uptime.state = state;
    uptime.entered = t;
}

static int32_t uptime_attach(const sh_service *service, const sh_host *host) {
    (void)service;
    uptime.host = host;
    return SH_OK;
}

// The string member `key` of the object at the tape's root, or NULL: read from the host's
// parsed tape (json.h), without parsing any text.
static const char *member_string(const sh_json *tape, const char *key) {
    if (!tape || tape->count == 0 || tape->nodes[0].type != SH_JSON_OBJECT) return NULL;
    size_t at = 1;
    for (uint32_t i = 0; i < tape->nodes[0].count; i++) {
        const sh_json_node *name = &tape->nodes[at], *value = &tape->nodes[at + 1];
        if (strcmp(name->string, key) == 0) return value->type == SH_JSON_STRING ? value->string : NULL;
        at = value->next;
    }
    return NULL;
}

static void report(const sh_notification *n) {
    // sh_notification version 2 carries the parsed payload; a version 1 host's struct ends
    // before it, so it is read only when `size` covers it.
    const sh_json *tape = n->size >= SH_NOTIFICATION_SIZE_V2 ? n->parsed : NULL;
    const char *label = member_string(tape, "label");
    double t = now();
    double seconds[4] = {uptime.seconds[0], uptime.seconds[1], uptime.seconds[2], uptime.seconds[3]};
    if (uptime.state >= 0 && uptime.state < 4) seconds[uptime.state] += t - uptime.entered;
    char line[200];
    snprintf(line, sizeof line, "%s%sup %.3f s: active %.3f s, inactive %.3f s, background %.3f s", label ? label : "",
             label ? ": " : "", t - uptime.launched, seconds[SH_APP_ACTIVE], seconds[SH_APP_INACTIVE],
             seconds[SH_APP_BACKGROUND]);
    uptime.host->log(uptime.host, SH_LOG_INFO, line);
}

static int32_t uptime_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    char line[160];
    switch (event->kind) {
    case SH_EVENT_NOTIFICATION:
        report(event->data);
        return SH_OK;
    case SH_EVENT_WILL_FINISH_LAUNCHING:
        uptime.launched = now();
        uptime.entered = uptime.launched;
        uptime.state = SH_APP_INACTIVE;
        return SH_OK;
    case SH_EVENT_DID_FINISH_LAUNCHING:
    case SH_EVENT_WILL_RESIGN_ACTIVE:
    case SH_EVENT_WILL_ENTER_FOREGROUND:
        enter_state(SH_APP_INACTIVE);
        return SH_OK;
    case SH_EVENT_DID_BECOME_ACTIVE:
        enter_state(SH_APP_ACTIVE);
        return SH_OK;
    case SH_EVENT_DID_ENTER_BACKGROUND:
        enter_state(SH_APP_BACKGROUND);
        return SH_OK;
    case SH_EVENT_WILL_TERMINATE:
        enter_state(SH_APP_NOT_RUNNING);
        snprintf(line, sizeof line, "up %.3f s: active %.3f s, inactive %.3f s, background %.3f s",
                 now() - uptime.launched, uptime.seconds[SH_APP_ACTIVE], uptime.seconds[SH_APP_INACTIVE],
                 uptime.seconds[SH_APP_BACKGROUND]);
        uptime.host->log(uptime.host, SH_LOG_INFO, line);
        return SH_OK;
    default:
        return SH_UNSUPPORTED;
    }
}

static const sh_service uptime_service = {
    .size = sizeof(sh_service),
    .version = SH_SERVICE_VERSION,
    .id = uptime_meta.id,  // written once, in the metadata record
    .context = NULL,
    .attach = uptime_attach,
    .handle_event = uptime_handle_event,
};

static const sh_service *const uptime_services[] = {&uptime_service};

static const sh_plugin uptime_plugin = {
    .size = sizeof(sh_plugin),
    .version = SH_PLUGIN_VERSION,
    .abi_version = SH_ABI_VERSION,
    .service_count = 1,
    .services = uptime_services,
    .error = NULL,
};

// No version in common: no services, and the newest version this plugin speaks, so the host
// refuses it naming both (plugin.h).
static const sh_plugin uptime_no_common_version = {
    .size = sizeof(sh_plugin),
    .version = SH_PLUGIN_VERSION,
    .abi_version = SH_ABI_VERSION,
    .service_count = 0,
    .services = NULL,
    .error = "uptime: no ABI version in common with the host",
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    // Negotiated from the offer: the newest ABI version both speak. This plugin knows only
    // versions up to SH_ABI_VERSION (its structs' members are read by `size`, so an older one
    // in the range would do too).
    if (!offer || offer->size < SH_HOST_OFFER_SIZE_V1) return &uptime_no_common_version;
    uint32_t newest = offer->abi_max < SH_ABI_VERSION ? offer->abi_max : SH_ABI_VERSION;
    if (newest < offer->abi_min || newest < SH_ABI_VERSION_MIN) return &uptime_no_common_version;
    // One version exists today (1), so the plugin struct is constant: with more, answer `newest`.
    return &uptime_plugin;
}
