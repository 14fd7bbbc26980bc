/* Earlier public example: Tests/Fixtures/HelloC/hello.c at commit 4297005 (2026-11-23), copied unchanged below.
 * README.md showed the same file (hello.c) at commit 4297005.
 */
#include <servicehost.h>
#include <stdio.h>

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(hello_meta, "com.example.hello-c", "Hello C", "1.0.0",
                    SH_EVENTS_LIFECYCLE, 0);

static const sh_host *host;  /* set in attach, on the main thread */

static int32_t hello_attach(const sh_service *service, const sh_host *h) {
    (void)service;
    host = h;
    return SH_OK;
}

static int32_t hello_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    char line[64];
    snprintf(line, sizeof line, "hello-c: event %u", event->kind);
    host->log(host, SH_LOG_INFO, line);
    return SH_OK;
}

static const sh_service hello_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, hello_meta.id, NULL, hello_attach, hello_handle_event,
};
static const sh_service *const services[] = {&hello_service};
static sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
};

/* Negotiate: the newest ABI version both sides speak, or no services and the reason. */
SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    if (offer == NULL || offer->abi_min > SH_ABI_VERSION || offer->abi_max < SH_ABI_VERSION_MIN) {
        plugin.service_count = 0;
        plugin.error = "hello-c: no ABI version in common with the host";
        return &plugin;
    }
    plugin.abi_version = offer->abi_max < SH_ABI_VERSION ? offer->abi_max : SH_ABI_VERSION;
    return &plugin;
}
