/*
 * servicehost/health.h — the health extension (issue 42).
 *
 * A service says how it fares whenever it knows (its broker connection
 * dropped, its queue stuck, both fine again), instead of or besides waiting
 * for the host's healthCheck event: healthy, degraded or unhealthy
 * (SH_HEALTH_*, events.h) with a reason. A report counts as a check's answer
 * would: it is shown in host ctl list, /metrics and the log, and
 * healthCheck.unhealthyAfter unhealthy reports in a row make the host act as
 * healthCheck.onUnhealthy says (restart the service, in process or in a new
 * worker, or report it; a deploy in probation is rolled back). Without a
 * healthCheck in the service's configuration the host reports (3 in a row).
 *
 * Found with host->get_extension(host, SH_HEALTH_EXTENSION_ID); NULL from a host
 * that does not offer it. The table is host-owned, valid for the process
 * lifetime, append-only: a member added later comes with a new
 * SH_HEALTH_EXTENSION_VERSION, and a caller checks `size` before using it.
 */
#ifndef SERVICEHOST_HEALTH_H
#define SERVICEHOST_HEALTH_H

#include "host.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SH_HEALTH_EXTENSION_ID "dev.servicehost.health/1"
#define SH_HEALTH_EXTENSION_VERSION 1u
/* sizeof(sh_health_reporting) in version 1, frozen. */
#define SH_HEALTH_EXTENSION_SIZE_V1 16u

typedef struct sh_health_reporting {
    uint32_t size;    /* sizeof(sh_health_reporting) as the host was built */
    uint32_t version; /* SH_HEALTH_EXTENSION_VERSION */

    /* [thread-safe] Reports the service's health: status is SH_HEALTH_HEALTHY,
     * SH_HEALTH_DEGRADED or SH_HEALTH_UNHEALTHY; reason (may be NULL) is
     * NUL-terminated UTF-8, copied before returning, at most 1024 bytes kept.
     * Taken on the host's main thread after the event being handled (as a
     * post), in the order reported; from a worker too. Returns SH_OK, or
     * SH_INVALID for another status. */
    int32_t (*report)(const struct sh_host *host, int32_t status, const char *reason);
} sh_health_reporting;

#ifdef __cplusplus
}
#endif

#endif /* SERVICEHOST_HEALTH_H */
