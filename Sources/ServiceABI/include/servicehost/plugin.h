/*
 * servicehost/plugin.h — the entry symbol, version negotiation and services.
 *
 * A plugin is one shared library; it holds one or more services. The host
 * finds the library's single exported symbol, servicehost_entry, calls it
 * once with what it offers, and gets back the plugin's services.
 */
#ifndef SERVICEHOST_PLUGIN_H
#define SERVICEHOST_PLUGIN_H

#include "events.h"
#include "host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The one symbol every plugin exports. */
#define SH_ENTRY_SYMBOL "servicehost_entry"

#define SH_HOST_OFFER_VERSION 1u
/* sizeof(sh_host_offer) in version 1, frozen (layout.h). */
#define SH_HOST_OFFER_SIZE_V1 24u

/* What the host offers the plugin.
 * Owner: the host. Valid: during servicehost_entry only.
 * Thread: the host's main thread. */
typedef struct sh_host_offer {
    /* sizeof(sh_host_offer) as the host compiled it. */
    uint32_t size;
    /* SH_HOST_OFFER_VERSION as the host compiled it. */
    uint32_t version;
    /* The oldest ABI version the host speaks. */
    uint32_t abi_min;
    /* The newest ABI version the host speaks. */
    uint32_t abi_max;
    /* The host's name and version, NUL-terminated. Static: unlike the
     * struct, valid for the process lifetime, on any thread (the same string
     * as sh_host.host_version). */
    const char *host_version;
} sh_host_offer;

#define SH_SERVICE_VERSION 1u
/* sizeof(sh_service) in version 1, frozen (layout.h). */
#define SH_SERVICE_SIZE_V1 40u

/* One service: what the host calls.
 * Owner: the plugin. Valid: for the process lifetime (the host never unloads
 * a plugin). Thread: each member says.
 * A service started anew from a changed file (SH_LAUNCH_RESTART: a reload of
 * a changed file) runs from a new load of it (a copy of its own), so
 * servicehost_entry runs again and the new sh_service gets its own attach; the
 * old load stays mapped and is never called again. A service of an unchanged
 * file started again in the same process (host ctl service stop/start or
 * restart, a reload that changes only its settings, disabled then enabled)
 * keeps its load: it gets the launch events again (SH_LAUNCH_RESTART), without
 * a second attach. A process-isolated service's new worker loads it anew. */
typedef struct sh_service {
    /* sizeof(sh_service) as the plugin compiled it. */
    uint32_t size;
    /* SH_SERVICE_VERSION as the plugin compiled it. */
    uint32_t version;
    /* The service's reverse-DNS id, NUL-terminated. It must equal the id of
     * one sh_meta_service record in the same library (see metadata.h).
     * Plugin-owned, like the struct; read by the host on its main thread. */
    const char *id;
    /* Plugin-owned; the host never reads it (its lifetime and threads are
     * the plugin's own business). */
    void *context;
    /* [main-thread] Called once, after servicehost_entry and before any event.
     * host is valid for the process lifetime. Return SH_OK, or SH_ERROR to
     * decline to run (log why first): the service then gets no events.
     * May be NULL. */
    int32_t (*attach)(const struct sh_service *service, const sh_host *host);
    /* [main-thread] Handle one event. Called only for kinds the service's
     * metadata lists, never for two events at once, never re-entrantly.
     * Returns an SH_* result (see sh_event_kind for each kind's answers). */
    int32_t (*handle_event)(const struct sh_service *service,
                            const sh_event *event);
} sh_service;

#define SH_PLUGIN_VERSION 1u
/* sizeof(sh_plugin) in version 1, frozen (layout.h). */
#define SH_PLUGIN_SIZE_V1 32u

/* The plugin's answer to the offer.
 * Owner: the plugin. Valid: for the process lifetime.
 * Thread: read by the host's main thread. */
typedef struct sh_plugin {
    /* sizeof(sh_plugin) as the plugin compiled it. */
    uint32_t size;
    /* SH_PLUGIN_VERSION as the plugin compiled it. */
    uint32_t version;
    /* The ABI version the plugin chose from the host's [abi_min, abi_max].
     * When no version fits, the plugin answers the newest it speaks and
     * service_count 0; the host refuses it naming both versions. */
    uint32_t abi_version;
    /* The number of entries in services. */
    uint32_t service_count;
    /* service_count pointers to the plugin's services. */
    const sh_service *const *services;
    /* Why the plugin declined to load (NUL-terminated), or NULL. */
    const char *error;
} sh_plugin;

/* The entry symbol's type. [main-thread] Called once per library load.
 * offer is valid during the call only. Returns the plugin's answer; NULL
 * means the plugin failed to initialise. */
typedef const sh_plugin *(*sh_entry_fn)(const sh_host_offer *offer);

#if defined(__GNUC__) || defined(__clang__)
#define SH_EXPORT __attribute__((visibility("default")))
#else
#define SH_EXPORT
#endif

/* The entry a C plugin defines:
 *     SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer)
 * Rationale: hidden from Swift, where ServiceKit defines it with @c. */
#if !defined(__swift__)
SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer);
#endif

#ifdef __cplusplus
}
#endif

#endif /* SERVICEHOST_PLUGIN_H */
