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
            throw ServiceMetadataError("target '\(target.name)' has no sources; apply ServiceMetadata to a Swift target")
        }
        let manifest = target.directoryURL.appending(path: "servicehost.json")
        guard FileManager.default.fileExists(atPath: manifest.path(percentEncoded: false)) else {
            throw ServiceMetadataError(
                "target '\(target.name)' uses the ServiceMetadata plugin but has no manifest at "
                    + "\(manifest.path(percentEncoded: false)); create servicehost.json there "
                    + "(and add it to the target's exclude:)")
        }
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

/// A plugin failure with a message for the build log.
struct ServiceMetadataError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
