/* Earlier public example: Tests/Fixtures/CPlugins/probe.c at commit 4afb927 (2026-11-22), copied unchanged below.
 */
// A configurable C test service. Compile-time macros choose its behaviour:
//   PROBE_ID         service id (default "test.probe")
//   PROBE_PRIORITY   priority (default 0)
//   PROBE_EVENTS     event mask word 0 (default SH_EVENTS_LIFECYCLE)
//   PROBE_FAIL_KIND  an event kind answered with PROBE_FAIL_RESULT (default none)
//   PROBE_HANG_KIND  an event kind during which the service sleeps forever
//   PROBE_CONSTRUCTOR_MARKER  an ELF constructor creates the file named by $PROBE_MARKER
//   PROBE_ABI_MIN / PROBE_ABI_MAX  the ABI range declared in metadata and answered
//   PROBE_NO_METADATA  leave out the metadata section
//   PROBE_UNDEFINED    reference a symbol nothing defines (dlopen fails)
//   PROBE_EXPORT_OTHER_ID  export a service id the metadata does not declare
#include <servicehost.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef PROBE_ID
#define PROBE_ID "test.probe"
#endif
#ifndef PROBE_PRIORITY
#define PROBE_PRIORITY 0
#endif
#ifndef PROBE_EVENTS
#define PROBE_EVENTS SH_EVENTS_LIFECYCLE
#endif
#ifndef PROBE_FAIL_RESULT
#define PROBE_FAIL_RESULT SH_ERROR
#endif
#ifndef PROBE_ABI_MIN
#define PROBE_ABI_MIN SH_ABI_VERSION_MIN
#endif
#ifndef PROBE_ABI_MAX
#define PROBE_ABI_MAX SH_ABI_VERSION
#endif

#ifndef PROBE_NO_METADATA
SH_META_ATTRIBUTES static const sh_meta_plugin plugin_meta = {
    {sizeof(sh_meta_plugin), SH_META_PLUGIN_VERSION, SH_META_MAGIC, SH_META_KIND_PLUGIN},
    PROBE_ABI_MAX, PROBE_ABI_MIN, "c", ""};
SH_SERVICE_METADATA(probe_meta, PROBE_ID, "Probe", "0.1.0", PROBE_EVENTS, PROBE_PRIORITY);
#endif

#ifdef PROBE_CONSTRUCTOR_MARKER
__attribute__((constructor)) static void leave_marker(void) {
    const char *path = getenv("PROBE_MARKER");
    if (path) close(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
}
#endif

#ifdef PROBE_UNDEFINED
extern void servicehost_probe_missing_function(void);
#endif

static const sh_host *host;  // set in attach, on the main thread

static int32_t probe_attach(const sh_service *service, const sh_host *h) {
    (void)service;
    host = h;
    return SH_OK;
}

static int32_t probe_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
#ifdef PROBE_UNDEFINED
    servicehost_probe_missing_function();
#endif
    char line[96];
    snprintf(line, sizeof line, "probe %s: event %u state %d host-state %d seq %llu", PROBE_ID,
             event->kind, event->app_state, host->app_state(host), (unsigned long long)event->seq);
    host->log(host, SH_LOG_INFO, line);
#ifdef PROBE_HANG_KIND
    if (event->kind == PROBE_HANG_KIND) for (;;) pause();
#endif
#ifdef PROBE_FAIL_KIND
    if (event->kind == PROBE_FAIL_KIND) return PROBE_FAIL_RESULT;
#endif
    return SH_OK;
}

#ifdef PROBE_EXPORT_OTHER_ID
#define PROBE_RUNTIME_ID "test.undeclared"
#else
#define PROBE_RUNTIME_ID PROBE_ID
#endif

static const sh_service probe_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, PROBE_RUNTIME_ID, NULL, probe_attach, probe_handle_event,
};
static const sh_service *const services[] = {&probe_service};
static const sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, PROBE_ABI_MAX, 1, services, NULL,
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    (void)offer;
    return &plugin;
}
