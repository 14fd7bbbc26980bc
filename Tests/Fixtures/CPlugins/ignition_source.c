// A system source as a plugin (issue 38, sources.h): a car's ignition line, here a FIFO at
// IGNITION_FIFO the test writes to. Each byte read is a change: '0' the ignition is off (the app
// enters the background), '1' it is on (the app becomes active), 'r' the driver looks away (the
// app resigns active), 'u' the source stops watching. It posts "ignition.changed" {"on": bool}
// and sets the current state "ignition.current". Its lines: "ignition watch ID" (0: refused),
// "ignition move RESULT", "ignition state RESULT", "ignition unwatch RESULT".
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */
#include <fcntl.h>
#include <servicehost.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(ignition_meta, "test.ignition", "Ignition source", "1.0.0", SH_EVENTS_LIFECYCLE, 0);

static const sh_host *host;          /* set in attach, on the main thread */
static const sh_sources *sources;    /* the extension, NULL when not offered */
static uint64_t watch;               /* main thread only */

static void say(const char *what, long value) {
    char line[64];
    snprintf(line, sizeof line, "ignition %s %ld", what, value);
    host->log(host, SH_LOG_INFO, line);
}

static void ignition(int on) {
    const char *json = on ? "{\"on\":true}" : "{\"on\":false}";
    say("state", (long)sources->set_current_state(host, "ignition.current", json, strlen(json)));
    host->post(host, "ignition.changed", json, strlen(json));
    say("move", (long)sources->move_app(host, on ? SH_APP_MOVE_BECOME_ACTIVE : SH_APP_MOVE_ENTER_BACKGROUND));
}

static void readable(void *context, int fd) {
    (void)context;
    char bytes[64];
    ssize_t count = read(fd, bytes, sizeof bytes);
    for (ssize_t i = 0; i < count; i++) {
        switch (bytes[i]) {
        case '0': ignition(0); break;
        case '1': ignition(1); break;
        case 'r': say("move", (long)sources->move_app(host, SH_APP_MOVE_RESIGN_ACTIVE)); break;
        case 'u': say("unwatch", (long)sources->unwatch(host, watch)); break;
        default: break;
        }
    }
}

static int32_t ignition_attach(const sh_service *service, const sh_host *h) {
    (void)service;
    host = h;
    sources = (const sh_sources *)host->get_extension(host, SH_SOURCES_ID);
    if (sources == NULL || sources->size < SH_SOURCES_SIZE_V1) return SH_OK;
    // Read and write: the FIFO always has a writer (this one), so it never reads as hung up.
    int fd = open(IGNITION_FIFO, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    watch = fd < 0 ? 0 : sources->watch(host, fd, readable, NULL);
    say("watch", (long)watch);
    if (watch == 0) say("state", (long)sources->set_current_state(host, "ignition.current", "{}", 2));
    return SH_OK;
}

static int32_t ignition_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    (void)event;
    return SH_OK;
}

static const sh_service ignition_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, ignition_meta.id, NULL, ignition_attach, ignition_handle_event,
};
static const sh_service *const services[] = {&ignition_service};
static sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    if (offer == NULL || offer->abi_min > SH_ABI_VERSION || offer->abi_max < SH_ABI_VERSION_MIN) {
        plugin.service_count = 0;
        plugin.error = "test.ignition: no ABI version in common with the host";
        return &plugin;
    }
    plugin.abi_version = offer->abi_max < SH_ABI_VERSION ? offer->abi_max : SH_ABI_VERSION;
    return &plugin;
}
