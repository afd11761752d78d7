// swift-tools-version:6.2
// Pick and mix: Siesta-style resources with nothing but OwnershipKit, ResourceKit, TransportKit and the in-memory
// transport (TetherTesting). Its build compiles neither SwiftNIO, GRDB nor Hummingbird: CI checks that.

import PackageDescription

let package = Package(
    name: "ResourcesOnly",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [.package(name: "Tether", path: "../../..")],
    targets: [
        .executableTarget(
            name: "ResourcesOnly",
            dependencies: [
                .product(name: "OwnershipKit", package: "Tether"),
                .product(name: "ResourceKit", package: "Tether"),
                .product(name: "TransportKit", package: "Tether"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
