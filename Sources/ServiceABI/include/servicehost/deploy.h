/*
 * servicehost/deploy.h — the deploy extension (issue 40).
 *
 * A service asks its host to deploy a staged set, as `host ctl deploy DIR`
 * does: the plugin files (and optional services.json) in a folder are
 * verified, switched to (services whose file and settings did not change keep
 * running) and watched for a probation time; any failure in it rolls the whole
 * set back to the generation before. The service learns how it ended: applied
 * (the probation passed), rolled back (naming the culprit and the reason), or
 * refused (nothing running changed). It is the request `{"command":"deploy"}`
 * of sh_host.control, with the outcome instead of the switch's reply, so it
 * needs the same grant: "requests": "all" in services.json.
 *
 * Found with host->get_extension(host, SH_DEPLOY_ID); NULL from a host that
 * does not offer it. The table is host-owned, valid for the process lifetime,
 * append-only: a member added later comes with a new SH_DEPLOY_VERSION, and a
 * caller checks `size` before using it. Offered in process and in a worker
 * process alike.
 */
#ifndef SERVICEHOST_DEPLOY_H
#define SERVICEHOST_DEPLOY_H

#include "host.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SH_DEPLOY_ID "dev.servicehost.deploy/1"
#define SH_DEPLOY_VERSION 1u
/* sizeof(sh_deploy) in version 1, frozen. */
#define SH_DEPLOY_SIZE_V1 16u

/* How a deploy ended (the `outcome` of sh_deploy_done_fn). */
typedef enum sh_deploy_outcome {
    /* The set passed its probation: it is the host's current generation. */
    SH_DEPLOY_APPLIED = 0,
    /* A failure in probation (a crash, a hang kill, a required service down),
     * a cancel or a rollback rolled it back: the generation before runs. */
    SH_DEPLOY_ROLLED_BACK = 1,
    /* Not switched to (not granted, another deploy in probation, a file the
     * host refuses, no state directory): nothing running changed. */
    SH_DEPLOY_REFUSED = 2,
} sh_deploy_outcome;

/* Called once, on the main thread, when the deploy has ended: outcome is an
 * sh_deploy_outcome; json (json_len bytes, also NUL-terminated) an object:
 *   {"outcome":"applied","generation":3}
 *   {"outcome":"rolledBack","generation":3,"culprit":"com.example.b","reason":"signal"}
 *   {"outcome":"refused","error":"…why…"}
 * host-owned, valid only during the call; copy what you keep. context is the
 * one given to deploy, handed back untouched. Called also when the deploy or
 * its rollback replaced or removed the service that asked: in the host's
 * process, after that instance's stop, in its code (the host never unloads a
 * library, and its sh_host stays valid; host calls made then act for its
 * service id, whose store is the running replacement's), so it can free what
 * it kept for the deploy. In a worker process the reply goes to that
 * worker: a worker ended with its service hears nothing, and its memory went
 * with it. Not called when the host stops first. A replacement learns how the
 * deploy ended from the control request {"command":"deploy","action":"status"}
 * (sh_host.control). */
typedef void (*sh_deploy_done_fn)(void *context, int32_t outcome, const char *json, size_t json_len);

typedef struct sh_deploy {
    uint32_t size;    /* sizeof(sh_deploy) as the host was built */
    uint32_t version; /* SH_DEPLOY_VERSION */

    /* [thread-safe] Deploys the set in directory (an absolute path,
     * NUL-terminated, copied before returning) with a probation of
     * probation_ms milliseconds (0: the host's default, 30 s; at most a day).
     * Returns SH_OK when done will be called (once, later, on the main
     * thread, even for a refusal); SH_INVALID for a NULL, empty or relative
     * directory, a probation over a day, or a NULL done (done is never called
     * then). context must stay valid until done is called. */
    int32_t (*deploy)(const struct sh_host *host, const char *directory, uint32_t probation_ms,
                      sh_deploy_done_fn done, void *context);
} sh_deploy;

#ifdef __cplusplus
}
#endif

#endif /* SERVICEHOST_DEPLOY_H */
