/* Earlier public example: README.md at commit cdaef10, the file `audit.c` it shows, copied unchanged below.
 */
#include <servicehost.h>

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(audit_meta, "com.example.audit", "Audit", "1.0.0", SH_EVENTS_LIFECYCLE, 0);
SH_CLAIM_METADATA(audit_needs_logger, audit_meta, SH_CLAIM_REQUIRES,
                  "dev.servicehost.logger >=1.2 <2");
SH_CLAIM_METADATA(audit_after_queue, audit_meta, SH_CLAIM_AFTER,
                  "dev.servicehost.offline-queue");

static int32_t audit_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    (void)event;
    return SH_OK;
}

static const sh_service audit_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, audit_meta.id, NULL, NULL, audit_handle_event,
};
static const sh_service *const services[] = {&audit_service};
static sh_plugin plugin = {sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    (void)offer;
    return &plugin;
}
