/* Earlier public example: README.md at commit 76915c8 ("Asking another service", the C snippet),
 * in a whole plugin: each of its pieces copied unchanged where the README says it goes
 * (between "README" comments), the rest written around them.
 * Deprecated form: SH_CLAIM_METADATA with an id string.
 */
#include <servicehost.h>
#include <stdio.h>

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(queue_meta, "com.example.queue", "Queue", "1.0.0",
                    SH_EVENTS_LIFECYCLE | SH_EVENT_BIT(SH_EVENT_REQUEST), 0);
/* README */
SH_CLAIM_METADATA(count_answer, "com.example.queue", SH_CLAIM_ANSWER, "queue.count");
/* README end */

static const sh_host *host;
static int count;

/* README: the asker, from any thread: */
static void on_reply(void *context, int32_t result, const char *json, size_t len) {
    /* main thread; json is valid only during the call */
}
/* README end */

/* Never called: a service asking itself is not the example. */
__attribute__((unused)) static void ask(void) {
    /* README */
if (SH_HAS_MEMBER(host, sh_host, request))
    host->request(host, "queue.count", NULL, 0, on_reply, NULL);
    /* README end */
}

static int32_t queue_attach(const sh_service *service, const sh_host *h) {
    (void)service;
    host = h;
    return SH_OK;
}

static int32_t queue_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    switch (event->kind) {
/* README: the answerer, in handle_event: */
case SH_EVENT_REQUEST: {
    const sh_request *r = event->data;  /* r->name, r->from, r->json, r->parsed */
    char json[64];
    int n = snprintf(json, sizeof json, "{\"count\":%d}", count);
    event->completion->complete(event->completion, SH_OK, json, (size_t)n);
    return SH_OK;
}
/* README end */
    default:
        return SH_OK;
    }
}

static const sh_service queue_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, queue_meta.id, NULL, queue_attach, queue_handle_event,
};
static const sh_service *const services[] = {&queue_service};
static sh_plugin plugin = {sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    (void)offer;
    return &plugin;
}
