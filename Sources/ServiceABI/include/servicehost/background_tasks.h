/*
 * servicehost/background_tasks.h — the background-tasks extension (issue 38).
 *
 * UIKit's beginBackgroundTask(withName:expirationHandler:) and
 * endBackgroundTask(_:): a service that must finish work once in the
 * background (a save) opens a task; while one is open the host keeps the
 * machine from sleeping (its logind delay inhibitor) and, when the task's
 * time is up, calls its expiration handler; a task still open after that is
 * ended by the host with a backgroundTask.expired line naming the service.
 *
 * Found with host->get_extension(host, SH_BACKGROUND_TASKS_ID); NULL from a
 * host that does not offer it. The table is host-owned, valid for the process
 * lifetime, append-only: a member added later comes with a new
 * SH_BACKGROUND_TASKS_VERSION, and a caller checks `size` before using it.
 */
#ifndef SERVICEHOST_BACKGROUND_TASKS_H
#define SERVICEHOST_BACKGROUND_TASKS_H

#include "host.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SH_BACKGROUND_TASKS_ID "dev.servicehost.background-tasks/1"
#define SH_BACKGROUND_TASKS_VERSION 1u
/* sizeof(sh_background_tasks) in version 1, frozen. */
#define SH_BACKGROUND_TASKS_SIZE_V1 24u
/* No task: what begin answers when it opens none (UIBackgroundTaskInvalid). */
#define SH_BACKGROUND_TASK_INVALID 0u

/* Called once, on the main thread, when task's time is up; context is the
 * one given to begin, handed back untouched. The service should end the task
 * from here (end answers SH_OK); the host ends it otherwise. */
typedef void (*sh_background_task_expired_fn)(void *context, uint32_t task);

typedef struct sh_background_tasks {
    uint32_t size;    /* sizeof(sh_background_tasks) as the host was built */
    uint32_t version; /* SH_BACKGROUND_TASKS_VERSION */

    /* [main-thread] Opens a task named name (NUL-terminated, copied before
     * returning). Returns its id (never SH_BACKGROUND_TASK_INVALID), or
     * SH_BACKGROUND_TASK_INVALID when name is NULL or empty, or expired is
     * NULL. In a worker process (--isolation process) the task is the host's
     * all the same, and expired runs on the worker's main thread once the
     * host's expiry reaches it: by then the host has ended the task (end
     * answers SH_NOT_FOUND). expired and context must stay valid until the
     * task ends. */
    uint32_t (*begin)(const struct sh_host *host, const char *name, sh_background_task_expired_fn expired,
                      void *context);

    /* [main-thread] Ends task. Returns SH_OK, or SH_NOT_FOUND when this
     * service has no such task open (ended already, ended by the host after
     * its expiry, or never begun). */
    int32_t (*end)(const struct sh_host *host, uint32_t task);
} sh_background_tasks;

#ifdef __cplusplus
}
#endif

#endif /* SERVICEHOST_BACKGROUND_TASKS_H */
