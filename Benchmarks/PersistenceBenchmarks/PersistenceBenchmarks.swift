// PersistenceKit and SQLiteAdapter benchmarks: upserts (one per transaction, and batches of 1,000) beside raw GRDB
// inserts of the same JSON into the same schema, get by id, cache read and write, change-feed latency, and durable
// mutations' outbox (OutboxBenchmarks.swift), and mirrors (MirrorBenchmarks.swift).
//   TETHER_BENCHMARKS=1 swift package --scratch-path .build-bench benchmark --target PersistenceBenchmarks

import Benchmark
import BenchmarkSupport
import DocumentStoreKit
import EntityCacheKit
import Foundation
import GRDB
import SQLiteAdapter
import TetherJSON

let directory = scratchDirectory("tether-persistence-benchmarks")

func freshPath(_ name: String) -> String {
    "\(directory)/\(name)-\(UUID().uuidString).sqlite"
}

func document(_ index: Int) -> JSONValue {
    [
        "_id": .string("d\(index)"), "store_id": "abc123", "name": .string("Item \(index)"),
        "price": .number(Double(index % 100) / 4), "tags": ["a", "b"],
    ]
}

/// The same schema as SQLiteDocumentStore's, opened the same way, written with plain GRDB.
func rawPool(_ path: String) throws -> DatabasePool {
    var configuration = Configuration()
    configuration.busyMode = .timeout(5)
    let pool = try DatabasePool(path: path, configuration: configuration)
    try pool.write { db in
        try db.execute(
            sql: """
                CREATE TABLE tether_documents (rowid INTEGER PRIMARY KEY, collection TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL);
                CREATE UNIQUE INDEX tether_documents_collection_id ON tether_documents(collection, id);
                """)
    }
    return pool
}

/// The same 1,000 documents, as values (what Tether is given) and as JSON text (what raw GRDB is given).
let documents = (0..<1_000).map(document)
let texts = documents.map(\.jsonText)

