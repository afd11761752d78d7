// swift-tools-version:6.2
// Pick and mix: Ditto-style live queries on SQLite with nothing but LiveQueryKit and SQLiteAdapter (GRDB). Its
// build compiles neither SwiftNIO nor Hummingbird nor AsyncHTTPClient: CI checks that.

import PackageDescription

let package = Package(
    name: "LiveQueriesOnly",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [.package(name: "Tether", path: "../../..")],
    targets: [
        .executableTarget(
            name: "LiveQueriesOnly",
            dependencies: [
                .product(name: "LiveQueryKit", package: "Tether"),
                .product(name: "SQLiteAdapter", package: "Tether"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
