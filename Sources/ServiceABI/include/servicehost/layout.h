/*
 * servicehost/layout.h — ABI version 1's layouts, pinned.
 *
 * Every runtime struct's version-1 members keep these offsets for good, and
 * SH_*_SIZE_V1 is its version-1 size. A compiler that lays a struct out
 * differently fails here, at build time, instead of at run time in a host.
 * Tests/HostCoreTests/ABILayoutTests.swift checks the same numbers from Swift.
 *
 * Rationale: when a struct grows, its v1 lines below stay as they are; only
 * its "current size" line changes to the new size.
 */
#ifndef SERVICEHOST_LAYOUT_H
#define SERVICEHOST_LAYOUT_H

#include "plugin.h"
#include "scenes.h"
#include "background_tasks.h"
#include "sources.h"
#include "health.h"
#include "notifications.h"
#include "deploy.h"

#if defined(__cplusplus)
#define SH_LAYOUT_ASSERT(condition, message) static_assert(condition, message)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define SH_LAYOUT_ASSERT(condition, message) _Static_assert(condition, message)
#else
#define SH_LAYOUT_ASSERT(condition, message) struct sh_layout_unchecked /* C99: no static assertions */
#endif

/* The offset of member in type (members of later versions follow those of version 1). */
#define SH_LAYOUT_OFFSET(type, member, offset) \
    SH_LAYOUT_ASSERT(offsetof(type, member) == (offset), #type "." #member " is at offset " #offset " in ABI v1")
/* The current size of type: its version 1 size (SH_*_SIZE_V1) until a version appends members. */
#define SH_LAYOUT_SIZE(type, size) SH_LAYOUT_ASSERT(sizeof(type) == (size), #type " has the size its version says")


SH_LAYOUT_OFFSET(sh_host_offer, size, 0);
SH_LAYOUT_OFFSET(sh_host_offer, version, 4);
SH_LAYOUT_OFFSET(sh_host_offer, abi_min, 8);
SH_LAYOUT_OFFSET(sh_host_offer, abi_max, 12);
SH_LAYOUT_OFFSET(sh_host_offer, host_version, 16);
SH_LAYOUT_SIZE(sh_host_offer, SH_HOST_OFFER_SIZE_V1);

SH_LAYOUT_OFFSET(sh_plugin, size, 0);
SH_LAYOUT_OFFSET(sh_plugin, version, 4);
SH_LAYOUT_OFFSET(sh_plugin, abi_version, 8);
SH_LAYOUT_OFFSET(sh_plugin, service_count, 12);
SH_LAYOUT_OFFSET(sh_plugin, services, 16);
SH_LAYOUT_OFFSET(sh_plugin, error, 24);
SH_LAYOUT_SIZE(sh_plugin, SH_PLUGIN_SIZE_V1);

SH_LAYOUT_OFFSET(sh_service, size, 0);
SH_LAYOUT_OFFSET(sh_service, version, 4);
SH_LAYOUT_OFFSET(sh_service, id, 8);
SH_LAYOUT_OFFSET(sh_service, context, 16);
SH_LAYOUT_OFFSET(sh_service, attach, 24);
SH_LAYOUT_OFFSET(sh_service, handle_event, 32);
SH_LAYOUT_SIZE(sh_service, SH_SERVICE_SIZE_V1);

SH_LAYOUT_OFFSET(sh_host, size, 0);
SH_LAYOUT_OFFSET(sh_host, version, 4);
SH_LAYOUT_OFFSET(sh_host, host_data, 8);
SH_LAYOUT_OFFSET(sh_host, host_version, 16);
SH_LAYOUT_OFFSET(sh_host, log, 24);
SH_LAYOUT_OFFSET(sh_host, post, 32);
SH_LAYOUT_OFFSET(sh_host, app_state, 40);
SH_LAYOUT_OFFSET(sh_host, store_get, 48);
SH_LAYOUT_OFFSET(sh_host, store_set, 56);
SH_LAYOUT_OFFSET(sh_host, store_remove, 64);
SH_LAYOUT_OFFSET(sh_host, store_keys, 72);
SH_LAYOUT_OFFSET(sh_host, get_extension, 80);
SH_LAYOUT_OFFSET(sh_host, subscribe, 88);
SH_LAYOUT_OFFSET(sh_host, unsubscribe, 96);
SH_LAYOUT_OFFSET(sh_host, register_for_remote_notifications, 104);
SH_LAYOUT_ASSERT(offsetof(sh_host, register_for_remote_notifications) + 8 == SH_HOST_SIZE_V1, "sh_host v1 ends after register_for_remote_notifications");
SH_LAYOUT_OFFSET(sh_host, notification_settings, 112);
SH_LAYOUT_OFFSET(sh_host, request_authorization, 120);
SH_LAYOUT_OFFSET(sh_host, set_scene_restoration, 128);
SH_LAYOUT_ASSERT(offsetof(sh_host, set_scene_restoration) + 8 == SH_HOST_SIZE_V2, "sh_host v2 ends after set_scene_restoration");
SH_LAYOUT_OFFSET(sh_host, control, 136);
SH_LAYOUT_ASSERT(offsetof(sh_host, control) + 8 == SH_HOST_SIZE_V3, "sh_host v3 ends after control");
SH_LAYOUT_OFFSET(sh_host, request, 144);
SH_LAYOUT_SIZE(sh_host, SH_HOST_SIZE_V4);

SH_LAYOUT_OFFSET(sh_event, size, 0);
SH_LAYOUT_OFFSET(sh_event, version, 4);
SH_LAYOUT_OFFSET(sh_event, kind, 8);
SH_LAYOUT_OFFSET(sh_event, app_state, 12);
SH_LAYOUT_OFFSET(sh_event, seq, 16);
SH_LAYOUT_OFFSET(sh_event, data, 24);
SH_LAYOUT_OFFSET(sh_event, completion, 32);
SH_LAYOUT_SIZE(sh_event, SH_EVENT_SIZE_V1);

SH_LAYOUT_OFFSET(sh_completion, size, 0);
SH_LAYOUT_OFFSET(sh_completion, version, 4);
SH_LAYOUT_OFFSET(sh_completion, host_data, 8);
SH_LAYOUT_OFFSET(sh_completion, complete, 16);
SH_LAYOUT_SIZE(sh_completion, SH_COMPLETION_SIZE_V1);

SH_LAYOUT_OFFSET(sh_json, size, 0);
SH_LAYOUT_OFFSET(sh_json, version, 4);
SH_LAYOUT_OFFSET(sh_json, nodes, 8);
SH_LAYOUT_OFFSET(sh_json, count, 16);
SH_LAYOUT_SIZE(sh_json, SH_JSON_SIZE_V1);

SH_LAYOUT_OFFSET(sh_json_node, type, 0);
SH_LAYOUT_OFFSET(sh_json_node, count, 4);
SH_LAYOUT_OFFSET(sh_json_node, next, 8);
SH_LAYOUT_OFFSET(sh_json_node, reserved, 12);
SH_LAYOUT_OFFSET(sh_json_node, string, 16);
SH_LAYOUT_OFFSET(sh_json_node, length, 24);
SH_LAYOUT_OFFSET(sh_json_node, number, 32);
SH_LAYOUT_SIZE(sh_json_node, 40); /* tape nodes: fixed, never grow */

SH_LAYOUT_OFFSET(sh_launch_options, size, 0);
SH_LAYOUT_OFFSET(sh_launch_options, version, 4);
SH_LAYOUT_OFFSET(sh_launch_options, flags, 8);
SH_LAYOUT_OFFSET(sh_launch_options, reserved, 12);
SH_LAYOUT_OFFSET(sh_launch_options, settings_json, 16);
SH_LAYOUT_OFFSET(sh_launch_options, settings_len, 24);
SH_LAYOUT_OFFSET(sh_launch_options, notification, 32);
SH_LAYOUT_OFFSET(sh_launch_options, url, 40);
SH_LAYOUT_OFFSET(sh_launch_options, activity, 48);
SH_LAYOUT_ASSERT(offsetof(sh_launch_options, activity) + 8 == SH_LAUNCH_OPTIONS_SIZE_V1, "sh_launch_options v1 ends after activity");
SH_LAYOUT_OFFSET(sh_launch_options, restored_state, 56);
SH_LAYOUT_OFFSET(sh_launch_options, restored_state_len, 64);
SH_LAYOUT_OFFSET(sh_launch_options, restored_from_id, 72);
SH_LAYOUT_OFFSET(sh_launch_options, restored_from_version, 80);
SH_LAYOUT_SIZE(sh_launch_options, SH_LAUNCH_OPTIONS_SIZE_V2);

SH_LAYOUT_OFFSET(sh_push, size, 0);
SH_LAYOUT_OFFSET(sh_push, version, 4);
SH_LAYOUT_OFFSET(sh_push, flags, 8);
SH_LAYOUT_OFFSET(sh_push, reserved, 12);
SH_LAYOUT_OFFSET(sh_push, json, 16);
SH_LAYOUT_OFFSET(sh_push, json_len, 24);
SH_LAYOUT_OFFSET(sh_push, parsed, 32);
SH_LAYOUT_OFFSET(sh_push, action_id, 40);
SH_LAYOUT_SIZE(sh_push, SH_PUSH_SIZE_V1);

SH_LAYOUT_OFFSET(sh_device_token, size, 0);
SH_LAYOUT_OFFSET(sh_device_token, version, 4);
SH_LAYOUT_OFFSET(sh_device_token, bytes, 8);
SH_LAYOUT_OFFSET(sh_device_token, length, 16);
SH_LAYOUT_OFFSET(sh_device_token, hex, 24);
SH_LAYOUT_SIZE(sh_device_token, SH_DEVICE_TOKEN_SIZE_V1);

SH_LAYOUT_OFFSET(sh_error_info, size, 0);
SH_LAYOUT_OFFSET(sh_error_info, version, 4);
SH_LAYOUT_OFFSET(sh_error_info, message, 8);
SH_LAYOUT_SIZE(sh_error_info, SH_ERROR_INFO_SIZE_V1);

SH_LAYOUT_OFFSET(sh_open_url, size, 0);
SH_LAYOUT_OFFSET(sh_open_url, version, 4);
SH_LAYOUT_OFFSET(sh_open_url, flags, 8);
SH_LAYOUT_OFFSET(sh_open_url, reserved, 12);
SH_LAYOUT_OFFSET(sh_open_url, url, 16);
SH_LAYOUT_OFFSET(sh_open_url, scheme, 24);
SH_LAYOUT_OFFSET(sh_open_url, host, 32);
SH_LAYOUT_SIZE(sh_open_url, SH_OPEN_URL_SIZE_V1);

SH_LAYOUT_OFFSET(sh_shortcut_item, size, 0);
SH_LAYOUT_OFFSET(sh_shortcut_item, version, 4);
SH_LAYOUT_OFFSET(sh_shortcut_item, flags, 8);
SH_LAYOUT_OFFSET(sh_shortcut_item, reserved, 12);
SH_LAYOUT_OFFSET(sh_shortcut_item, id, 16);
SH_LAYOUT_OFFSET(sh_shortcut_item, title, 24);
SH_LAYOUT_SIZE(sh_shortcut_item, SH_SHORTCUT_ITEM_SIZE_V1);

SH_LAYOUT_OFFSET(sh_user_activity, size, 0);
SH_LAYOUT_OFFSET(sh_user_activity, version, 4);
SH_LAYOUT_OFFSET(sh_user_activity, flags, 8);
SH_LAYOUT_OFFSET(sh_user_activity, reserved, 12);
SH_LAYOUT_OFFSET(sh_user_activity, type, 16);
SH_LAYOUT_OFFSET(sh_user_activity, webpage_url, 24);
SH_LAYOUT_OFFSET(sh_user_activity, user_info_json, 32);
SH_LAYOUT_OFFSET(sh_user_activity, user_info_len, 40);
SH_LAYOUT_OFFSET(sh_user_activity, user_info, 48);
SH_LAYOUT_SIZE(sh_user_activity, SH_USER_ACTIVITY_SIZE_V1);

SH_LAYOUT_OFFSET(sh_notification, size, 0);
SH_LAYOUT_OFFSET(sh_notification, version, 4);
SH_LAYOUT_OFFSET(sh_notification, name, 8);
SH_LAYOUT_OFFSET(sh_notification, sender, 16);
SH_LAYOUT_OFFSET(sh_notification, json, 24);
SH_LAYOUT_OFFSET(sh_notification, json_len, 32);
SH_LAYOUT_ASSERT(offsetof(sh_notification, json_len) + 8 == SH_NOTIFICATION_SIZE_V1, "sh_notification v1 ends after json_len");
SH_LAYOUT_OFFSET(sh_notification, parsed, 40);
SH_LAYOUT_SIZE(sh_notification, SH_NOTIFICATION_SIZE_V2);

SH_LAYOUT_OFFSET(sh_notification_settings, size, 0);
SH_LAYOUT_OFFSET(sh_notification_settings, version, 4);
SH_LAYOUT_OFFSET(sh_notification_settings, status, 8);
SH_LAYOUT_OFFSET(sh_notification_settings, allowed, 12);
SH_LAYOUT_SIZE(sh_notification_settings, SH_NOTIFICATION_SETTINGS_SIZE_V1);

SH_LAYOUT_OFFSET(sh_request, size, 0);
SH_LAYOUT_OFFSET(sh_request, version, 4);
SH_LAYOUT_OFFSET(sh_request, name, 8);
SH_LAYOUT_OFFSET(sh_request, from, 16);
SH_LAYOUT_OFFSET(sh_request, json, 24);
SH_LAYOUT_OFFSET(sh_request, json_len, 32);
SH_LAYOUT_OFFSET(sh_request, parsed, 40);
SH_LAYOUT_SIZE(sh_request, SH_REQUEST_SIZE_V1);

SH_LAYOUT_OFFSET(sh_settings_change, size, 0);
SH_LAYOUT_OFFSET(sh_settings_change, version, 4);
SH_LAYOUT_OFFSET(sh_settings_change, old_json, 8);
SH_LAYOUT_OFFSET(sh_settings_change, old_len, 16);
SH_LAYOUT_OFFSET(sh_settings_change, new_json, 24);
SH_LAYOUT_OFFSET(sh_settings_change, new_len, 32);
SH_LAYOUT_SIZE(sh_settings_change, SH_SETTINGS_CHANGE_SIZE_V1);

SH_LAYOUT_OFFSET(sh_dependency, size, 0);
SH_LAYOUT_OFFSET(sh_dependency, version, 4);
SH_LAYOUT_OFFSET(sh_dependency, id, 8);
SH_LAYOUT_OFFSET(sh_dependency, service_version, 16);
SH_LAYOUT_SIZE(sh_dependency, SH_DEPENDENCY_SIZE_V1);

SH_LAYOUT_OFFSET(sh_scene, size, 0);
SH_LAYOUT_OFFSET(sh_scene, version, 4);
SH_LAYOUT_OFFSET(sh_scene, id, 8);
SH_LAYOUT_OFFSET(sh_scene, name, 16);
SH_LAYOUT_OFFSET(sh_scene, role, 24);
SH_LAYOUT_OFFSET(sh_scene, state, 32);
SH_LAYOUT_OFFSET(sh_scene, reserved, 36);
SH_LAYOUT_OFFSET(sh_scene, configuration, 40);
SH_LAYOUT_OFFSET(sh_scene, settings_json, 48);
SH_LAYOUT_OFFSET(sh_scene, settings_len, 56);
SH_LAYOUT_OFFSET(sh_scene, settings, 64);
SH_LAYOUT_SIZE(sh_scene, SH_SCENE_SIZE_V1);

SH_LAYOUT_OFFSET(sh_scene_connection_options, size, 0);
SH_LAYOUT_OFFSET(sh_scene_connection_options, version, 4);
SH_LAYOUT_OFFSET(sh_scene_connection_options, flags, 8);
SH_LAYOUT_OFFSET(sh_scene_connection_options, reserved, 12);
SH_LAYOUT_OFFSET(sh_scene_connection_options, url_contexts, 16);
SH_LAYOUT_OFFSET(sh_scene_connection_options, url_context_count, 24);
SH_LAYOUT_OFFSET(sh_scene_connection_options, user_activities, 32);
SH_LAYOUT_OFFSET(sh_scene_connection_options, user_activity_count, 40);
SH_LAYOUT_ASSERT(offsetof(sh_scene_connection_options, user_activity_count) + 8 == SH_SCENE_CONNECTION_OPTIONS_SIZE_V1,
                 "sh_scene_connection_options v1 ends after user_activity_count");
SH_LAYOUT_OFFSET(sh_scene_connection_options, restoration_activity, 48);
SH_LAYOUT_SIZE(sh_scene_connection_options, SH_SCENE_CONNECTION_OPTIONS_SIZE_V2);

SH_LAYOUT_OFFSET(sh_scene_configuration, size, 0);
SH_LAYOUT_OFFSET(sh_scene_configuration, version, 4);
SH_LAYOUT_OFFSET(sh_scene_configuration, name, 8);
SH_LAYOUT_OFFSET(sh_scene_configuration, role, 72);
SH_LAYOUT_OFFSET(sh_scene_configuration, settings, 104);
SH_LAYOUT_OFFSET(sh_scene_configuration, settings_capacity, 112);
SH_LAYOUT_OFFSET(sh_scene_configuration, settings_len, 120);
SH_LAYOUT_SIZE(sh_scene_configuration, SH_SCENE_CONFIGURATION_SIZE_V1);

SH_LAYOUT_OFFSET(sh_scene_connection, size, 0);
SH_LAYOUT_OFFSET(sh_scene_connection, version, 4);
SH_LAYOUT_OFFSET(sh_scene_connection, scene, 8);
SH_LAYOUT_OFFSET(sh_scene_connection, options, 16);
SH_LAYOUT_OFFSET(sh_scene_connection, configuration, 24);
SH_LAYOUT_SIZE(sh_scene_connection, SH_SCENE_CONNECTION_SIZE_V1);

SH_LAYOUT_OFFSET(sh_scene_open_url, size, 0);
SH_LAYOUT_OFFSET(sh_scene_open_url, version, 4);
SH_LAYOUT_OFFSET(sh_scene_open_url, scene, 8);
SH_LAYOUT_OFFSET(sh_scene_open_url, url, 16);
SH_LAYOUT_SIZE(sh_scene_open_url, SH_SCENE_OPEN_URL_SIZE_V1);

SH_LAYOUT_OFFSET(sh_scene_user_activity, size, 0);
SH_LAYOUT_OFFSET(sh_scene_user_activity, version, 4);
SH_LAYOUT_OFFSET(sh_scene_user_activity, scene, 8);
SH_LAYOUT_OFFSET(sh_scene_user_activity, activity, 16);
SH_LAYOUT_SIZE(sh_scene_user_activity, SH_SCENE_USER_ACTIVITY_SIZE_V1);

SH_LAYOUT_OFFSET(sh_background_tasks, size, 0);
SH_LAYOUT_OFFSET(sh_background_tasks, version, 4);
SH_LAYOUT_OFFSET(sh_background_tasks, begin, 8);
SH_LAYOUT_OFFSET(sh_background_tasks, end, 16);
SH_LAYOUT_SIZE(sh_background_tasks, SH_BACKGROUND_TASKS_SIZE_V1);

SH_LAYOUT_OFFSET(sh_sources, size, 0);
SH_LAYOUT_OFFSET(sh_sources, version, 4);
SH_LAYOUT_OFFSET(sh_sources, move_app, 8);
SH_LAYOUT_OFFSET(sh_sources, watch, 16);
SH_LAYOUT_OFFSET(sh_sources, unwatch, 24);
SH_LAYOUT_OFFSET(sh_sources, set_current_state, 32);
SH_LAYOUT_SIZE(sh_sources, SH_SOURCES_SIZE_V1);
SH_LAYOUT_OFFSET(sh_health_reporting, size, 0);
SH_LAYOUT_OFFSET(sh_health_reporting, version, 4);
SH_LAYOUT_OFFSET(sh_health_reporting, report, 8);
SH_LAYOUT_SIZE(sh_health_reporting, SH_HEALTH_EXTENSION_SIZE_V1);
SH_LAYOUT_OFFSET(sh_notifications, size, 0);
SH_LAYOUT_OFFSET(sh_notifications, version, 4);
SH_LAYOUT_OFFSET(sh_notifications, set_categories, 8);
SH_LAYOUT_SIZE(sh_notifications, SH_NOTIFICATIONS_SIZE_V1);

SH_LAYOUT_OFFSET(sh_deploy, size, 0);
SH_LAYOUT_OFFSET(sh_deploy, version, 4);
SH_LAYOUT_OFFSET(sh_deploy, deploy, 8);
SH_LAYOUT_SIZE(sh_deploy, SH_DEPLOY_SIZE_V1);

#undef SH_LAYOUT_OFFSET
#undef SH_LAYOUT_SIZE
#undef SH_LAYOUT_ASSERT

#endif /* SERVICEHOST_LAYOUT_H */
