/*
 * servicehost.h — the whole contract between the ServiceHost host and its plugins.
 *
 * Include this one header. A C service needs nothing else:
 *     cc -shared -fPIC -I Sources/ServiceABI/include my_service.c -o libMyService.so
 *
 * Conventions of every header below (after CLAP):
 * - Every struct starts with its size and version, so either side can tell
 *   which members the other was compiled with.
 * - Every member says who owns its memory, how long it stays valid and which
 *   thread may use it: [main-thread] means the host's one main thread, where
 *   every service call happens; [thread-safe] means any thread, at any time.
 * - Tables handed to plugins are append-only.
 */
#ifndef SERVICEHOST_H
#define SERVICEHOST_H

#include "servicehost/version.h"
#include "servicehost/json.h"
#include "servicehost/events.h"
#include "servicehost/scenes.h"
#include "servicehost/host.h"
#include "servicehost/background_tasks.h"
#include "servicehost/sources.h"
#include "servicehost/health.h"
#include "servicehost/notifications.h"
#include "servicehost/deploy.h"
#include "servicehost/plugin.h"
#include "servicehost/metadata.h"
#include "servicehost/layout.h"

#endif /* SERVICEHOST_H */
