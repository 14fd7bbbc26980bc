// The C service of each host in scripts/bench --fleet (issue 17): on willPresentNotification
// it writes "fleet N\n" to the host's stdout, N the push's "n" member, with one write(2), and
// completes at once. servicehost-bench reads every host's stdout and times the line's arrival.
#include <servicehost.h>
#include <string.h>
#include <unistd.h>

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(fleet_meta, "bench.fleet-service", "Fleet", "1.0.0",
                    SH_EVENTS_LIFECYCLE | SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION), 0);

static int32_t fleet_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    if (event->kind == SH_EVENT_WILL_PRESENT_NOTIFICATION && event->data) {
        const sh_push *push = event->data;
        const char *n = push->json ? strstr(push->json, "\"n\":") : NULL;
        if (n) {
            char line[32] = "fleet ";
            size_t length = 6;
            for (n += 4; *n >= '0' && *n <= '9' && length < sizeof line - 2; n++) line[length++] = *n;
            line[length++] = '\n';
            (void)!write(1, line, length);
        }
    }
    if (event->completion) event->completion->complete(event->completion, SH_PRESENT_BANNER, NULL, 0);
    return SH_OK;
}

static const sh_service fleet_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, fleet_meta.id, NULL, NULL, fleet_handle_event,
};
static const sh_service *const services[] = {&fleet_service};
static const sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    (void)offer;
    return &plugin;
}
