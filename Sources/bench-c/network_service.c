// The service of row 13's network line (issue 38): subscribed to the host's `network.changed`
// notification, it writes "network online\n" or "network offline\n" to the host's stdout with
// one write(2) for each one it receives. servicehost-bench reads the host's stdout and times the
// line's arrival from the route's removal.
#include <servicehost.h>
#include <string.h>
#include <unistd.h>

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(network_meta, "bench.network-service", "Network", "1.0.0",
                    SH_EVENTS_LIFECYCLE | SH_EVENT_BIT(SH_EVENT_NOTIFICATION), 0);
SH_CLAIM_METADATA(network_subscribe, network_meta, SH_CLAIM_NOTIFICATION, "network.changed");

static int32_t network_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    if (event->kind == SH_EVENT_NOTIFICATION && event->data) {
        const sh_notification *notification = event->data;
        // The payload is {"interface": …, "online": true|false}: the member's value is all it reads.
        const char *online = notification->json ? strstr(notification->json, "\"online\":true") : NULL;
        const char *line = online ? "network online\n" : "network offline\n";
        (void)!write(1, line, strlen(line));
    }
    return SH_OK;
}

static const sh_service network_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, network_meta.id, NULL, NULL, network_handle_event,
};
static const sh_service *const services[] = {&network_service};
static const sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    (void)offer;
    return &plugin;
}
