/* Earlier public example: the SH_EVENT_WORDS example in a comment of
 * Sources/ServiceABI/include/servicehost/events.h at commit 61fb9f0, in a whole plugin: its lines copied unchanged
 * (between "header" comments), the rest written around them.
 */
#include <servicehost.h>

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(words_meta, "com.example.words", "Words", "1.0.0",
                    /* header */ SH_EVENT_WORDS(SH_EVENTS_LIFECYCLE, SH_EVENT_BIT(70)) /* header end */, 0);

static int32_t handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    (void)event;
    return SH_OK;
}

static const sh_service service = {
    sizeof(sh_service), SH_SERVICE_VERSION, words_meta.id, NULL, NULL, handle_event,
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
