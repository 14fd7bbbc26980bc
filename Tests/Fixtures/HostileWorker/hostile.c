// A service that breaks the host table's rules on didBecomeActive (issue 11), for the
// end-to-end tests. Compile with -DHOSTILE_ACTION=N:
//   1  store_set(host, "key", NULL, 5): a NULL value with a length; logs the answer
//   2  (in a worker) writes a `call` frame for store_set whose length is 2^63 straight to the
//      worker channel, descriptor 3, as a compromised worker could; then waits to be killed
//   3  sizes past INT64_MAX: store_set(host, "key", "v", SIZE_MAX), then store_set of "v" and
//      store_get(host, "key", buffer, SIZE_MAX, &length); logs both answers
#include <servicehost.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef HOSTILE_ACTION
#define HOSTILE_ACTION 1
#endif

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(hostile_meta, "test.hostile", "Hostile", "0.1.0", SH_EVENTS_LIFECYCLE, 0);

static const sh_host *host;  /* set in attach, on the main thread */

static int32_t hostile_attach(const sh_service *service, const sh_host *h) {
    (void)service;
    host = h;
    return SH_OK;
}

#if HOSTILE_ACTION == 2
static size_t put(uint8_t *at, uint64_t value, size_t size) {
    for (size_t i = 0; i < size; i++) at[i] = (uint8_t)(value >> (8 * i));
    return size;
}
#endif

static int32_t hostile_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    if (event->kind != SH_EVENT_DID_BECOME_ACTIVE) return SH_OK;
#if HOSTILE_ACTION == 1
    char line[96];
    snprintf(line, sizeof line, "hostile: store_set(key, NULL, 5) answered %d",
             (int)host->store_set(host, "key", NULL, 5));
    host->log(host, SH_LOG_INFO, line);
#elif HOSTILE_ACTION == 3
    char line[128], value[8];
    size_t length = 0;
    int32_t set = host->store_set(host, "key", "v", SIZE_MAX);
    host->store_set(host, "key", "v", 1);
    int32_t got = host->store_get(host, "key", value, SIZE_MAX, &length);
    snprintf(line, sizeof line, "hostile: store_set(key, v, SIZE_MAX) answered %d; store_get(key, SIZE_MAX) answered %d, length %zu",
             (int)set, (int)got, length);
    host->log(host, SH_LOG_INFO, line);
#elif HOSTILE_ACTION == 2
    /* Header: "SHWP", version 1, type 27 (call), sequence 1, payload length. Payload: service
     * 0, call 4 (store_set), key present "key", value absent, length 2^63. */
    uint8_t frame[16 + 4 + 1 + 1 + 4 + 3 + 1 + 8];
    size_t n = 0;
    n += put(frame + n, 0x50574853u, 4);
    n += put(frame + n, 1, 2);
    n += put(frame + n, 27, 2);
    n += put(frame + n, 1, 4);
    n += put(frame + n, sizeof frame - 16, 4);
    n += put(frame + n, 0, 4);
    n += put(frame + n, 4, 1);
    n += put(frame + n, 1, 1);
    n += put(frame + n, 3, 4);
    memcpy(frame + n, "key", 3);
    n += 3;
    n += put(frame + n, 0, 1);
    n += put(frame + n, UINT64_C(1) << 63, 8);
    if (write(3, frame, n) != (ssize_t)n) return SH_ERROR;
    sleep(60);  /* the host kills the worker long before */
#endif
    return SH_OK;
}

static const sh_service hostile_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, hostile_meta.id, NULL, hostile_attach, hostile_handle_event,
};
static const sh_service *const services[] = {&hostile_service};
static const sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    (void)offer;
    return &plugin;
}
