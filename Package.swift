// swift-tools-version:6.2
// Tether: observers that live exactly as long as their owners, deliveries that never outrun their consumers.

import PackageDescription

// One settings block for every target, applied by the loop at the end of this file.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Tether",
    // `Mutex` and `Atomic` (Synchronization) set the Apple floors.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "OwnershipKit", targets: ["OwnershipKit"]),
        .library(name: "DeliveryKit", targets: ["DeliveryKit"]),
        .library(name: "DeliveryMetricsAdapter", targets: ["DeliveryMetricsAdapter"]),
        .library(name: "RegistryKit", targets: ["RegistryKit"]),
        .library(name: "TransportKit", targets: ["TransportKit"]),
        .library(name: "ResourceKit", targets: ["ResourceKit"]),
        .library(name: "TetherTesting", targets: ["TetherTesting"]),
        .library(name: "Tether", targets: ["Tether"]),
        .executable(name: "tether-sample", targets: ["tether-sample"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        // MARK: Internal helpers (no product)
        .target(name: "ConcurrencyHelpers", path: "Modules/ConcurrencyHelpers"),

        // MARK: Kits (no third-party dependencies)
        .target(name: "OwnershipKit", dependencies: ["ConcurrencyHelpers"], path: "Modules/OwnershipKit"),
        .target(name: "DeliveryKit", dependencies: ["ConcurrencyHelpers"], path: "Modules/DeliveryKit"),
        .target(
            name: "RegistryKit",
            dependencies: ["ConcurrencyHelpers", .product(name: "Logging", package: "swift-log")],
            path: "Modules/RegistryKit"
        ),
        .target(name: "TransportKit", path: "Modules/TransportKit"),
        .target(
            name: "ResourceKit",
            dependencies: [
                "ConcurrencyHelpers", "OwnershipKit", "DeliveryKit", "RegistryKit", "TransportKit",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/ResourceKit"
        ),

        // MARK: Adapters (each heavy or third-party dependency in a target of its own)
        .target(
            name: "DeliveryMetricsAdapter",
            dependencies: ["DeliveryKit", .product(name: "CoreMetrics", package: "swift-metrics")],
            path: "Modules/DeliveryMetricsAdapter"
        ),

        // MARK: Doubles, conformance suites and test helpers
        .target(
            name: "TetherTesting", dependencies: ["OwnershipKit", "TransportKit", "ConcurrencyHelpers"],
            path: "Modules/TetherTesting"),

        // MARK: Umbrella
        .target(
            name: "Tether", dependencies: ["OwnershipKit", "DeliveryKit", "RegistryKit", "TransportKit", "ResourceKit"],
            path: "Modules/Tether"),

        // MARK: Sample
        .executableTarget(name: "tether-sample", dependencies: ["Tether"], path: "Samples/tether-sample"),

        // MARK: Tests (one target per module)
        .testTarget(
            name: "ConcurrencyHelpersTests",
            dependencies: ["ConcurrencyHelpers"],
            path: "Tests/ConcurrencyHelpersTests"
        ),
        .testTarget(
            name: "OwnershipKitTests",
            dependencies: ["OwnershipKit", "ConcurrencyHelpers", "TetherTesting"],
            path: "Tests/OwnershipKitTests"
        ),
        .testTarget(
            name: "DeliveryKitTests",
            dependencies: ["DeliveryKit", "ConcurrencyHelpers", "TetherTesting"],
            path: "Tests/DeliveryKitTests"
        ),
        .testTarget(
            name: "DeliveryMetricsAdapterTests",
            dependencies: [
                "DeliveryMetricsAdapter", "DeliveryKit", .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            path: "Tests/DeliveryMetricsAdapterTests"
        ),
        .testTarget(
            name: "RegistryKitTests",
            dependencies: [
                "RegistryKit", "ConcurrencyHelpers", "TetherTesting",
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/RegistryKitTests"
        ),
        .testTarget(
            name: "TransportKitTests",
            dependencies: ["TransportKit", "TetherTesting", "ConcurrencyHelpers"],
            path: "Tests/TransportKitTests"
        ),
        .testTarget(
            name: "ResourceKitTests",
            dependencies: ["ResourceKit", "TransportKit", "DeliveryKit", "OwnershipKit", "TetherTesting", "ConcurrencyHelpers"],
            path: "Tests/ResourceKitTests"
        ),
        .testTarget(
            name: "TetherTestingTests",
            dependencies: ["OwnershipKit", "TetherTesting"],
            path: "Tests/TetherTestingTests"
        ),
    ]
)

// Benchmarks (package-benchmark) are declared only on demand, so the normal build and CI never compile them:
//   TETHER_BENCHMARKS=1 swift package benchmark
if Context.environment["TETHER_BENCHMARKS"] != nil {
    package.dependencies.append(
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"])
    )
    let suites: [(String, [Target.Dependency])] = [
        ("OwnershipBenchmarks", ["OwnershipKit"]),
        ("DeliveryBenchmarks", ["DeliveryKit"]),
        ("ResourceBenchmarks", ["ResourceKit", "TransportKit", "TetherTesting"]),
    ]
    for (suite, kits) in suites {
        package.targets.append(
            .executableTarget(
                name: suite,
                dependencies: kits + [.product(name: "Benchmark", package: "benchmark")],
                path: "Benchmarks/\(suite)",
                plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
            )
        )
    }
}

for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
