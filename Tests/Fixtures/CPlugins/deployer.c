// A C service using the deploy extension (issue 40): when the notification "deploy.now"
// arrives with a JSON string payload (the folder of a staged set, "/path"), it asks its host
// to deploy that folder with a probation of DEPLOYER_PROBATION_MS, and writes the outcome
// to DEPLOYER_OUTCOME (a file path): the outcome's code, a space, and the host's JSON object.
// It also writes "unsupported" there when the host offers no deploys, and "invalid RESULT"
// when the call is refused at once.
#include <servicehost.h>
#include <stdio.h>
#include <string.h>

#ifndef DEPLOYER_PROBATION_MS
#define DEPLOYER_PROBATION_MS 1000u
#endif

SH_PLUGIN_METADATA("c");
SH_SERVICE_METADATA(deployer_meta, "test.deployer", "Deployer", "1.0.0",
                    SH_EVENTS_LIFECYCLE | SH_EVENT_BIT(SH_EVENT_NOTIFICATION), 0);

static const sh_host *host;          /* set in attach, on the main thread */
static const sh_deploy *deploys;     /* the extension, NULL when not offered */

static void record(const char *text) {
    FILE *file = fopen(DEPLOYER_OUTCOME, "w");
    if (file == NULL) return;
    fputs(text, file);
    fclose(file);
}

static void done(void *context, int32_t outcome, const char *json, size_t json_len) {
    (void)context;
    char line[4200];
    snprintf(line, sizeof line, "%d %.*s", (int)outcome, (int)(json_len < 4096 ? json_len : 4096), json);
    record(line);
}

static int32_t deployer_attach(const sh_service *service, const sh_host *h) {
    (void)service;
    host = h;
    deploys = (const sh_deploy *)host->get_extension(host, SH_DEPLOY_ID);
    return host->subscribe(host, "deploy.now");
}

static int32_t deployer_handle_event(const sh_service *service, const sh_event *event) {
    (void)service;
    if (event->kind != SH_EVENT_NOTIFICATION) return SH_OK;
    const sh_notification *notification = event->data;
    if (strcmp(notification->name, "deploy.now") != 0) return SH_OK;
    if (deploys == NULL || deploys->size < SH_DEPLOY_SIZE_V1) {
        record("unsupported");
        return SH_OK;
    }
    /* The payload is a JSON string without escapes: the folder between its quotes. */
    char folder[1024] = "";
    if (notification->json != NULL && notification->json_len >= 2 && notification->json_len < sizeof folder &&
        notification->json[0] == '"') {
        memcpy(folder, notification->json + 1, notification->json_len - 2);
        folder[notification->json_len - 2] = 0;
    }
    int32_t result = deploys->deploy(host, folder, DEPLOYER_PROBATION_MS, done, NULL);
    if (result != SH_OK) {
        char line[32];
        snprintf(line, sizeof line, "invalid %d", (int)result);
        record(line);
    }
    return SH_OK;
}

static const sh_service deployer_service = {
    sizeof(sh_service), SH_SERVICE_VERSION, deployer_meta.id, NULL, deployer_attach, deployer_handle_event,
};
static const sh_service *const services[] = {&deployer_service};
static sh_plugin plugin = {
    sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
};

SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
    if (offer == NULL || offer->abi_min > SH_ABI_VERSION || offer->abi_max < SH_ABI_VERSION_MIN) {
        plugin.service_count = 0;
        plugin.error = "test.deployer: no ABI version in common with the host";
        return &plugin;
    }
    plugin.abi_version = offer->abi_max < SH_ABI_VERSION ? offer->abi_max : SH_ABI_VERSION;
    return &plugin;
}
