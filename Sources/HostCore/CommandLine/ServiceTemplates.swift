/// The files `host new-service` writes: a Swift package or a C file, each building and
/// loading the first time against the SDK at `sdk`.
struct ServiceTemplates {
    /// The target, class prefix and library name (`Greeter` → `libGreeter.so`).
    let name: String
    /// The service id.
    let id: String
    /// The ServiceHost checkout or install the scaffold builds against.
    let sdk: String

    /// The URL scheme the Swift scaffold claims: the name, lowercased.
    var scheme: String { name.lowercased() }

    // MARK: - Swift

    var swiftFiles: [NewServiceCommand.File] {
        [
            .init(path: "Package.swift", text: package, executable: false),
            .init(path: "Sources/\(name)/\(name)Service.swift", text: serviceClass, executable: false),
            .init(path: "Sources/\(name)/servicehost.json", text: manifest, executable: false),
            .init(path: "Tests/\(name)Tests/\(name)ServiceTests.swift", text: serviceTest, executable: false),
            .init(path: "README.md", text: swiftReadme, executable: false),
            .init(path: ".gitignore", text: "/.build\n/lib\n", executable: false),
            .init(
                path: "scripts/sign", text: signScript(default: "\"$(swift build --show-bin-path)/lib\(name).so\""),
                executable: true),
        ]
    }

    var package: String {
        #"""
        // swift-tools-version: 6.2
        // \#(name): a ServiceHost plugin, written by `host new-service`.
        import PackageDescription

        let package = Package(
            name: "\#(name)",
            products: [
                // Keep `type: .dynamic`: it is what makes lib\#(name).so, the file `host --plugins`
                // loads. Without it the build succeeds and makes no plugin (the ServiceMetadata
                // build plugin warns).
                .library(name: "\#(name)", type: .dynamic, targets: ["\#(name)"]),
            ],
            dependencies: [
                // The ServiceHost checkout or install this scaffold came from.
                .package(name: "ServiceHost", path: "\#(sdk)"),
            ],
            targets: [
                .target(
                    name: "\#(name)",
                    dependencies: [.product(name: "ServiceKit", package: "ServiceHost")],
                    exclude: ["servicehost.json"],
                    plugins: [.plugin(name: "ServiceMetadata", package: "ServiceHost")]
                ),
                .testTarget(
                    name: "\#(name)Tests",
                    dependencies: ["\#(name)", .product(name: "ServiceKitTesting", package: "ServiceHost")]
                ),
            ]
        )

        """#
    }

    var serviceClass: String {
        #"""
        import ServiceKit

        /// \#(name): the lifecycle methods below have no-op defaults, so implement only those
        /// you need. Any other event needs its capability protocol (here URLHandling for
        /// openURL) and its name in servicehost.json's "events": the build fails, naming the
        /// method and the manifest, when the two disagree.
        final class \#(name)Service: URLHandling {
            func didFinishLaunching(_ options: LaunchOptions) -> Bool {
                host.log(.info, "\#(scheme): launched (first launch: \(options.isFirstServiceLaunch))")
                return true
            }

            func didBecomeActive() { host.log(.info, "\#(scheme): didBecomeActive") }

            func didEnterBackground() { host.log(.info, "\#(scheme): didEnterBackground") }

            /// \#(scheme)://… URLs: servicehost.json claims the scheme, so no other service is asked.
            func open(_ url: OpenURL) -> Bool {
                guard url.scheme == "\#(scheme)" else { return false }
                host.log(.info, "\#(scheme): open \(url.string)")
                return true
            }
        }

        """#
    }

    var manifest: String {
        #"""
        {
          "services": [
            {
              "id": "\#(id)",
              "type": "\#(name)Service",
              "name": "\#(name)",
              "version": "0.1.0",
              "events": ["lifecycle", "openURL"],
              "urls": ["\#(scheme)"]
            }
          ]
        }

        """#
    }

    var serviceTest: String {
        #"""
        import ServiceKitTesting
        import Testing
        @testable import \#(name)

