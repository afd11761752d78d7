// MirrorKit on SQLite: a 10,000-document response mirrored into a collection beside GRDB inserting the same
// documents in one transaction (as ready text, and as Codable items each encoded as it is inserted); a revalidation that changes one document of 10,000 (what is written and evaluated,
// and how soon a live query delivers it, beside a local write of one document); a 304; and the memory a
// 100,000-document response takes to mirror (a benchmark of its own, so that its process starts clean).
//   TETHER_BENCHMARKS=1 swift package --scratch-path .build-bench benchmark --target PersistenceBenchmarks \
//       --filter "Mirror.*"

import Benchmark
import BenchmarkSupport
import DocumentStoreKit
import Foundation
import GRDB
import LiveQueryKit
import MirrorKit
import ResourceKit
import SQLiteAdapter
import TetherClock
import TetherConcurrency
import TetherJSON
import TransportKit

/// `count` items as the API sends them: an `id`, a store, a name and a price.
func mirroredItems(_ count: Int, renamed: Int? = nil) -> JSONValue {
    .array(
        (0..<count).map { index in
            [
                "id": .string("i\(index)"), "store_id": "abc123",
                "name": .string(index == renamed ? "Renamed \(index)" : "Item \(index)"),
                "price": .number(Double(index % 100) / 4), "tags": ["a", "b"],
            ]
        })
}

/// One of `mirroredItems`, as a GRDB user decodes it.
struct MirroredItem: Codable, Sendable {
    let id: String
    let storeID: String
    let name: String
    let price: Double
    let tags: [String]

    enum CodingKeys: String, CodingKey {
        case id, name, price, tags
        case storeID = "store_id"
    }
}

/// A service on a scripted transport, a store on a fresh SQLite file, and a mirror of `/items` into it.
func mirrorFixture() throws -> (Service, Store, ResourceMirror, InMemoryTransport) {
    let transport = InMemoryTransport()
    let service = Service(baseURL: "https://api.test", transport: transport)
    let store = Store(try SQLiteDocumentStore(path: freshPath("mirror")))
    let mirror = try service.resource("/items").mirror(
        into: store.collection("items"), id: "id", scope: "store_id == 'abc123'", loadingIfNeeded: false)
    return (service, store, mirror, transport)
}

/// Overrides the resource's content with `content` and waits until the mirror has written it.
func mirrorWrite(_ content: JSONValue, resource: Resource, mirror: ResourceMirror) async throws {
    let before = mirror.completedWrites
    resource.overrideLocalContent(with: content)
    try await waitUntil { mirror.completedWrites > before }
}

