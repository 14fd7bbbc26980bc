// swift-tools-version: 6.2
// Out-of-tree services with the mistakes the SDK must refuse, one per target; the end-to-end
// tests build each with `swift build --target NAME` (one package, so the three builds share
// the SDK's build):
// - Misspelled: servicehost.json lists continueUserActivity, the class spells it `continue(_:)`.
// - Unlisted: the class handles openURL (URLHandling), servicehost.json does not list it.
// - NotDynamic: builds, but no .dynamic product holds it (the build plugin warns).
import PackageDescription

let package = Package(
    name: "TypoServices",
    products: [
        .library(name: "Misspelled", type: .dynamic, targets: ["Misspelled"]),
        .library(name: "Unlisted", type: .dynamic, targets: ["Unlisted"]),
    ],
    dependencies: [
        .package(name: "ServiceHost", path: "../../..")
    ],
    targets: ["Misspelled", "Unlisted", "NotDynamic"].map { name in
        .target(
            name: name,
            dependencies: [.product(name: "ServiceKit", package: "ServiceHost")],
            exclude: ["servicehost.json"],
            plugins: [.plugin(name: "ServiceMetadata", package: "ServiceHost")]
        )
    }
)
