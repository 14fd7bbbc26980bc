// The bad-plugin corpus: one C service that misbehaves in the way its macros choose.
// Tests/EndToEndTests/BadPluginCorpusTests.swift compiles one plugin per case.
//
//   BAD_ID           service id (default "test.bad")
//   BAD_EVENTS       event mask word 0 (default SH_EVENTS_LIFECYCLE)
//   BAD_ON_KIND      the event kind during which it misbehaves with BAD_ACTION:
//                      1 segfault, 2 abort(), 3 exit(3), 4 spin forever, 5 answer 12345,
//                      6 write 20000 lines to stdout and stderr, 7 close every descriptor,
//                      8 call host functions from 8 threads at once, 9 sleep forever
//   BAD_ONCE_MARKER  misbehave only while this file does not exist (it is created first),
//                    so a restarted worker behaves
//   BAD_UNTIL_MARKER misbehave only while this file does not exist (the test creates it: the
//                    cause of a crash loop is gone, the plugin file unchanged)
//   BAD_CONSTRUCTOR  an ELF constructor: 1 segfaults, 2 spins forever
//   BAD_ENTRY        servicehost_entry: 1 segfaults, 2 spins forever, 3 returns NULL,
//                    4 answers an sh_plugin of 8 bytes, 5 a service without handle_event,
//                    6 a service without an id
//   BAD_COMPLETE     completions: 0 once (default), 1 never, 2 twice
//   BAD_META_ID      the id in the metadata (default BAD_ID): for invalid ids
// Every event is logged as "bad ID: event KIND state S" (launch events add "restart 0|1").
#define _POSIX_C_SOURCE 200809L
#include <servicehost.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef BAD_ID
#define BAD_ID "test.bad"
#endif
#ifndef BAD_META_ID
#define BAD_META_ID BAD_ID
#endif
#ifndef BAD_EVENTS
#define BAD_EVENTS SH_EVENTS_LIFECYCLE
#endif
#ifndef BAD_ACTION
#define BAD_ACTION 0
#endif
#ifndef BAD_ON_KIND
#define BAD_ON_KIND 0
#endif
#ifndef BAD_COMPLETE
#define BAD_COMPLETE 0
#endif

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(bad_meta, BAD_META_ID, "Bad", "0.1.0", BAD_EVENTS, 0);

// A pointer the compiler cannot prove NULL, so the crash happens at run time.
static volatile int *volatile nowhere = 0;

static void segfault(void) { *nowhere = 1; }

static void spin(void) {
    for (volatile unsigned long n = 0;; n++) {}
}

#ifdef BAD_CONSTRUCTOR
__attribute__((constructor)) static void bad_constructor(void) {
    if (BAD_CONSTRUCTOR == 1) segfault();
    if (BAD_CONSTRUCTOR == 2) spin();
}
#endif

static const sh_host *host;  // set in attach, on the main thread

static int32_t bad_attach(const sh_service *service, const sh_host *h) {
    (void)service;
    host = h;
    return SH_OK;
}

#ifndef BAD_HAMMER_ROUNDS
#define BAD_HAMMER_ROUNDS 500  /* per thread; each round makes 5 host calls */
#endif

static void *hammer(void *unused) {
    (void)unused;
    for (int i = 0; i < BAD_HAMMER_ROUNDS; i++) {
        host->log(host, SH_LOG_DEBUG, "hammer");
        host->app_state(host);
        host->post(host, "bad.hammer", "{}", 2);
        host->subscribe(host, "bad.hammer");
        host->unsubscribe(host, "bad.hammer");
    }
    return NULL;
}

static int misbehave(void) {
#ifdef BAD_ONCE_MARKER
    if (access(BAD_ONCE_MARKER, F_OK) == 0) return 0;
    close(open(BAD_ONCE_MARKER, O_WRONLY | O_CREAT, 0600));
#endif
#ifdef BAD_UNTIL_MARKER
    if (access(BAD_UNTIL_MARKER, F_OK) == 0) return 0;
#endif
    switch (BAD_ACTION) {
    case 1: segfault(); break;
    case 2: abort();
    case 3: exit(3);
    case 4: spin(); break;
    case 5: return 1;
    case 6:
        for (int i = 0; i < 20000; i++) {
            printf("bad %s: stdout line %d of a flood\n", BAD_ID, i);
            fprintf(stderr, "bad %s: stderr line %d of a flood\n", BAD_ID, i);
        }
        fflush(stdout);
        break;
    case 7:
        for (int fd = 3; fd < 1024; fd++) close(fd);
        break;
    case 8: {
        pthread_t threads[8];
        for (int i = 0; i < 8; i++) pthread_create(&threads[i], NULL, hammer, NULL);
        for (int i = 0; i < 8; i++) pthread_join(threads[i], NULL);
        char line[96];
        snprintf(line, sizeof line, "bad %s: 8 threads called the host %d times", BAD_ID, 8 * 5 * BAD_HAMMER_ROUNDS);
        host->log(host, SH_LOG_INFO, line);
        break;
    }
    case 9:
        for (;;) pause();
    }
    return 0;
}

static int32_t bad_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    char line[512];
    if (event->kind == SH_EVENT_WILL_FINISH_LAUNCHING || event->kind == SH_EVENT_DID_FINISH_LAUNCHING) {
        const sh_launch_options *options = event->data;
        snprintf(line, sizeof line, "bad %s: event %u state %d restart %u flags=%u settings=%.*s", BAD_ID, event->kind,
                 event->app_state, (options->flags & SH_LAUNCH_RESTART) ? 1u : 0u, options->flags,
                 (int)options->settings_len, options->settings_json ? options->settings_json : "");
    } else {
        snprintf(line, sizeof line, "bad %s: event %u state %d", BAD_ID, event->kind, event->app_state);
    }
    host->log(host, SH_LOG_INFO, line);
    if (event->kind == BAD_ON_KIND && misbehave()) return 12345;
    if (event->completion) {
        if (BAD_COMPLETE != 1) event->completion->complete(event->completion, SH_OK, NULL, 0);
        if (BAD_COMPLETE == 2) event->completion->complete(event->completion, SH_OK, NULL, 0);
    }
    return SH_OK;
}

#ifndef BAD_ENTRY
#define BAD_ENTRY 0
#endif

static sh_service bad_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, BAD_ID, NULL, bad_attach, bad_handle_event,
};
static const sh_service *const services[] = {&bad_service};
static sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    (void)offer;
    switch (BAD_ENTRY) {
    case 1: segfault(); break;
    case 2: spin(); break;
    case 3: return NULL;
    case 4: plugin.size = 8; break;
    case 5: bad_service.handle_event = NULL; break;
    case 6: bad_service.id = NULL; break;
    }
    return &plugin;
}
