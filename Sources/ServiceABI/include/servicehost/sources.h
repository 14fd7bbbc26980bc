/*
 * servicehost/sources.h — the sources extension (issue 38).
 *
 * A system source written as a plugin: a service that watches something
 * outside the host (a Wayland compositor's focus, a car's ignition line, a
 * GPIO pin) and moves the app in UIKit's order, as the built-in sources
 * (sleep, lock, network, power…) do. It watches its descriptors on the host's
 * main loop, moves the app, posts what changed with sh_host.post (services
 * subscribe as to any notification), and makes its current state readable
 * with a request the host answers (as network.current).
 *
 * Found with host->get_extension(host, SH_SOURCES_ID); NULL from a host that
 * does not offer it. The table is host-owned, valid for the process lifetime,
 * append-only: a member added later comes with a new SH_SOURCES_VERSION, and
 * a caller checks `size` before using it.
 *
 * In process only: a service in a worker process (--isolation process) gets
 * SH_UNSUPPORTED (watch: 0) from every function, as its descriptors are not
 * the host's. Give a source "isolation": "in-process" in services.json.
 */
#ifndef SERVICEHOST_SOURCES_H
#define SERVICEHOST_SOURCES_H

#include "host.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SH_SOURCES_ID "dev.servicehost.sources/1"
#define SH_SOURCES_VERSION 1u
/* sizeof(sh_sources) in version 1, frozen. */
#define SH_SOURCES_SIZE_V1 40u

/* The app's moves (move_app), each in UIKit's order and only from the states
 * it applies to; a move that does not apply then does nothing. */
/* active → inactive: willResignActive. */
#define SH_APP_MOVE_RESIGN_ACTIVE 1u
/* active or inactive → background: willResignActive (when active), didEnterBackground. */
#define SH_APP_MOVE_ENTER_BACKGROUND 2u
/* background → inactive: willEnterForeground. */
#define SH_APP_MOVE_ENTER_FOREGROUND 3u
/* background or inactive → active: willEnterForeground (from the background), didBecomeActive. */
#define SH_APP_MOVE_BECOME_ACTIVE 4u

/* Called on the main thread whenever fd is readable (level-triggered: read
 * what is there, or it is called again); context is the one given to watch. */
typedef void (*sh_source_readable_fn)(void *context, int fd);

typedef struct sh_sources {
    uint32_t size;    /* sizeof(sh_sources) as the host was built */
    uint32_t version; /* SH_SOURCES_VERSION */

    /* [main-thread] Asks for move (SH_APP_MOVE_*), carried out on the main
     * thread right after the current call returns (never inside it: every
     * service is called for a move). SH_OK; SH_INVALID for an unknown move;
     * SH_UNSUPPORTED in a worker. */
    int32_t (*move_app)(const struct sh_host *host, uint32_t move);

    /* [main-thread] Calls readable(context, fd) on the main thread whenever fd
     * is readable, until unwatch or until the service stops. fd stays the
     * caller's: the host never reads or closes it; close it only after
     * unwatch. Returns the watch's id (never 0), or 0 when fd is negative,
     * readable is NULL, the main loop refused fd (logged with its errno), or
     * in a worker. context must stay valid until the watch ends. */
    uint64_t (*watch)(const struct sh_host *host, int fd, sh_source_readable_fn readable, void *context);

    /* [main-thread] Ends watch. SH_OK, or SH_NOT_FOUND when this service has
     * no such watch. */
    int32_t (*unwatch)(const struct sh_host *host, uint64_t watch);

    /* [main-thread] From now on the host answers request name (sh_host.request,
     * host ctl request) itself with json, a JSON object of json_len bytes
     * (copied): the source's current state, "ignition.current". SH_OK;
     * SH_INVALID when name is NULL or empty or a built-in source's
     * (network.current, power.current), or json is not a JSON object;
     * SH_UNSUPPORTED in a worker. */
    int32_t (*set_current_state)(const struct sh_host *host, const char *name, const char *json, size_t json_len);
} sh_sources;

#ifdef __cplusplus
}
#endif

#endif /* SERVICEHOST_SOURCES_H */
