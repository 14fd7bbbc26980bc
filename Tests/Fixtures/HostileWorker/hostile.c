// A service that breaks the host table's rules on didBecomeActive (issue 11), for the
// end-to-end tests. Compile with -DHOSTILE_ACTION=N:
//   1  store_set(host, "key", NULL, 5): a NULL value with a length; logs the answer
//   2  (in a worker) writes a `call` frame for store_set whose length is 2^63 straight to the
//      worker channel, descriptor 3, as a compromised worker could; then waits to be killed
//   3  sizes past INT64_MAX: store_set(host, "key", "v", SIZE_MAX), then store_set of "v" and
//      store_get(host, "key", buffer, SIZE_MAX, &length); logs both answers
//   4  (in a worker, issue 36) unless the file HOSTILE_MARKER exists (it creates it): asks
//      "hostile.echo" once; its reply's callback sends HOSTILE_BURST more requests and then
//      stops the worker (SIGSTOP), so the host's replies pile up on a channel nobody reads
//   5  (in the host) answers "hostile.echo" with HOSTILE_REPLY_BYTES bytes of JSON
//   6  (issue 37) the main thread waits (pthread_join) for a thread that calls app_state and
//      store_get, whose answers no other thread reads for it in a worker; logs them
#define _POSIX_C_SOURCE 200809L  /* kill */
#include <servicehost.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HOSTILE_ACTION
#define HOSTILE_ACTION 1
#endif

SH_PLUGIN_METADATA("c");
#if HOSTILE_ACTION == 5
SH_SERVICE_METADATA(hostile_meta, "test.echo", "Echo", "0.1.0", SH_EVENTS_LIFECYCLE | SH_EVENT_BIT(SH_EVENT_REQUEST), 0);
SH_CLAIM_METADATA_ID(hostile_echo, "test.echo", SH_CLAIM_ANSWER, "hostile.echo");
#else
SH_SERVICE_METADATA(hostile_meta, "test.hostile", "Hostile", "0.1.0", SH_EVENTS_LIFECYCLE, 0);
#endif

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

#if HOSTILE_ACTION == 4
static void ignore_reply(void *context, int32_t result, const char *json, size_t json_len) {
    (void)context, (void)result, (void)json, (void)json_len;
}

/* The first reply, on the worker's main thread once didBecomeActive was answered (a request
 * asked during an event is carried out after it): the burst, then the whole worker stops
 * inside this callback, so nothing reads the replies and no event is pending (the hang
 * watchdog has nothing to watch; only the stall bound applies). */
static void burst(void *context, int32_t result, const char *json, size_t json_len) {
    (void)context, (void)result, (void)json, (void)json_len;
    for (int i = 0; i < HOSTILE_BURST; i++) host->request(host, "hostile.echo", "{}", 2, ignore_reply, NULL);
    kill(getpid(), SIGSTOP);
}
#endif

#if HOSTILE_ACTION == 6
static void *ask_from_a_thread(void *line) {
    char value[8];
    size_t length = 0;
    host->store_set(host, "key", "v", 1);
    int32_t got = host->store_get(host, "key", value, sizeof value, &length);
    snprintf(line, 96, "hostile: from a thread, app_state %d, store_get %d length %zu", (int)host->app_state(host),
             (int)got, length);
    return NULL;
}
#endif

static int32_t hostile_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
#if HOSTILE_ACTION == 5
    if (event->kind == SH_EVENT_REQUEST) {
        static char *reply;
        if (!reply) {
            reply = malloc(HOSTILE_REPLY_BYTES);
            memset(reply, ' ', HOSTILE_REPLY_BYTES);
            memcpy(reply, "{}", 2);
        }
        event->completion->complete(event->completion, SH_OK, reply, HOSTILE_REPLY_BYTES);
        return SH_OK;
    }
#endif
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
#elif HOSTILE_ACTION == 6
    char line[96] = "hostile: the thread did not start";
    pthread_t thread;
    if (pthread_create(&thread, NULL, ask_from_a_thread, line) == 0) pthread_join(thread, NULL);
    host->log(host, SH_LOG_INFO, line);
#elif HOSTILE_ACTION == 4
    int marker = open(HOSTILE_MARKER, O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (marker < 0) return SH_OK;  /* done once: a restarted worker behaves */
    close(marker);
    /* Not from a thread: its stop raced the main thread's answer to this event, and requests
     * asked during an unanswered event are never carried out (CI stop 45). */
    host->request(host, "hostile.echo", "{}", 2, burst, NULL);
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
