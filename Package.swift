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
        .library(name: "TetherConcurrency", targets: ["TetherConcurrency"]),
        .library(name: "TetherClock", targets: ["TetherClock"]),
        .library(name: "OwnershipKit", targets: ["OwnershipKit"]),
        .library(name: "DeliveryKit", targets: ["DeliveryKit"]),
        .library(name: "DeliveryMetricsAdapter", targets: ["DeliveryMetricsAdapter"]),
        .library(name: "RegistryKit", targets: ["RegistryKit"]),
        .library(name: "MemoryPressureKit", targets: ["MemoryPressureKit"]),
        .library(name: "TransportKit", targets: ["TransportKit"]),
        .library(name: "ResourceKit", targets: ["ResourceKit"]),
        .library(name: "TetherJSON", targets: ["TetherJSON"]),
        .library(name: "PersistenceKit", targets: ["PersistenceKit"]),
        .library(name: "EntityCacheKit", targets: ["EntityCacheKit"]),
        .library(name: "MutationOutboxKit", targets: ["MutationOutboxKit"]),
        .library(name: "DocumentStoreKit", targets: ["DocumentStoreKit"]),
        .library(name: "LiveQueryKit", targets: ["LiveQueryKit"]),
        .library(name: "MirrorKit", targets: ["MirrorKit"]),
        .library(name: "TetherObservation", targets: ["TetherObservation"]),
        .library(name: "SQLiteAdapter", targets: ["SQLiteAdapter"]),
        .library(name: "PostgresAdapter", targets: ["PostgresAdapter"]),
        .library(name: "TetherInspector", targets: ["TetherInspector"]),
        .library(name: "URLSessionAdapter", targets: ["URLSessionAdapter"]),
        .library(name: "AsyncHTTPClientAdapter", targets: ["AsyncHTTPClientAdapter"]),
        .library(name: "PipelineKit", targets: ["PipelineKit"]),
        .library(name: "PipelinePlugins", targets: ["PipelinePlugins"]),
        .library(name: "PostgresPipelinePlugin", targets: ["PostgresPipelinePlugin"]),
        .library(name: "TetherTesting", targets: ["TetherTesting"]),
        .library(name: "TetherTestingTraits", targets: ["TetherTestingTraits"]),
        .library(name: "TransportConformance", targets: ["TransportConformance"]),
        .library(name: "Tether", targets: ["Tether"]),
        .executable(name: "tether-sample", targets: ["tether-sample"]),
    ],
    traits: [
        // `swift run --traits Postgres tether-sample --config …`: the sample with PostgreSQL's plugin, for a
        // configuration that names `type: postgres`. Off by default, so that the first run compiles no PostgreSQL
        // client.
        .trait(name: "Postgres", description: "The sample registers PostgreSQL's persistence plugin.")
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // MARK: Internal helpers (no product)
        .target(name: "TetherConcurrency", path: "Modules/TetherConcurrency"),
        // The role of a clock (TimeSource), the system's and a manual one: every timed part takes one.
        .target(name: "TetherClock", dependencies: ["TetherConcurrency", "CTetherTimer"], path: "Modules/TetherClock"),
        // The Linux calls of TetherClock's timer thread that Glibc's module lacks (timerfd; C, no dependencies).
        .target(name: "CTetherTimer", path: "Modules/CTetherTimer"),
        // Inflates gzip and deflate bodies for TransportKit with the platform's zlib (the library Foundation and
        // libcurl decode with; its headers come with Swift's Linux dependencies, zlib1g-dev).
        .target(name: "CTetherZlib", path: "Modules/CTetherZlib", linkerSettings: [.linkedLibrary("z")]),

        // MARK: Kits (no third-party dependencies)
        .target(name: "OwnershipKit", dependencies: ["TetherConcurrency"], path: "Modules/OwnershipKit"),
        .target(name: "DeliveryKit", dependencies: ["TetherConcurrency"], path: "Modules/DeliveryKit"),
        .target(name: "RegistryKit", dependencies: ["TetherConcurrency"], path: "Modules/RegistryKit"),
        .target(
            name: "MemoryPressureKit",
            dependencies: ["TetherConcurrency", "TetherClock", .product(name: "Logging", package: "swift-log")],
            path: "Modules/MemoryPressureKit"
        ),
        .target(
            name: "TransportKit",
            dependencies: [
                "TetherConcurrency", "TetherClock", "CTetherZlib", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/TransportKit"
        ),
        .target(name: "TetherJSON", path: "Modules/TetherJSON"),
        // What every persistent store and cache throws: PersistenceError, naming the file, collection and id.
        .target(name: "PersistenceKit", path: "Modules/PersistenceKit"),
        // The HTTP entity cache's role (EntityCache) and its work queue (PersistentCache); an in-memory cache.
        .target(
            name: "EntityCacheKit",
            dependencies: [
                "PersistenceKit", "TetherConcurrency", "TetherJSON", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/EntityCacheKit"
        ),
        // Durable mutations' role (MutationOutbox), the entry an outbox keeps, and an in-memory outbox.
        .target(
            name: "MutationOutboxKit",
            dependencies: ["PersistenceKit", "TetherConcurrency"],
            path: "Modules/MutationOutboxKit"
        ),
        // The document store's role (DocumentStore): transactions, a compiled query model, a change feed and log.
        .target(
            name: "DocumentStoreKit",
            dependencies: [
                "PersistenceKit", "TetherJSON", "TetherConcurrency", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/DocumentStoreKit"
        ),
        .target(
            name: "LiveQueryKit",
            dependencies: [
                "PersistenceKit", "DocumentStoreKit", "TetherJSON", "DeliveryKit", "OwnershipKit", "TetherConcurrency",
                "TetherClock", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/LiveQueryKit"
        ),
        .target(
            name: "ResourceKit",
            dependencies: [
                "TetherConcurrency", "TetherClock", "OwnershipKit", "DeliveryKit", "RegistryKit", "MemoryPressureKit",
                "TransportKit", "TetherJSON", "EntityCacheKit", "MutationOutboxKit", "PersistenceKit",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/ResourceKit"
        ),

        // Resources mirrored into a store's collection: remote data that live queries see, offline too. Apart, so that
        // ResourceKit and LiveQueryKit stay free of each other.
        .target(
            name: "MirrorKit",
            dependencies: ["ResourceKit", "LiveQueryKit", "TetherJSON", "PersistenceKit", "TetherConcurrency"],
            path: "Modules/MirrorKit"
        ),

        // Resources and live queries as Observation models whose lifetime is the observation's.
        .target(
            name: "TetherObservation",
            dependencies: ["ResourceKit", "LiveQueryKit", "DeliveryKit", "TetherConcurrency"],
            path: "Modules/TetherObservation"
        ),

        // MARK: Adapters (each heavy or third-party dependency in a target of its own)
        .target(
            name: "DeliveryMetricsAdapter",
            dependencies: ["DeliveryKit", .product(name: "CoreMetrics", package: "swift-metrics")],
            path: "Modules/DeliveryMetricsAdapter"
        ),
        .target(
            name: "URLSessionAdapter",
            dependencies: [
                "TransportKit", "TetherConcurrency", "TetherClock", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/URLSessionAdapter"
        ),
        .target(
            name: "AsyncHTTPClientAdapter",
            dependencies: [
                "TransportKit", "TetherConcurrency", "TetherClock",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/AsyncHTTPClientAdapter"
        ),

        .target(
            name: "SQLiteAdapter",
            dependencies: [
                "PersistenceKit", "DocumentStoreKit", "EntityCacheKit", "MutationOutboxKit", "TetherJSON",
                "TetherConcurrency", "TetherClock", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/SQLiteAdapter"
        ),
        .target(
            name: "PostgresAdapter",
            dependencies: [
                "PersistenceKit", "DocumentStoreKit", "EntityCacheKit", "MutationOutboxKit", "TetherJSON",
                "TetherConcurrency",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/PostgresAdapter"
        ),
        // The inspector: a page and a JSON API on loopback showing observers, owners and waiting results.
        // Hummingbird only here.
        .target(
            name: "TetherInspector",
            dependencies: [
                "ResourceKit", "LiveQueryKit", "OwnershipKit", "TetherClock",
                "TetherConcurrency", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/TetherInspector",
            resources: [.copy("Resources")]
        ),

        // MARK: Assembly from configuration.yaml
        // PipelineKit: the plugin registry, the typed configuration, the YAML loader (Yams) and the built-in plugins
        // that need no adapter. PipelinePlugins adds the adapters' plugins (URLSession, AsyncHTTPClient, SQLite),
        // PostgresPipelinePlugin PostgreSQL's.
        .target(
            name: "PipelineKit",
            dependencies: [
                "ResourceKit", "TransportKit", "MemoryPressureKit", "DeliveryKit", "LiveQueryKit",
                "PersistenceKit", "DocumentStoreKit", "EntityCacheKit", "MutationOutboxKit", "TetherJSON",
                "TetherClock", "TetherConcurrency", "MirrorKit",
                .product(name: "Yams", package: "Yams"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/PipelineKit"
        ),
        .target(
            name: "PipelinePlugins",
            dependencies: [
                "PipelineKit", "TransportKit", "URLSessionAdapter", "AsyncHTTPClientAdapter", "SQLiteAdapter",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/PipelinePlugins"
        ),
        // PostgreSQL's plugin, apart: a program that never talks to PostgreSQL compiles neither postgres-nio nor
        // swift-crypto (the sample takes it only with the Postgres trait).
        .target(
            name: "PostgresPipelinePlugin",
            dependencies: [
                "PipelineKit", "PersistenceKit", "PostgresAdapter",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/PostgresPipelinePlugin"
        ),

        // MARK: Doubles, conformance suites and test helpers
        .target(
            name: "TetherTesting",
            dependencies: [
                "OwnershipKit", "TransportKit", "PersistenceKit", "DocumentStoreKit", "TetherJSON", "TetherConcurrency",
                "TetherClock", "EntityCacheKit", "MutationOutboxKit",
            ],
            path: "Modules/TetherTesting"),
        // Swift Testing traits (the leak check), apart from TetherTesting, whose doubles need no test library.
        .target(
            name: "TetherTestingTraits", dependencies: ["TetherTesting", "TetherConcurrency"],
            path: "Modules/TetherTestingTraits"),
        // A Hummingbird server on loopback and an ephemeral port: the conformance suite's and the sample's.
        .target(
            name: "LoopbackServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Modules/LoopbackServer"
        ),
        .target(
            name: "TransportConformance",
            dependencies: [
                "TransportKit", "TetherClock", "TetherConcurrency", "LoopbackServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/TransportConformance"
        ),

        // MARK: Umbrella
        .target(
            name: "Tether",
            dependencies: [
                "OwnershipKit", "DeliveryKit", "RegistryKit", "MemoryPressureKit", "TransportKit", "ResourceKit",
                "TetherJSON", "PersistenceKit", "DocumentStoreKit", "EntityCacheKit", "LiveQueryKit", "TetherClock",
                "MirrorKit",
            ],
            path: "Modules/Tether"),

        // MARK: Sample
        .executableTarget(
            name: "tether-sample",
            dependencies: [
                "PipelineKit", "PipelinePlugins", "TetherConcurrency", "TetherClock", "TransportKit",
                "ResourceKit", "LiveQueryKit", "EntityCacheKit", "MemoryPressureKit", "DeliveryKit", "TetherJSON",
                "MutationOutboxKit", "MirrorKit", "LoopbackServer", "TetherInspector", "TetherObservation",
                .target(name: "PostgresPipelinePlugin", condition: .when(traits: ["Postgres"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Samples/tether-sample"
        ),

        // MARK: Tests (one target per module)
        .testTarget(
            name: "TetherConcurrencyTests",
            dependencies: ["TetherConcurrency", "TetherTesting", "TetherTestingTraits"],
            path: "Tests/TetherConcurrencyTests"
        ),
        .testTarget(
            name: "TetherClockTests",
            dependencies: ["TetherClock", "TetherConcurrency", "TetherTesting", "TetherTestingTraits"],
            path: "Tests/TetherClockTests"),
        .testTarget(
            name: "OwnershipKitTests",
            dependencies: ["OwnershipKit", "DeliveryKit", "TetherConcurrency", "TetherTesting", "TetherTestingTraits"],
            path: "Tests/OwnershipKitTests"
        ),
        .testTarget(
            name: "DeliveryKitTests",
            dependencies: ["DeliveryKit", "TetherConcurrency", "TetherTesting", "TetherTestingTraits"],
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
            dependencies: ["RegistryKit", "TetherConcurrency", "TetherTesting", "TetherTestingTraits"],
            path: "Tests/RegistryKitTests"
        ),
        .testTarget(
            name: "MemoryPressureKitTests",
            dependencies: [
                "MemoryPressureKit", "RegistryKit", "TetherClock", "TetherConcurrency", "TetherTesting",
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/MemoryPressureKitTests"
        ),
        .testTarget(
            name: "TransportKitTests",
            dependencies: ["TetherClock", "TransportKit", "TetherTesting", "TetherConcurrency"],
            path: "Tests/TransportKitTests"
        ),
        .testTarget(
            name: "ResourceKitTests",
            dependencies: [
                "EntityCacheKit", "TetherClock", "ResourceKit", "TransportKit", "DeliveryKit", "OwnershipKit",
                "TetherTesting", "TetherTestingTraits", "TetherConcurrency", "MutationOutboxKit", "PersistenceKit",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/ResourceKitTests"
        ),
        .testTarget(
            name: "MirrorKitTests",
            dependencies: [
                "MirrorKit", "ResourceKit", "LiveQueryKit", "TransportKit", "TetherClock", "TetherJSON",
                "SQLiteAdapter", "TetherTesting", "TetherTestingTraits", "TetherConcurrency",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            path: "Tests/MirrorKitTests"
        ),
        .testTarget(
            name: "TetherObservationTests",
            dependencies: [
                "TetherObservation", "ResourceKit", "LiveQueryKit", "TransportKit", "TetherClock", "TetherJSON",
                "DocumentStoreKit", "DeliveryKit", "TetherTesting", "TetherTestingTraits", "TetherConcurrency",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            path: "Tests/TetherObservationTests"
        ),
        .testTarget(
            name: "URLSessionAdapterTests",
            dependencies: [
                "URLSessionAdapter", "TransportKit", "TransportConformance", "TetherConcurrency", "TetherTesting",
                "TetherTestingTraits", .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/URLSessionAdapterTests"
        ),
        .testTarget(
            name: "AsyncHTTPClientAdapterTests",
            dependencies: [
                "AsyncHTTPClientAdapter", "TransportKit", "TransportConformance", "TetherTestingTraits",
                "ResourceKit", "LoopbackServer", "TetherConcurrency", "TetherJSON", "TetherTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/AsyncHTTPClientAdapterTests"
        ),
        .testTarget(
            name: "TransportConformanceTests",
            dependencies: [
                "TransportConformance", "TransportKit", "URLSessionAdapter", "AsyncHTTPClientAdapter",
                "TetherTestingTraits", "ResourceKit", "TetherConcurrency",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/TransportConformanceTests"
        ),
        .testTarget(
            name: "TetherJSONTests",
            dependencies: ["TetherJSON", .product(name: "PropertyBased", package: "swift-property-based")],
            path: "Tests/TetherJSONTests"),
        // A separate process for the check that holds every thread of the cooperative pool.
        .executableTarget(
            name: "tether-engine-probe",
            dependencies: ["LiveQueryKit", "SQLiteAdapter", "TetherJSON", "TetherConcurrency", "TetherTesting"],
            path: "Tests/EngineProbe"
        ),
        .testTarget(
            name: "LiveQueryKitTests",
            dependencies: [
                "LiveQueryKit", "PersistenceKit", "DocumentStoreKit", "SQLiteAdapter", "TetherJSON",
                "DeliveryKit", "OwnershipKit", "TetherTesting", "TetherTestingTraits", "TetherConcurrency",
                "TetherClock", "tether-engine-probe",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            path: "Tests/LiveQueryKitTests"
        ),
        .testTarget(
            name: "EntityCacheKitTests",
            dependencies: [
                "EntityCacheKit", "TetherTesting", "TetherTestingTraits", "TetherConcurrency",
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/EntityCacheKitTests"
        ),
        .testTarget(
            name: "DocumentStoreKitTests",
            dependencies: [
                "TetherTestingTraits", "PersistenceKit", "DocumentStoreKit", "TetherJSON",
                "TetherTesting", "TetherConcurrency",
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/DocumentStoreKitTests"
        ),
        // A separate process for the tests that need one: a restart with the same cache file, a SIGKILL mid-write.
        .executableTarget(
            name: "tether-persistence-probe",
            dependencies: [
                "SQLiteAdapter", "DocumentStoreKit", "EntityCacheKit", "ResourceKit", "TransportKit",
                "URLSessionAdapter", "TetherJSON", "TetherTesting",
            ],
            path: "Tests/PersistenceProbe"
        ),
        .testTarget(
            name: "SQLiteAdapterTests",
            dependencies: [
                "SQLiteAdapter", "PersistenceKit", "DocumentStoreKit", "EntityCacheKit", "TetherJSON", "TetherTesting",
                "TetherConcurrency", "ResourceKit", "TetherTestingTraits", "TransportKit", "TransportConformance",
                "MutationOutboxKit", "TetherClock", "tether-persistence-probe",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/SQLiteAdapterTests"
        ),
        // Writers and observers in processes of their own, sharing a schema only through the server.
        .executableTarget(
            name: "tether-postgres-probe",
            dependencies: [
                "PostgresAdapter", "LiveQueryKit", "DocumentStoreKit", "TetherJSON", "TetherConcurrency",
                "TetherTesting",
            ],
            path: "Tests/PostgresProbe"
        ),
        .testTarget(
            name: "PostgresAdapterTests",
            dependencies: [
                "PostgresAdapter", "PersistenceKit", "DocumentStoreKit", "EntityCacheKit", "LiveQueryKit", "TetherJSON",
                "TetherTesting", "MutationOutboxKit", "ResourceKit", "TransportKit", "MirrorKit", "TetherClock",
                "TetherConcurrency", "TetherTestingTraits", "tether-postgres-probe",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/PostgresAdapterTests"
        ),
        .testTarget(
            name: "TetherInspectorTests",
            dependencies: [
                "TetherInspector", "ResourceKit", "MutationOutboxKit", "LiveQueryKit", "OwnershipKit", "TransportKit",
                "TetherClock",
                "TetherJSON", "MemoryPressureKit", "TetherConcurrency", "TetherTesting", "TetherTestingTraits",
                "URLSessionAdapter", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TetherInspectorTests"
        ),
        .testTarget(
            name: "PipelineKitTests",
            dependencies: [
                "PipelineKit", "PipelinePlugins", "ResourceKit", "TransportKit", "RegistryKit", "MemoryPressureKit",
                "DeliveryKit", "LiveQueryKit", "PersistenceKit", "DocumentStoreKit", "EntityCacheKit", "TetherJSON",
                "TetherTesting", "TetherTestingTraits", "TransportConformance", "TetherConcurrency", "SQLiteAdapter",
                "PostgresAdapter", "PostgresPipelinePlugin", "MutationOutboxKit", "MirrorKit",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/PipelineKitTests"
        ),
        // The sample runner, run as a process: a short configuration, then a broken one.
        .testTarget(
            name: "TetherSampleTests",
            dependencies: ["tether-sample", "TetherTesting", "TetherTestingTraits", "TetherConcurrency"],
            path: "Tests/TetherSampleTests"
        ),
        // Every Swift example in README and Docs, compiled; DocSnippetSyncTests keeps the docs equal to these files.
        .testTarget(
            name: "DocSnippets",
            dependencies: [
                "OwnershipKit", "DeliveryKit", "RegistryKit", "MemoryPressureKit", "TransportKit", "ResourceKit",
                "TetherClock", "TetherJSON", "DocumentStoreKit", "EntityCacheKit", "LiveQueryKit", "SQLiteAdapter",
                "PostgresAdapter", "PipelineKit", "PipelinePlugins", "AsyncHTTPClientAdapter",
                "URLSessionAdapter", "DeliveryMetricsAdapter", "TetherTesting", "TetherTestingTraits",
                "TransportConformance", "TetherInspector", "MirrorKit", "TetherObservation",
                "TetherConcurrency",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/DocSnippets"
        ),
        .testTarget(
            name: "TetherTestingTraitsTests",
            dependencies: ["TetherTestingTraits", "TetherTesting", "TetherConcurrency"],
            path: "Tests/TetherTestingTraitsTests"
        ),
        .testTarget(
            name: "TetherTestingTests",
            dependencies: ["OwnershipKit", "TetherTesting"],
            path: "Tests/TetherTestingTests"
        ),
    ]
)

// Instruction counts of the hot paths, guarded in CI (Scripts/check-instructions.sh), declared only on demand:
//   TETHER_INSTRUCTIONS=1 swift build -c release --product tether-instructions
if Context.environment["TETHER_INSTRUCTIONS"] != nil {
    package.targets.append(
        .executableTarget(
            name: "tether-instructions",
            dependencies: ["ResourceKit", "TransportKit", "TetherClock"], path: "Benchmarks/InstructionCounts",
            exclude: ["baseline.tsv"]))
}

// Documentation (DocC), only when asked — CI's normal build does not fetch or build the plugin:
//   TETHER_DOCS=1 swift package --scratch-path .build-docs generate-documentation --target OwnershipKit …
// Scripts/docs.sh builds every module's documentation and fails on any warning.
if Context.environment["TETHER_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"))
}

// Benchmarks (package-benchmark) are declared only on demand, so the normal build and CI never compile them:
//   TETHER_BENCHMARKS=1 swift package benchmark
if Context.environment["TETHER_BENCHMARKS"] != nil {
    package.dependencies.append(
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"])
    )
    let suites: [(String, [Target.Dependency])] = [
        ("OwnershipBenchmarks", ["OwnershipKit"]),
        ("DeliveryBenchmarks", ["DeliveryKit"]),
        ("ResourceBenchmarks", ["ResourceKit", "TransportKit", "TetherClock", "BenchmarkSupport"]),
        (
            "InspectorBenchmarks",
            [
                "TetherInspector", "ResourceKit", "LiveQueryKit", "TransportKit", "TetherClock", "TetherJSON",
                "BenchmarkSupport",
            ]
        ),
        (
            "LiveQueryBenchmarks",
            [
                "LiveQueryKit", "DocumentStoreKit", "SQLiteAdapter", "TetherJSON", "TetherConcurrency",
                "BenchmarkSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Needs a server: Scripts/with-postgres.sh runs it (see the file's header).
        (
            "PostgresBenchmarks",
            [
                "PostgresAdapter", "LiveQueryKit", "DocumentStoreKit", "TetherJSON", "TetherConcurrency",
                "BenchmarkSupport", "tether-postgres-bench-observer",
            ]
        ),
        (
            "ObservationBenchmarks",
            [
                "TetherObservation", "LiveQueryKit", "ResourceKit", "TransportKit", "TetherClock", "TetherJSON",
                "TetherConcurrency", "BenchmarkSupport",
            ]
        ),
        (
            "PersistenceBenchmarks",
            [
                "DocumentStoreKit", "EntityCacheKit", "SQLiteAdapter", "TetherJSON", "BenchmarkSupport",
                "MutationOutboxKit", "ResourceKit", "TransportKit", "TetherClock", "MirrorKit", "LiveQueryKit",
                "TetherConcurrency",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        (
            "TransportBenchmarks",
            [
                "ResourceKit", "TransportKit", "TransportConformance", "AsyncHTTPClientAdapter", "URLSessionAdapter",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
    ]
    // glibc's heap statistics, for the bytes-per-object figures (Swift's Glibc module does not export mallinfo2).
    package.targets.append(.target(name: "HeapStatistics", path: "Benchmarks/HeapStatistics"))
    // Pacing, percentiles, run summaries and heap bytes, shared by the suites.
    package.targets.append(
        .target(
            name: "BenchmarkSupport",
            dependencies: ["TetherConcurrency", "HeapStatistics", .product(name: "Benchmark", package: "benchmark")],
            path: "Benchmarks/BenchmarkSupport"))
    // The other process of PostgresBenchmarks: observers that share only the server with the writer.
    package.targets.append(
        .executableTarget(
            name: "tether-postgres-bench-observer",
            dependencies: ["PostgresAdapter", "LiveQueryKit", "DocumentStoreKit", "TetherJSON", "TetherConcurrency"],
            path: "Benchmarks/PostgresBenchObserver"))
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

// Fuzz targets (libFuzzer) are declared only on demand, like the benchmarks: Scripts/fuzz.sh builds them with
//   TETHER_FUZZ=1 swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product …
if Context.environment["TETHER_FUZZ"] != nil {
    package.targets += [
        .executableTarget(
            name: "FuzzQueryParser",
            dependencies: ["LiveQueryKit", "DocumentStoreKit", "TetherJSON"],
            path: "Fuzz/QueryParser", exclude: ["corpus"]),
        .executableTarget(
            name: "FuzzConfigurationLoader", dependencies: ["PipelineKit"],
            path: "Fuzz/ConfigurationLoader", exclude: ["corpus"]),
    ]
}

// The core suites: where Tether's own concurrency and weak references live, and what they need — no SwiftNIO, TLS,
// Hummingbird, AsyncHTTPClient or Yams, so that a release build of them is quick. Scripts/fuzz.sh runs the model
// suites' long runs on it:
//   TETHER_CORE_SUITES=1 swift test -c release --filter LiveQueryModelTests
// Left out: the transport adapters and their conformance suite, PostgreSQL, the pipeline, the inspector and the
// sample, and the SQLite restart suite (child processes on a loopback server). CI runs every suite optimized and under
// ThreadSanitizer with TETHER_OPTIMIZE and TETHER_SANITIZE instead (at the end of this file).
if Context.environment["TETHER_CORE_SUITES"] != nil {
    let networked: Set<String> = [
        "AsyncHTTPClientAdapter", "AsyncHTTPClientAdapterTests", "URLSessionAdapterTests", "LoopbackServer",
        "TransportConformance", "TransportConformanceTests", "PipelineKit", "PipelinePlugins", "PipelineKitTests",
        "PostgresPipelinePlugin", "tether-sample", "TetherSampleTests", "DocSnippets", "PostgresAdapter",
        "PostgresAdapterTests",
        "tether-postgres-probe", "TetherInspector", "TetherInspectorTests",
    ]
    package.targets.removeAll { networked.contains($0.name) }
    package.products.removeAll { networked.contains($0.name) }
    for target in package.targets where target.name == "SQLiteAdapterTests" {
        target.dependencies.removeAll { dependency in
            if case .byNameItem(let name, _) = dependency { return networked.contains(name) }
            if case .targetItem(let name, _) = dependency { return networked.contains(name) }
            return false
        }
        target.exclude += ["RestartTests.swift"]
    }
    // The packages only those targets used go too: SwiftPM warns of a dependency no target uses. A product named
    // alone, or a plugin, counts for the package of that name.
    let products = package.targets.flatMap(\.dependencies).compactMap { dependency -> String? in
        switch dependency {
        case .productItem(_, let package?, _, _): package
        case .byNameItem(let name, _): name
        default: nil
        }
    }
    let plugins = package.targets.flatMap { $0.plugins ?? [] }.compactMap { usage -> String? in
        guard case .plugin(let name, let package) = usage else { return nil }
        return package ?? name
    }
    let used = Set((products + plugins).map { $0.lowercased() })
    package.dependencies.removeAll { dependency in
        guard case .sourceControl(_, let location, _) = dependency.kind else { return false }
        guard var identity = location.split(separator: "/").last?.lowercased() else { return false }
        if identity.hasSuffix(".git") { identity.removeLast(4) }
        return !used.contains(identity)
    }
}

for target in package.targets where !target.name.hasPrefix("CTether") {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}

// CI's optimized and sanitized stages compile Tether's own targets, and only those, and reuse the debug build of every
// dependency (the package graph is the default one, so nothing else rebuilds):
//   TETHER_OPTIMIZE=1 swift test          every library and executable of ours optimized (-O, file by file: whole-module
//                                          optimization, as `-c release` does it, takes longer on 2 cores); the test
//                                          targets stay unoptimized, as they do not ship
//   TETHER_SANITIZE=thread swift test     every target of ours instrumented, and the sanitizer's runtime linked
let optimize = Context.environment["TETHER_OPTIMIZE"] != nil
let sanitizer = Context.environment["TETHER_SANITIZE"]
for target in package.targets {
    var swiftFlags: [String] = []
    var linkerFlags: [String] = []
    if optimize, target.type != .test { swiftFlags.append("-O") }
    if let sanitizer {
        swiftFlags.append("-sanitize=\(sanitizer)")
        linkerFlags.append("-sanitize=\(sanitizer)")
    }
    if target.name.hasPrefix("CTether") {
        if let sanitizer { target.cSettings = (target.cSettings ?? []) + [.unsafeFlags(["-fsanitize=\(sanitizer)"])] }
    } else if !swiftFlags.isEmpty {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(swiftFlags)]
    }
    if !linkerFlags.isEmpty { target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(linkerFlags)] }
}
