// A C service using the background-tasks extension (issue 38): it opens a task named "save"
// when it enters the background and ends it when the notification "task.end" arrives. Its
// lines: "task begun ID" (0: none opened), "task expired ID", "task ended RESULT".
// TASK_END_ON_EXPIRY: the expiration handler ends the task itself (else the host does).
// The notification "task.crash" aborts the process (a crash with a task open).
#include <servicehost.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(task_meta, "test.task", "Background task", "1.0.0",
                    SH_EVENTS_LIFECYCLE | SH_EVENT_BIT(SH_EVENT_NOTIFICATION), 0);

static const sh_host *host;                  /* set in attach, on the main thread */
static const sh_background_tasks *tasks;     /* the extension, NULL when not offered */
static uint32_t task = SH_BACKGROUND_TASK_INVALID; /* main thread only */

static void say(const char *what, long value) {
    char line[64];
    snprintf(line, sizeof line, "task %s %ld", what, value);
    host->log(host, SH_LOG_INFO, line);
}

static void expired(void *context, uint32_t expiring) {
    (void)context;
    say("expired", (long)expiring);
#ifdef TASK_END_ON_EXPIRY
    say("ended", (long)tasks->end(host, expiring));
    task = SH_BACKGROUND_TASK_INVALID;
#endif
}

static int32_t task_attach(const sh_service *service, const sh_host *h) {
    (void)service;
    host = h;
    tasks = (const sh_background_tasks *)host->get_extension(host, SH_BACKGROUND_TASKS_ID);
    host->subscribe(host, "task.crash");
    return host->subscribe(host, "task.end");
}

static int32_t task_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    if (event->kind == SH_EVENT_DID_ENTER_BACKGROUND && tasks != NULL) {
        task = tasks->begin(host, "save", expired, NULL);
        say("begun", (long)task);
    } else if (event->kind == SH_EVENT_NOTIFICATION) {
        const sh_notification *notification = event->data;
        if (strcmp(notification->name, "task.crash") == 0) abort();
        if (strcmp(notification->name, "task.end") == 0 && tasks != NULL) {
            say("ended", (long)tasks->end(host, task));
            task = SH_BACKGROUND_TASK_INVALID;
        }
    }
    return SH_OK;
}

static const sh_service task_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, task_meta.id, NULL, task_attach, task_handle_event,
};
static const sh_service *const services[] = {&task_service};
static sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    if (offer == NULL || offer->abi_min > SH_ABI_VERSION || offer->abi_max < SH_ABI_VERSION_MIN) {
        plugin.service_count = 0;
        plugin.error = "test.task: no ABI version in common with the host";
        return &plugin;
    }
    plugin.abi_version = offer->abi_max < SH_ABI_VERSION ? offer->abi_max : SH_ABI_VERSION;
    return &plugin;
}
