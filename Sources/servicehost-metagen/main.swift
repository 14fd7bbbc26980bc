// servicehost-metagen — turns a Swift plugin's servicehost.json into its static
// metadata records and its exported entry.
//
// Usage: servicehost-metagen <servicehost.json> <output.swift>
// Run by the ServiceMetadata build plugin; run it by hand to check a manifest.
//
// Manifest format (strict JSON, RFC 8259; unknown keys are errors):
//
//     {
//       "services": [
//         { "id": "dev.servicehost.deeplinks", "type": "DeepLinksService",
//           "name": "DeepLinks", "version": "1.0.0",
//           "events": ["openURL", "continueUserActivity"], "priority": 0,
//           "urls": ["myapp", "https://example.com"],
//           "activities": ["dev.servicehost.view-item"] }
//       ]
//     }
//
//   services    required, a non-empty array, one object per service in the library.
//   id          required; reverse-DNS: letters, digits, '-' and '_' in at least two
//               dot-separated labels, at most 127 bytes; unique in the manifest.
//   type        required; the Swift class (conforming to ServiceKit's
//               ApplicationService) created with `init()`, e.g. "LoggerService".
//   name        optional, defaults to type; at most 63 bytes.
//   version     optional, defaults to "0.0.0"; at most 31 bytes.
//   events      optional, defaults to []; event names: willFinishLaunching,
//               didFinishLaunching, didBecomeActive, willResignActive,
//               didEnterBackground, willEnterForeground, willTerminate,
//               notification, didReceiveMemoryWarning, willPresentNotification,
//               didReceiveNotificationResponse, didReceiveRemoteNotification,
//               didRegisterForRemoteNotifications,
//               didFailToRegisterForRemoteNotifications, openURL,
//               continueUserActivity, configurationForConnecting,
//               sceneWillConnect, sceneWillEnterForeground, sceneDidBecomeActive,
//               sceneWillResignActive, sceneDidEnterBackground, sceneDidDisconnect,
//               sceneOpenURLContexts, sceneContinueUserActivity; and the groups
//               "lifecycle" (the first seven), "push" (willPresentNotification,
//               didReceiveNotificationResponse, didReceiveRemoteNotification,
//               didRegisterForRemoteNotifications,
//               didFailToRegisterForRemoteNotifications), "scenes" (the nine scene
//               events; the type must adopt SceneService) and "all" (every event).
//   priority    optional, defaults to 0; an integer in Int32, higher runs earlier.
//   urls        optional; the URLs the service owns (SH_CLAIM_URL): a scheme
//               ("myapp") or a scheme and host ("https://example.com"), written
//               lowercase into the metadata. Needs the openURL or the
//               sceneOpenURLContexts event.
//   activities  optional; the user activity types the service owns
//               (SH_CLAIM_ACTIVITY). Needs the continueUserActivity or the
//               sceneContinueUserActivity event.
//   subscribes  optional; the notification names the service receives
//               (SH_CLAIM_NOTIFICATION), "*" for every name. Needs the
//               notification event.
//   sceneRoles  optional; the scene roles the service serves (SH_CLAIM_SCENE_ROLE):
//               "main", "car", "external". It then receives scene events only for
//               scenes of those roles (without it, for every scene). Needs a scene
//               event.
//   Each urls/activities/subscribes/sceneRoles value is a non-empty string of at most 119
//   bytes, listed once.
//
// Every error prints "<manifest path>: <JSON path>: <reason>" to stderr (for
// example "…/servicehost.json: services[1].events[0]: unknown event \"x\"")
// and exits 1, which fails the build.
//
// Output: one Swift file with one `@section("servicehost_meta") @used` global
// per record (sh_meta_plugin, then for each service its sh_meta_service and one
// sh_meta_claim per claimed value, byte for byte as metadata.h lays them out,
// little-endian, as UInt64 words so each record is 8-byte aligned like the C
// macros' records), and the exported `@c(servicehost_entry)` function calling
// ServiceKit's ServicePlugin.entry.

import ServiceABI
import ServiceKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// MARK: - Main

/// Prints one line to standard error.
func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

precondition(MemoryLayout<sh_meta_header>.size == 16, "sh_meta_header layout")
precondition(MemoryLayout<sh_meta_plugin>.size == 72, "sh_meta_plugin layout")
precondition(MemoryLayout<sh_meta_service>.size == 264, "sh_meta_service layout")
precondition(MemoryLayout<sh_meta_claim>.size == 272, "sh_meta_claim layout")
precondition(ServicePlugin.sdkVersion.utf8.count < Int(SH_META_SDK_MAX), "sdkVersion too long")
precondition(toolchain.utf8.count < Int(SH_META_TOOLCHAIN_MAX), "toolchain too long")

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    printError("usage: servicehost-metagen <servicehost.json> <output.swift>")
    exit(2)
}
let manifestPath = arguments[1]
do throws(ManifestError) {
    let specs = try parseManifest(try readFile(manifestPath))
    try writeIfChanged(generate(specs, manifestPath: manifestPath), to: arguments[2])
} catch {
    let location = error.path.isEmpty ? "" : "\(error.path): "
    printError("\(manifestPath): \(location)\(error.reason)")
    exit(1)
}
