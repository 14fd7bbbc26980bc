// ServiceMetadata — the build-tool plugin of a Swift ServiceHost plugin.
//
// Apply it to a target holding ApplicationService classes and a
// servicehost.json manifest (list the manifest in the target's `exclude:`):
//
//     .target(name: "Logger", dependencies: ["ServiceKit"], path: "Plugins/Logger",
//             exclude: ["servicehost.json"], plugins: ["ServiceMetadata"])
//
// It runs servicehost-metagen on the manifest, which generates
// ServiceHostEntry.swift: the static metadata records and the exported
// servicehost_entry. The manifest format is documented at the top of
// Sources/servicehost-metagen/main.swift and on ServiceKit's ServicePlugin.

import Foundation
import PackagePlugin

@main
struct ServiceMetadata: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else {
            throw ServiceMetadataError(
                "target '\(target.name)' has no sources; apply ServiceMetadata to a Swift target")
        }
        let manifest = target.directoryURL.appending(path: "servicehost.json")
        guard FileManager.default.fileExists(atPath: manifest.path(percentEncoded: false)) else {
            throw ServiceMetadataError(
                "target '\(target.name)' uses the ServiceMetadata plugin but has no manifest at "
                    + "\(manifest.path(percentEncoded: false)); create servicehost.json there "
                    + "(and add it to the target's exclude:)")
        }
        warnUnlessInDynamicLibrary(target, of: context.package)
        let output = context.pluginWorkDirectoryURL.appending(path: "ServiceHostEntry.swift")
        return [
            .buildCommand(
                displayName: "Generating ServiceHost metadata for \(target.name)",
                executable: try context.tool(named: "servicehost-metagen").url,
                arguments: [manifest.path(percentEncoded: false), output.path(percentEncoded: false)],
                inputFiles: [manifest],
                outputFiles: [output]
            )
        ]
    }
}

/// Warns when no `.library(type: .dynamic)` product holds `target`: SwiftPM then builds no
/// `.so`, and the build "succeeds" with nothing for `host --plugins` to load.
func warnUnlessInDynamicLibrary(_ target: SourceModuleTarget, of package: Package) {
    let inDynamicLibrary = package.products.contains { product in
        guard let library = product as? LibraryProduct, case .dynamic = library.kind else { return false }
        return library.targets.contains { $0.id == target.id }
    }
    if !inDynamicLibrary {
        Diagnostics.warning(
            "target '\(target.name)' is a ServiceHost plugin but no dynamic library product holds it, so the "
                + "build makes no lib\(target.name).so for host --plugins to load; add "
                + ".library(name: \"\(target.name)\", type: .dynamic, targets: [\"\(target.name)\"]) to the package's products"
        )
    }
}

/// A plugin failure with a message for the build log.
struct ServiceMetadataError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
