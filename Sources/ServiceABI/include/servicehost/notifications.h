/*
 * servicehost/notifications.h — the notifications extension (issue 39).
 *
 * UIKit's UNUserNotificationCenter.setNotificationCategories(_:): a service
 * registers the categories a push may name in aps.category, each with its
 * action buttons. The desktop's notification server shows a push of that
 * category with those buttons, and a click delivers
 * didReceiveNotificationResponse with the action's id (the host's README,
 * "On the Linux desktop").
 *
 * Found with host->get_extension(host, SH_NOTIFICATIONS_ID); NULL from a host
 * that does not offer it. The table is host-owned, valid for the process
 * lifetime, append-only: a member added later comes with a new
 * SH_NOTIFICATIONS_VERSION, and a caller checks `size` before using it.
 */
#ifndef SERVICEHOST_NOTIFICATIONS_H
#define SERVICEHOST_NOTIFICATIONS_H

#include <stddef.h>

#include "host.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SH_NOTIFICATIONS_ID "dev.servicehost.notifications/1"
#define SH_NOTIFICATIONS_VERSION 1u
/* sizeof(sh_notifications) in version 1, frozen. */
#define SH_NOTIFICATIONS_SIZE_V1 16u
/* The longest categories document set_categories takes, in bytes. */
#define SH_NOTIFICATIONS_MAX_CATEGORIES_BYTES 65536u

typedef struct sh_notifications {
    uint32_t size;    /* sizeof(sh_notifications) as the host was built */
    uint32_t version; /* SH_NOTIFICATIONS_VERSION */

    /* [main-thread] Replaces this service's categories with those of json:
     * length bytes of UTF-8 JSON (no NUL needed), read during the call only,
     * in the format of services.json's "notificationCategories":
     *   {"message": [{"id": "reply", "title": "Reply"}]}
     * (at most 10 actions a category; an action id is not "default", is
     * listed once, and neither id nor title has control characters; {} clears
     * them). The configuration's categories win over a service's for a
     * category both name. Works in process and in a worker process.
     * Returns SH_OK, or SH_INVALID (logged as notificationCategories.refused
     * with the reason; the service's previous categories stay) for a NULL
     * json, more than SH_NOTIFICATIONS_MAX_CATEGORIES_BYTES, or a document
     * that is not valid. */
    int32_t (*set_categories)(const struct sh_host *host, const char *json, size_t length);
} sh_notifications;

#ifdef __cplusplus
}
#endif

#endif /* SERVICEHOST_NOTIFICATIONS_H */