func mirrorBenchmarks() {
    let figures = [
        "Mirror 10,000 documents (Tether, µs)", "Insert 10,000 documents, one transaction (bare GRDB, µs)",
        "Revalidation changing 1 of 10,000: live-query evaluations",
        "Revalidation changing 1 of 10,000: from the response to delivery (µs)",
        "Local write of 1 document: from the write's call to delivery (µs)",
        "304: commits", "304: live-query evaluations",
        "Upsert the same 10,000 documents, one transaction (Tether's store, no mirror, µs)",
        "Revalidation changing 1 of 10,000: from its commit to delivery (µs)",
        "Local write of 1 document: from its commit to delivery (µs)",
        "Insert 10,000 documents, each encoded by JSONEncoder, one transaction (bare GRDB, µs)",
    ]
    let metrics = figures.map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark(
        "Mirror: 10,000 documents beside bare GRDB; a revalidation changing one; a 304",
        configuration: scenario(metrics)
    ) { benchmark in
        let summary = Runs("Mirror on SQLite")
        let items = mirroredItems(10_000)
        let texts = (0..<10_000).map { index in
            var document = items[index]!.objectValue!
            document["_id"] = .string("i\(index)")
            return JSONValue.object(document).jsonText
        }
        let decoded = try JSONDecoder().decode([MirroredItem].self, from: Data(items.jsonText.utf8))
        for run in 0..<6 {
            try await rotating(
                run,
                [
                    {
                        let (service, _, mirror, _) = try mirrorFixture()
                        let start = nowMicroseconds()
                        try await mirrorWrite(items, resource: service.resource("/items"), mirror: mirror)
                        summary.record(benchmark, metrics[0], nowMicroseconds() - start)
                        precondition(mirror.lastError == nil, "\(String(describing: mirror.lastError))")
                    },
                    {
                        let store = Store(try SQLiteDocumentStore(path: freshPath("mirror-store")))
                        let documents = (0..<10_000).map { index in
                            var document = items[index]!.objectValue!
                            document["_id"] = .string("i\(index)")
                            return JSONValue.object(document)
                        }
                        let start = nowMicroseconds()
                        try await store.write { transaction in
                            let collection = transaction.collection("items")
                            for document in documents { _ = try collection.upsert(document) }
                        }
                        summary.record(benchmark, metrics[7], nowMicroseconds() - start)
                    },
                    {
                        let pool = try rawPool(freshPath("mirror-grdb"))
                        let start = nowMicroseconds()
                        try await pool.write { db in
                            let statement = try db.cachedStatement(
                                sql: "INSERT INTO tether_documents (collection, id, body) VALUES (?, ?, ?)")
                            for (index, text) in texts.enumerated() {
                                try statement.execute(arguments: ["items", "i\(index)", text])
                            }
                        }
                        summary.record(benchmark, metrics[1], nowMicroseconds() - start)
                        try pool.close()
                    },
                    {
                        // What a GRDB user mirroring the response does: its items decoded into a Codable type
                        // (before the clock, as Tether's side is given the parsed response), each encoded as it is
                        // inserted.
                        let pool = try rawPool(freshPath("mirror-grdb-codable"))
                        let encoder = JSONEncoder()
                        encoder.outputFormatting = .sortedKeys
                        let start = nowMicroseconds()
                        try await pool.write { db in
                            let statement = try db.cachedStatement(
                                sql: "INSERT INTO tether_documents (collection, id, body) VALUES (?, ?, ?)")
                            for item in decoded {
                                let body = String(decoding: try encoder.encode(item), as: UTF8.self)
                                try statement.execute(arguments: ["items", item.id, body])
                            }
                        }
                        summary.record(benchmark, metrics[10], nowMicroseconds() - start)
                        try pool.close()
                    },
                ])
        }

        // One store, mirrored once; then revalidations that change one document, local writes of one, and 304s.
        let (service, store, mirror, transport) = try mirrorFixture()
        let resource = service.resource("/items")
        try await mirrorWrite(items, resource: resource, mirror: mirror)
        let delivered = LockedCommit()
        // Stamped on the committing thread, as the store publishes the commit: what follows is the live query's part.
        let committed = LockedCommit()
        let feed = store.documents.changes.subscribeInline({ _ in committed.stamp() }, finished: {})
        let liveQuery = try store.collection("items").find("store_id == 'abc123' && price < 5").sort("name")
            .observeLocal { _, _ in delivered.stamp() }
        try await waitUntil { delivered.count == 1 }
        for run in 0..<20 {
            let evaluations = store.statistics.evaluations
            let count = delivered.count
            // Item 0 has price 0: it is in the query's result, so the change is delivered.
            let changed = mirroredItems(10_000, renamed: run % 2 == 0 ? 0 : nil)
            let start = nowMicroseconds()
            try await mirrorWrite(changed, resource: resource, mirror: mirror)
            try await waitUntil { delivered.count > count }
            summary.record(benchmark, metrics[3], delivered.last - start)
            summary.record(benchmark, metrics[8], delivered.last - committed.last)
            summary.record(benchmark, metrics[2], store.statistics.evaluations - evaluations)

            let localCount = delivered.count
            let localStart = nowMicroseconds()
            try await store.collection("items").upsert(
                ["_id": "i4", "id": "i4", "store_id": "abc123", "name": .string("Local \(run)"), "price": 1])
            try await waitUntil { delivered.count > localCount }
            summary.record(benchmark, metrics[4], delivered.last - localStart)
            summary.record(benchmark, metrics[9], delivered.last - committed.last)
        }
        // A network load with an ETag, then 304s: nothing written, nothing evaluated.
        transport.enqueue(.get, "https://api.test/items", .json(items.jsonText, headers: ["ETag": "\"v1\""]))
        let loaded = mirror.completedWrites
        _ = await resource.load().outcome
        try await waitUntil { mirror.completedWrites > loaded }
        await store.waitForLiveQueries()
        for _ in 0..<5 {
            let commit = store.lastCommit
            let evaluations = store.statistics.evaluations
            transport.enqueue(.get, "https://api.test/items", .status(304))
            _ = await resource.load().outcome
            await mirror.waitForWrites()
            await store.waitForLiveQueries()
            summary.record(benchmark, metrics[5], Int(store.lastCommit - commit))
            summary.record(benchmark, metrics[6], store.statistics.evaluations - evaluations)
        }
        await liveQuery.stop()
        feed.cancel()
        summary.printSummary()
    }
}

/// Peak resident memory while a 100,000-document response is mirrored, beside the size of the response's JSON text:
/// the resource holds the response itself, and the mirror must not hold several copies of it on top.
func mirrorMemoryBenchmark() {
    let figures = [
        "Response of 100,000 documents: JSON text (KB)", "Mirroring it: peak resident above the start (KB)",
        "Mirroring it: heap kept afterwards (KB)", "Mirroring it: commits",
    ]
    let metrics = figures.map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark(
        "Mirror: 100,000 documents in one response, memory", configuration: scenario(metrics)
    ) { benchmark in
        let summary = Runs("Mirror of 100,000 documents")
        let (service, store, mirror, _) = try mirrorFixture()
        let resource = service.resource("/items")
        let items = mirroredItems(100_000)
        summary.record(benchmark, metrics[0], items.jsonText.utf8.count / 1024)
        // The documents exist before the start: the resource holds them whatever the mirror does.
        let heap = heapBytesInUse() ?? 0
        let commit = store.lastCommit
        ResidentMemory.resetPeak()
        let resident = ResidentMemory.current ?? 0
        try await mirrorWrite(items, resource: resource, mirror: mirror)
        summary.record(benchmark, metrics[1], ((ResidentMemory.peak ?? 0) - resident) / 1024)
        summary.record(benchmark, metrics[2], ((heapBytesInUse() ?? 0) - heap) / 1024)
        summary.record(benchmark, metrics[3], Int(store.lastCommit - commit))
        precondition(mirror.lastError == nil, "\(String(describing: mirror.lastError))")
        summary.printSummary()
    }
}

/// When the live query's handler last ran (µs, monotonic), and how many times.
final class LockedCommit: Sendable {
    private let state = LockedValue((count: 0, last: 0))
    func stamp() { state.withLock { $0 = ($0.count + 1, nowMicroseconds()) } }
    var count: Int { state.withLock { $0.count } }
    var last: Int { state.withLock { $0.last } }
}
