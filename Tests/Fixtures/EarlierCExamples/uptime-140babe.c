/* Earlier public example: Plugins/Uptime/uptime.c at commit 140babe (2026-11-22), copied unchanged below.
 */
// Uptime: a bundled service written in plain C against servicehost.h alone.
// It measures how long the app spends in each state and reports it at termination.
#include <servicehost.h>
#include <stdio.h>
#include <time.h>

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(uptime_meta, "dev.servicehost.uptime", "Uptime", "1.0.0",
                    SH_EVENTS_LIFECYCLE, 0);

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

static int32_t uptime_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    char line[160];
    switch (event->kind) {
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

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    // This plugin speaks exactly SH_ABI_VERSION; answer it even when the host does not,
    // and the host refuses the plugin naming both versions.
    (void)offer;
    return &uptime_plugin;
}
