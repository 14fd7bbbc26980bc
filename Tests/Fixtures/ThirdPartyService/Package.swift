// swift-tools-version: 6.2
// An out-of-tree Swift service: what a third party writes to ship a ServiceHost
// plugin. It depends on ServiceHost (here by path), links ServiceKit and applies
// the ServiceMetadata build plugin, which turns Sources/Greeter/servicehost.json
// into the library's static metadata and its servicehost_entry.
import PackageDescription

let package = Package(
    name: "ThirdPartyService",
    products: [
        // A plugin is a dynamic library: `host --plugins DIR` loads libGreeter.so.
        .library(name: "Greeter", type: .dynamic, targets: ["Greeter"])
    ],
    dependencies: [
        .package(name: "ServiceHost", path: "../../..")
    ],
    targets: [
        .target(
            name: "Greeter",
            dependencies: [.product(name: "ServiceKit", package: "ServiceHost")],
            exclude: ["servicehost.json"],
            plugins: [.plugin(name: "ServiceMetadata", package: "ServiceHost")]
        )
    ]
)
