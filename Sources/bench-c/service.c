// The smallest C service, for scripts/bench: handles every lifecycle event and does
// nothing, didReceiveMemoryWarning (so row 4's requests reach every service), and
// willPresentNotification (the payload row), which it completes at once
// without reading the payload. scripts/bench compiles it once with cc; servicehost-bench then writes N copies,
// each with the id placeholder below rewritten to a distinct id of the same length
// (SH_SERVICE_METADATA keeps the id in one place: the runtime id points at it).
#include <servicehost.h>

SH_PLUGIN_METADATA("c");
// -DBENCH_LAZY builds the lazy template of row 11: opened by its first push, not at start.
#ifdef BENCH_LAZY
#define BENCH_FLAGS SH_META_SERVICE_LAZY
#else
#define BENCH_FLAGS 0
#endif
// -DBENCH_HEALTH builds row 3's health-check template: it answers healthCheck (healthy) too.
#ifdef BENCH_HEALTH
#define BENCH_HEALTH_EVENTS SH_EVENT_BIT(SH_EVENT_HEALTH_CHECK)
#else
#define BENCH_HEALTH_EVENTS 0
#endif
SH_SERVICE_METADATA_FLAGS(bench_meta, "bench.c-service.s0000000", "Bench", "1.0.0",
                          SH_EVENTS_LIFECYCLE | SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_MEMORY_WARNING) |
                              SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION) | BENCH_HEALTH_EVENTS,
                          0, BENCH_FLAGS);

static int32_t bench_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    int32_t answer = event->kind == SH_EVENT_HEALTH_CHECK ? SH_HEALTH_HEALTHY : SH_PRESENT_BANNER;
    if (event->completion) event->completion->complete(event->completion, answer, NULL, 0);
    return SH_OK;
}

static const sh_service bench_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, bench_meta.id, NULL, NULL, bench_handle_event,
};
static const sh_service *const services[] = {&bench_service};
static const sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    (void)offer;
    return &plugin;
}
