/* Earlier public example: README.md at commit 42037fd (a claim naming its service by the
 * metadata variable), in a whole plugin: its two lines copied unchanged (between "README"
 * comments), the rest written around them.
 */
#include <servicehost.h>

SH_PLUGIN_METADATA("c");
/* README */
SH_SERVICE_METADATA(links_meta, "com.example.links", "Links", "1.0.0", SH_EVENT_BIT(SH_EVENT_OPEN_URL), 0);
SH_CLAIM_METADATA(links_url, links_meta, SH_CLAIM_URL, "myapp");
/* README end */

static int32_t links_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    (void)event;
    return SH_OK;
}

static const sh_service links_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, links_meta.id, NULL, NULL, links_handle_event,
};
static const sh_service *const services[] = {&links_service};
static sh_plugin plugin = {sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    (void)offer;
    return &plugin;
}
