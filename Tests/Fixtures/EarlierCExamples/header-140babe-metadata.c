/* Earlier public example: the SH_PLUGIN_METADATA and SH_SERVICE_METADATA example in a comment of
 * Sources/ServiceABI/include/servicehost/metadata.h at commit 140babe, in a whole plugin: its lines copied unchanged
 * (between "header" comments), the rest written around them.
 */
#include <servicehost.h>

/* header */
SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(uptime_meta, "dev.servicehost.uptime", "Uptime",
                    "1.0.0", SH_EVENTS_LIFECYCLE, 0);
/* header end */

static int32_t handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    (void)event;
    return SH_OK;
}

static const sh_service service = {
    sizeof(sh_service), SH_SERVICE_VERSION, uptime_meta.id, NULL, NULL, handle_event,
};
static const sh_service *const services[] = {&service};
static sh_plugin plugin = {sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL};

/* header: the entry point's declaration, plugin.h since 140babe */
SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer)
/* header end */
{
    (void)offer;
    return &plugin;
}
