// swift-tools-version: 6.2
// ServiceHost: a plugin host for Swift services on Linux. No package dependencies:
// everything here builds with the Swift toolchain alone.
import PackageDescription

// Start-up (issue 13, row 3's fixed cost): the host's code reaches generic metadata (Dictionary,
// Set, Locked<…> of concrete types) through direct accessor calls, not by mangled name; by name,
// each first use made the runtime demangle and scan every image's protocol conformances (~0.1 ms
// of a ~4 ms start). Host targets only: ServiceKit, which every plugin links, carries none.
// ServiceKitTesting reaches them through HostCore; SwiftPM accepts them from a version-based
// dependency because this manifest is tools-version 6.2 or later (PackageManifestTests).
// Nor does the release host load libswiftSynchronization: optimized, `Atomic` is inlined whole
// and the host uses no symbol of the library (`Mutex` is ruled out, see SourceRulesTests), but every module that
// imports Synchronization autolinks it, and loading it cost ~0.1 ms of every start. A symbol
// of it used later fails the link, loudly.
let hostCodegen: [SwiftSetting] = [
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"]),
    // Release only: unoptimized code calls Atomic's witnesses in the library.
    .unsafeFlags(
        ["-Xfrontend", "-disable-autolink-library", "-Xfrontend", "swiftSynchronization"],
        .when(configuration: .release)),
    // Each function in a section of its own, so the release link can order them (below).
    .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release)),
]

// The release host's code in the order a start first enters it (Sources/host/startup-order.txt,
// written by scripts/startup-order): a start then faults in ~6 blocks of 64 KiB of the host's
// code, not ~30 (one in every block); ~0.13 ms of the fixed start (issue 13). gold, the
// toolchain's linker on Linux, reads the list; a name it does not find is skipped.
// A release folder built before the flag above keeps its objects (Swift skips codegen when a
// module's IR is unchanged, and the flag does not change it): delete its *.build/*.o once.
let hostLayout: [LinkerSetting] = [
    .unsafeFlags(
        ["-Xlinker", "--section-ordering-file=\(Context.packageDirectory)/Sources/host/startup-order.txt"],
        .when(configuration: .release))
]

