/* Earlier public example: the SH_CLAIM_METADATA_ID example in a comment of
 * Sources/ServiceABI/include/servicehost/metadata.h at commit 68da293, in a whole plugin: its lines copied unchanged
 * (between "header" comments), the rest written around them.
 */
#include <servicehost.h>

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(links_meta, "com.example.links", "Links", "1.0.0", SH_EVENT_BIT(SH_EVENT_OPEN_URL), 0);
/* header */
SH_CLAIM_METADATA_ID(links_url, "com.example.links", SH_CLAIM_URL, "myapp");
/* header end */

static int32_t handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    (void)event;
    return SH_OK;
}

static const sh_service service = {
    sizeof(sh_service), SH_SERVICE_VERSION, links_meta.id, NULL, NULL, handle_event,
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
