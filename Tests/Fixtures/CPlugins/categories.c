// A C service using the notifications extension (issue 39): in didFinishLaunching it registers
// the notification categories CATEGORIES_JSON (a C string literal of set_categories' JSON) and
// logs "categories set RESULT" (the SH_* code; "categories unsupported" without the extension).
#include <servicehost.h>
#include <string.h>
#include <stdio.h>

#ifndef CATEGORIES_JSON
#define CATEGORIES_JSON "{}"
#endif

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(categories_meta, "test.categories", "Notification categories", "1.0.0",
                    SH_EVENTS_LIFECYCLE, 0);

static const sh_host *host; /* set in attach, on the main thread */

static int32_t categories_attach(const sh_service *service, const sh_host *h) {
    (void)service;
    host = h;
    return SH_OK;
}

static int32_t categories_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    if (event->kind != SH_EVENT_DID_FINISH_LAUNCHING) return SH_OK;
    const sh_notifications *notifications =
        (const sh_notifications *)host->get_extension(host, SH_NOTIFICATIONS_ID);
    if (notifications == NULL || notifications->size < SH_NOTIFICATIONS_SIZE_V1) {
        host->log(host, SH_LOG_INFO, "categories unsupported");
        return SH_OK;
    }
    char line[64];
    snprintf(line, sizeof line, "categories set %d",
             (int)notifications->set_categories(host, CATEGORIES_JSON, strlen(CATEGORIES_JSON)));
    host->log(host, SH_LOG_INFO, line);
    return SH_OK;
}

static const sh_service categories_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, categories_meta.id, NULL, categories_attach, categories_handle_event,
};
static const sh_service *const services[] = {&categories_service};
static sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    if (offer == NULL || offer->abi_min > SH_ABI_VERSION || offer->abi_max < SH_ABI_VERSION_MIN) {
        plugin.service_count = 0;
        plugin.error = "test.categories: no ABI version in common with the host";
        return &plugin;
    }
    plugin.abi_version = offer->abi_max < SH_ABI_VERSION ? offer->abi_max : SH_ABI_VERSION;
    return &plugin;
}
