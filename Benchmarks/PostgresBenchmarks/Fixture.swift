import DocumentStoreKit
import Foundation
import LiveQueryKit
import PostgresAdapter
import TetherJSON

/// One schema of its own per scenario: 10,000 documents over 100 groups (`g0` … `g99`, each `seq` -1), with a
/// declared index on `(group, seq)` — the observed query's fields — and a store here to write with.
struct Fixture {
    static let groups = 100
    static let documentCount = 10_000
    let url: String
    let schema: String
    let documents: PostgresDocumentStore
    let running: Task<Void, any Error>

    static var serverURL: String {
        guard let url = ProcessInfo.processInfo.environment["TETHER_POSTGRES_URL"] else {
            print("TETHER_POSTGRES_URL is not set: run through Scripts/with-postgres.sh (see PostgresBenchmarks.swift)")
            exit(69)
        }
        return url
    }

    static func make() async throws -> Fixture {
        let url = serverURL
        var configuration = try PostgresConfiguration(url: url)
        configuration.schema =
            "bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        configuration.poolSize = 4
        let documents = try PostgresDocumentStore(configuration: configuration)
        let running = Task { try await documents.run() }
        try await documents.write { transaction in
            for index in 0..<documentCount {
                try transaction.insert(
                    ["_id": .string("d\(index)"), "group": .string("g\(index % groups)"), "seq": -1], into: "items")
            }
        }
        try await documents.createIndex(try DocumentIndex(collection: "items", fields: ["group", "seq"]))
        return Fixture(url: url, schema: configuration.schema, documents: documents, running: running)
    }

    /// The observed query over `group`, as the other process observes it.
    static func query(_ store: Store, group: String = "g0") -> PendingQuery {
        store.collection("items").find("group == $args.group", args: ["group": .string(group)])
            .sort("seq", direction: .descending).limit(100)
    }

    /// Commit `i` of a run: writes `seq` into a document of `group` (the group's documents in turn), which puts it
    /// first in that group's result.
    func write(group: Int, i: Int, seq: Int) async throws {
        let index = (i % (Self.documentCount / Self.groups)) * Self.groups + group
        try await documents.upsert(
            ["_id": .string("d\(index)"), "group": .string("g\(group)"), "seq": .number(Double(seq))], into: "items")
    }

    var commit: UInt64 {
        get async throws { try await documents.read { try $0.commitNumber() } }
    }

    func close() async {
        running.cancel()
        _ = await running.result
    }
}