/// Observes row changes and commits and does nothing: what GRDB's transaction observation costs by itself.
final class NullObserver: TransactionObserver, Sendable {
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidCommit(_ db: Database) {}
    func databaseDidRollback(_ db: Database) {}
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(10), maxIterations: 40)
    outboxBenchmarks()
    mirrorBenchmarks()
    mirrorMemoryBenchmark()

    Benchmark("Upsert 1,000 documents, one transaction each (Tether)") { benchmark in
        for _ in benchmark.scaledIterations {
            let store = try SQLiteDocumentStore(path: freshPath("single"))
            benchmark.startMeasurement()
            for index in 0..<1_000 { try await store.upsert(documents[index], into: "items") }
            benchmark.stopMeasurement()
            try store.close()
        }
    }

    Benchmark("Insert 1,000 documents, one transaction each (raw GRDB, same JSON)") { benchmark in
        for _ in benchmark.scaledIterations {
            let pool = try rawPool(freshPath("raw-single"))
            benchmark.startMeasurement()
            for index in 0..<1_000 {
                let text = texts[index]
                try await pool.write { db in
                    try db.cachedStatement(sql: "INSERT INTO tether_documents (collection, id, body) VALUES (?, ?, ?)")
                        .execute(arguments: ["items", "d\(index)", text])
                }
            }
            benchmark.stopMeasurement()
            try pool.close()
        }
    }

    Benchmark("Insert 1,000 documents, one transaction each (raw GRDB, same JSON, a no-op transaction observer)") {
        benchmark in
        for _ in benchmark.scaledIterations {
            let pool = try rawPool(freshPath("raw-observed"))
            let observer = NullObserver()
            pool.add(transactionObserver: observer, extent: .observerLifetime)
            benchmark.startMeasurement()
            for index in 0..<1_000 {
                let text = texts[index]
                try await pool.write { db in
                    try db.cachedStatement(sql: "INSERT INTO tether_documents (collection, id, body) VALUES (?, ?, ?)")
                        .execute(arguments: ["items", "d\(index)", text])
                }
            }
            benchmark.stopMeasurement()
            withExtendedLifetime(observer) {}
            try pool.close()
        }
    }

    Benchmark("Serialize 1,000 documents to JSON text (Tether)") { benchmark in
        for _ in benchmark.scaledIterations {
            for document in documents { blackHole(document.jsonText) }
        }
    }

    Benchmark("Upsert a batch of 1,000 documents in one transaction (Tether)") { benchmark in
        for _ in benchmark.scaledIterations {
            let store = try SQLiteDocumentStore(path: freshPath("batch"))
            benchmark.startMeasurement()
            try await store.write { transaction in
                for index in 0..<1_000 { try transaction.upsert(documents[index], into: "items") }
            }
            benchmark.stopMeasurement()
            try store.close()
        }
    }

    Benchmark("Insert a batch of 1,000 documents in one transaction (raw GRDB, same JSON)") { benchmark in
        for _ in benchmark.scaledIterations {
            let pool = try rawPool(freshPath("raw-batch"))
            benchmark.startMeasurement()
            try await pool.write { db in
                let statement = try db.cachedStatement(
                    sql: "INSERT INTO tether_documents (collection, id, body) VALUES (?, ?, ?)")
                for index in 0..<1_000 { try statement.execute(arguments: ["items", "d\(index)", texts[index]]) }
            }
            benchmark.stopMeasurement()
            try pool.close()
        }
    }

    Benchmark("Get by id, 1,000 lookups (Tether)") { benchmark in
        let store = try SQLiteDocumentStore(path: freshPath("get"))
        try await store.write { transaction in
            for index in 0..<1_000 { try transaction.upsert(document(index), into: "items") }
        }
        for _ in benchmark.scaledIterations {
            for index in 0..<1_000 { blackHole(try await store.document(id: "d\(index)", in: "items")) }
        }
        try store.close()
    }

    Benchmark("Get by id, 1,000 lookups (raw GRDB async read, same JSON)") { benchmark in
        let pool = try rawPool(freshPath("raw-get"))
        try await pool.write { db in
            for index in 0..<1_000 {
                try db.execute(
                    sql: "INSERT INTO tether_documents (collection, id, body) VALUES (?, ?, ?)",
                    arguments: ["items", "d\(index)", texts[index]])
            }
        }
        for _ in benchmark.scaledIterations {
            for index in 0..<1_000 {
                blackHole(
                    try await pool.read { db in
                        try String.fetchOne(
                            db.cachedStatement(
                                sql: "SELECT body FROM tether_documents WHERE collection = ? AND id = ?"),
                            arguments: ["items", "d\(index)"]
                        ).map { try JSONValue(parsing: $0) }
                    })
            }
        }
        try pool.close()
    }

    Benchmark("Entity cache: write then read 1,000 entries of 2 KB (SQLiteEntityCache)") { benchmark in
        let cache = try SQLiteEntityCache(path: freshPath("cache"))
        let entity = CachedEntity(
            body: Data(repeating: 42, count: 2048), headers: [.init(name: "ETag", value: "\"v1\"")], timestamp: Date())
        for _ in benchmark.scaledIterations {
            for index in 0..<1_000 { try cache.writeEntity(entity, forKey: "https://api.test/items/\(index)") }
            for index in 0..<1_000 { blackHole(try cache.readEntity(forKey: "https://api.test/items/\(index)")) }
        }
    }

    Benchmark("Change feed: 1,000 commits, each from before the write to its subscriber") { benchmark in
        let store = try SQLiteDocumentStore(path: freshPath("feed"))
        for _ in benchmark.scaledIterations {
            let stream = store.changes.stream()
            var iterator = stream.makeAsyncIterator()
            for index in 0..<1_000 {
                try await store.upsert(document(index), into: "feed")
                blackHole(await iterator.next())
            }
            stream.cancel()
            try await store.write { transaction in
                for index in 0..<1_000 { try transaction.remove(id: "d\(index)", from: "feed") }
            }
        }
        try store.close()
    }
}