        /// Runs the service in process with TestHost: no `host` binary, no .so.
        @Test func launch_logsAndOpensItsOwnURLs() {
            let host = TestHost(\#(name)Service(), id: "\#(id)")
            host.launch()
            #expect(host.deliveries == [.willFinishLaunching, .didFinishLaunching, .didBecomeActive])
            #expect(host.logs.contains(LogLine(.info, "\#(scheme): didBecomeActive")))

            #expect(host.open("\#(scheme)://item/42") == true)
            #expect(host.open("https://example.com") == false)

            host.background()
            #expect(host.deliveries.suffix(2) == [.willResignActive, .didEnterBackground])
        }

        """#
    }

    var swiftReadme: String {
        #"""
        # \#(name)

        A ServiceHost service (`\#(id)`). Build it, install it into a plugin folder, run it:

        ```sh
        swift build -c release
        mkdir -p lib && cp .build/release/lib\#(name).so lib/
        host --plugins lib
        ```

        Then, in another terminal, `host ctl open \#(scheme)://item/42`. `swift test` runs its
        TestHost test without the host. The package builds against the ServiceHost SDK at
        `\#(sdk)`; `host` comes from `scripts/install` there (or its `.build`).

        Add an event: list it in `Sources/\#(name)/servicehost.json` and adopt its capability
        protocol in `\#(name)Service` (`NotificationReceiving`, `PushPresenting`, …; the
        ServiceHost README's API reference lists them). The build fails, naming the method and
        the manifest, until both agree. Keep the product `type: .dynamic`: that is the `.so`.

        """#
    }

    func swiftSteps(_ directory: String) -> String {
        """
        next:
          cd \(directory)
          swift build -c release
          mkdir -p lib && cp .build/release/lib\(name).so lib/
          host --plugins lib
        """
    }

    // MARK: - C

    var cFile: String { name.lowercased() + ".c" }

    var cFiles: [NewServiceCommand.File] {
        [
            .init(path: cFile, text: cSource, executable: false),
            .init(path: "build.sh", text: buildScript, executable: true),
            .init(path: "README.md", text: cReadme, executable: false),
            .init(path: ".gitignore", text: "/lib\n", executable: false),
            .init(path: "scripts/sign", text: signScript(default: "lib/lib\(name).so"), executable: true),
        ]
    }

    var cSource: String {
        let prefix = name.lowercased()
        return #"""
            /* \#(name): a ServiceHost service in C, written by `host new-service --c`.
             * servicehost.h is the whole contract: every struct and member is described there. */
            #include <servicehost.h>
            #include <stdio.h>

            SH_PLUGIN_METADATA("c");
            /* The static metadata the host reads without running this file: id, name, version,
             * the events the service handles, priority. */
            SH_SERVICE_METADATA(\#(prefix)_meta, "\#(id)", "\#(name)", "0.1.0", SH_EVENTS_LIFECYCLE, 0);

            static const sh_host *host; /* set in attach, on the main thread; valid for the process */

            static int32_t \#(prefix)_attach(const sh_service *service, const sh_host *h) {
                (void)service;
                host = h;
                return SH_OK;
            }

            static int32_t \#(prefix)_handle_event(const sh_service *service, const sh_event *event) {
                (void)service;
                char line[96];
                snprintf(line, sizeof line, "\#(prefix): event %u, app state %d", event->kind, event->app_state);
                host->log(host, SH_LOG_INFO, line);
                return SH_OK;
            }

            static const sh_service \#(prefix)_service = {
                sizeof(sh_service), SH_SERVICE_VERSION, \#(prefix)_meta.id, NULL, \#(prefix)_attach, \#(prefix)_handle_event,
            };
            static const sh_service *const services[] = {&\#(prefix)_service};
            static sh_plugin plugin = {
                sizeof(sh_plugin), SH_PLUGIN_VERSION, SH_ABI_VERSION, 1, services, NULL,
            };

            /* Called once, on the host's main thread. Choose the newest ABI version both sides
             * speak; when none fits, answer no services and say why (the host logs it). */
            SH_EXPORT const sh_plugin *servicehost_entry(const sh_host_offer *offer) {
                if (offer == NULL || offer->size < sizeof(uint32_t) * 4 ||
                    offer->abi_min > SH_ABI_VERSION || offer->abi_max < SH_ABI_VERSION_MIN) {
                    plugin.service_count = 0;
                    plugin.error = "\#(name): no ABI version in common with the host";
                    return &plugin;
                }
                plugin.abi_version = offer->abi_max < SH_ABI_VERSION ? offer->abi_max : SH_ABI_VERSION;
                return &plugin;
            }

            """#
    }

    /// `scripts/sign [LIB]`: signs the built plugin with minisign for hosts that check
    /// signatures (issue 40); `library` is the file signed when none is given.
    func signScript(default library: String) -> String {
        #"""
        #!/bin/sh
        # Signs the plugin for hosts whose services.json says "signatures": "required" (or
        # "optional"): writes LIB.minisig beside LIB with minisign; install both files together.
        # The secret key is $MINISIGN_KEY, else ~/.minisign/minisign.key: make one once with
        # `minisign -G`, and give its public key (minisign.pub) to the hosts' "trustedKeys".
        set -eu
        cd "$(dirname "$0")/.."
        command -v minisign >/dev/null || { echo "scripts/sign: needs minisign (apt-get install minisign)" >&2; exit 1; }
        lib=${1:-\#(library)}
        key=${MINISIGN_KEY:-$HOME/.minisign/minisign.key}
        minisign -S -s "$key" -m "$lib" -t "\#(id) $(basename "$lib") signed $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "signed $lib: $lib.minisig"

        """#
    }

    var buildScript: String {
        #"""
        #!/bin/sh
        # Builds lib/lib\#(name).so from \#(cFile) against servicehost.h alone.
        set -eu
        cd "$(dirname "$0")"
        mkdir -p lib
        cc -std=c11 -Wall -Werror -shared -fPIC -I "\#(sdk)/Sources/ServiceABI/include" \#(cFile) -o lib/lib\#(name).so
        echo "built lib/lib\#(name).so"

        """#
    }

    var cReadme: String {
        #"""
        # \#(name)

        A ServiceHost service in C (`\#(id)`). Build it, install it, run it:

        ```sh
        ./build.sh                # cc … -o lib/lib\#(name).so
        chmod 755 lib             # plugins and their folder must not be writable by others
        host --plugins lib
        ```

        `\#(cFile)` includes only `servicehost.h` (from `\#(sdk)/Sources/ServiceABI/include`);
        to handle more events, add them to the events of `SH_SERVICE_METADATA` and switch on
        `event->kind` in `handle_event`.

        """#
    }

    func cSteps(_ directory: String) -> String {
        """
        next:
          cd \(directory)
          ./build.sh
          host --plugins lib
        """
    }
}