let package = Package(
    name: "ServiceHost",
    products: [
        // The host executable: `host --plugins DIR`.
        .executable(name: "host", targets: ["host"]),
        // The SDK a Swift service links (each plugin carries its own copy).
        .library(name: "ServiceKit", targets: ["ServiceKit"]),
        // Runs a service class in a unit test, without the host: TestHost.
        .library(name: "ServiceKitTesting", targets: ["ServiceKitTesting"]),
        // The build plugin that embeds a Swift plugin's static metadata and entry.
        .plugin(name: "ServiceMetadata", targets: ["ServiceMetadata"]),
        // The C contract, for C services built with SwiftPM.
        .library(name: "ServiceABI", targets: ["ServiceABI"]),
        // Bundled services, each its own shared library.
        .library(name: "Logger", type: .dynamic, targets: ["Logger"]),
        .library(name: "Uptime", type: .dynamic, targets: ["Uptime"]),
        .library(name: "PushNotifications", type: .dynamic, targets: ["PushNotifications"]),
        .library(name: "DeepLinks", type: .dynamic, targets: ["DeepLinks"]),
        .library(name: "Analytics", type: .dynamic, targets: ["Analytics"]),
        .library(name: "OfflineQueue", type: .dynamic, targets: ["OfflineQueue"]),
        .library(name: "Onboarding", type: .dynamic, targets: ["Onboarding"]),
        .library(name: "CarDisplay", type: .dynamic, targets: ["CarDisplay"]),
        .library(name: "MQTTBridge", type: .dynamic, targets: ["MQTTBridge"]),
        // scripts/bench: the Swift service it copies into generated plugins.
        .library(name: "BenchSwiftService", type: .dynamic, targets: ["BenchSwiftService"]),
    ],
    targets: [
        // The contract: C headers only.
        .target(name: "ServiceABI"),

        // JSON values, a strict parser and the ABI's parsed tape (sh_json), shared by the host
        // and the SDK (no Foundation).
        .target(name: "ServiceJSON", dependencies: ["ServiceABI"]),

        // The events (one table: name, kind, group, data) and the enums mirrored from the C
        // header, declared once for the host, the SDK and servicehost-metagen (no Foundation).
        .target(name: "ServiceVocabulary", dependencies: ["ServiceABI"]),

        // The lock (`Locked`, a pthread mutex) of the host and the SDK, `package`: not the SDK's
        // public API. Built by plugin packages with ServiceKit, so no unsafe flags.
        .target(name: "Locking"),

        // The host's log events and their fields, declared once for the host and the tests that read
        // its log (no Foundation). A plugin does not link it: the host's log is not the SDK's.
        .target(name: "LogEvents", swiftSettings: hostCodegen),

        // The host side. HostCore never links ServiceKit: only C types cross.
        .target(
            name: "HostCore",
            dependencies: [
                "ServiceABI", "ServiceJSON", "ServiceVocabulary", "LogEvents", "Locking", "CSystem", "MQTTCodec",
            ],
            swiftSettings: hostCodegen),
        // HostCore's libc calls that need _GNU_SOURCE (pipe2, accept4) and the dispatcher's C loop
        // (dispatch.c, over ServiceABI's types); internal.
        .target(name: "CSystem", dependencies: ["ServiceABI"]),
        .executableTarget(
            name: "host", dependencies: ["HostCore", "ServiceJSON"],
            exclude: ["startup-order.txt"],
            swiftSettings: hostCodegen, linkerSettings: hostLayout),

        // The service side.
        .target(name: "ServiceKit", dependencies: ["ServiceABI", "ServiceJSON", "ServiceVocabulary", "Locking"]),
        // TestHost: a service's unit tests, in process, without the host binary, on the host's
        // own lifecycle (HostCore). HostCore's unsafe flags do not keep plugin packages from
        // depending on this by version: SwiftPM 6.2 and later accept them from a dependency whose
        // manifest says swift-tools-version 6.2 or later (this one does; keep it so).
        .target(name: "ServiceKitTesting", dependencies: ["ServiceKit", "ServiceABI", "HostCore", "Locking"]),
        // Reads ServiceKit's JSON parser and ServicePlugin.sdkVersion, and the event table (one source each).
        .executableTarget(
            name: "servicehost-metagen", dependencies: ["ServiceABI", "ServiceJSON", "ServiceKit", "ServiceVocabulary"]),
        .plugin(
            name: "ServiceMetadata",
            capability: .buildTool(),
            dependencies: ["servicehost-metagen"],
            path: "Sources/ServiceMetadata"
        ),

        // Bundled services.
        .target(
            name: "Logger",
            dependencies: ["ServiceKit"],
            path: "Plugins/Logger",
            exclude: ["servicehost.json"],
            plugins: ["ServiceMetadata"]
        ),
        .target(name: "Uptime", dependencies: ["ServiceABI"], path: "Plugins/Uptime", publicHeadersPath: "."),
        .target(
            name: "PushNotifications",
            dependencies: ["ServiceKit"],
            path: "Plugins/PushNotifications",
            exclude: ["servicehost.json"],
            plugins: ["ServiceMetadata"]
        ),
        .target(
            name: "DeepLinks",
            dependencies: ["ServiceKit"],
            path: "Plugins/DeepLinks",
            exclude: ["servicehost.json"],
            plugins: ["ServiceMetadata"]
        ),
        .target(
            name: "Analytics",
            dependencies: ["ServiceKit"],
            path: "Plugins/Analytics",
            exclude: ["servicehost.json"],
            plugins: ["ServiceMetadata"]
        ),
        .target(
            name: "OfflineQueue",
            dependencies: ["ServiceKit"],
            path: "Plugins/OfflineQueue",
            exclude: ["servicehost.json"],
            plugins: ["ServiceMetadata"]
        ),
        .target(
            name: "Onboarding",
            dependencies: ["ServiceKit"],
            path: "Plugins/Onboarding",
            exclude: ["servicehost.json"],
            plugins: ["ServiceMetadata"]
        ),
        .target(
            name: "CarDisplay",
            dependencies: ["ServiceKit"],
            path: "Plugins/CarDisplay",
            exclude: ["servicehost.json"],
            plugins: ["ServiceMetadata"]
        ),
        .target(
            name: "MQTTBridge",
            dependencies: ["ServiceKit", "MQTTCodec"],
            path: "Plugins/MQTTBridge",
            exclude: ["servicehost.json", "Codec"],
            plugins: ["ServiceMetadata"]
        ),
        // MQTTBridge's MQTT packet codec, the broker's address and its reader and writer of fleet
        // bundles (ustar), on their own for their unit tests and fuzz targets (mqtt, bundle) and
        // for `host fleet` (HostCore), which does not link the plugin (issue 41).
        .target(name: "MQTTCodec", path: "Plugins/MQTTBridge/Codec"),

        // Benchmarks (scripts/bench): the runner and a minimal Swift service; the C floor and
        // fixtures in Sources/bench-c are compiled by scripts/bench with cc (no Swift runtime).
        .executableTarget(
            name: "servicehost-bench", dependencies: ["HostCore", "ServiceABI", "ServiceJSON", "MQTTCodec"]),
        .target(
            name: "BenchSwiftService", dependencies: ["ServiceKit"], path: "Sources/bench-swift-service",
            exclude: ["servicehost.json"], plugins: ["ServiceMetadata"]),
        // Row 3's baselines: an empty Swift program linked like the host, and the same with Foundation.
        .executableTarget(name: "bench-empty-swift"),
        .executableTarget(name: "bench-empty-foundation"),
        .executableTarget(name: "bench-empty-dispatch"),

        // Tests. TestSupport finds built products and compiles C fixtures.
        .target(name: "TestSupport", dependencies: ["LogEvents"], path: "Tests/Support"),
        .testTarget(name: "HostCoreTests", dependencies: ["HostCore", "ServiceABI", "MQTTCodec", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport"]),
        // The SDK's own checks (older, shorter structs from the host), without a host.
        .testTarget(
            name: "ServiceKitTests",
            dependencies: ["ServiceKit", "ServiceKitTesting", "ServiceABI", "Locking", "TestSupport"]),
        .testTarget(name: "ServiceJSONTests", dependencies: ["ServiceJSON", "ServiceABI"]),
        // The MQTT codec's own checks, and the replay of its fuzz corpus (Tests/Fuzz/Corpus/mqtt).
        .testTarget(name: "MQTTCodecTests", dependencies: ["MQTTCodec", "TestSupport"]),
        // MQTTBridge's settings and store readers, and the replay of their fuzz corpus (Tests/Fuzz/Corpus/bridge).
        .testTarget(name: "MQTTBridgeParserTests", dependencies: ["MQTTBridge", "MQTTCodec", "TestSupport"]),
        // Runs the built servicehost-metagen; reads its output with the host's decoder.
        .testTarget(name: "MetagenTests", dependencies: ["HostCore", "ServiceABI", "TestSupport"]),
    ]
)
