// Durable mutations on SQLite: how fast `mutate(…, durable: true)` queues, beside a bare GRDB insert of the same row
// (one transaction each), and what a pending mutation costs on the heap.
//   TETHER_BENCHMARKS=1 swift package --scratch-path .build-bench benchmark --target PersistenceBenchmarks \
//       --filter "Durable.*"

import Benchmark
import BenchmarkSupport
import Foundation
import GRDB
import MutationOutboxKit
import ResourceKit
import SQLiteAdapter
import TetherClock
import TransportKit

/// A service whose server never answers (a manual clock that never moves), with a SQLite outbox and room for
/// `pending` mutations.
func silentService(outbox: SQLiteMutationOutbox, pending: Int) -> (Service, ManualTimeSource) {
    let clock = ManualTimeSource()
    let transport = InMemoryTransport(timeSource: clock)
    transport.route(nil, "https://api.test/items", reply: .text("ok", delay: .seconds(3600)))
    let service = Service(baseURL: "https://api.test", transport: transport, timeSource: clock)
    service.mutationConfiguration.outbox = outbox
    service.maxPendingMutations = pending
    return (service, clock)
}

/// A 100-byte JSON body.
let mutationBody = Data(("{\"name\":\"" + String(repeating: "x", count: 89) + "\"}").utf8)

func outboxBenchmarks() {
    let figures = [
        "Durable enqueues per second (Tether, mutate)", "Inserts per second (bare GRDB, same row)",
        "Heap bytes per pending durable mutation (10,000 pending)",
    ]
    let metrics = figures.map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark(
        "Durable mutations on SQLite: enqueue rate beside bare GRDB, heap per pending", configuration: scenario(metrics)
    ) {
        benchmark in
        let summary = Runs("Durable mutations on SQLite")
        let count = 1_000
        for run in 0..<6 {
            try await rotating(
                run,
                [
                    {
                        let outbox = try SQLiteMutationOutbox(path: freshPath("outbox"))
                        let (service, _) = silentService(outbox: outbox, pending: count + 1)
                        let items = service.resource("/items")
                        let start = ContinuousClock.now
                        for _ in 0..<count {
                            items.mutate(.post, body: mutationBody, contentType: "application/json", durable: true)
                        }
                        let elapsed = ContinuousClock.now - start
                        summary.record(benchmark, metrics[0], Int(Double(count) / elapsed.timeInterval))
                        for request in items.allRequests { request.cancel() }
                        _ = try await service.pendingMutations()
                    },
                    {
                        let pool = try DatabasePool(path: freshPath("outbox-grdb"))
                        try pool.write { db in
                            try db.execute(
                                sql: """
                                    CREATE TABLE tether_outbox (sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                                        key TEXT NOT NULL UNIQUE, lane TEXT NOT NULL, format INTEGER NOT NULL, body BLOB,
                                        details TEXT NOT NULL, failure TEXT, owner TEXT)
                                    """)
                        }
                        let details = String(repeating: "d", count: 200)
                        let start = ContinuousClock.now
                        for _ in 0..<count {
                            let key = UUID().uuidString
                            try pool.write { db in
                                try db.cachedStatement(
                                    sql: """
                                        INSERT INTO tether_outbox (key, lane, format, body, details, owner)
                                        VALUES (?, ?, ?, ?, ?, ?)
                                        """
                                ).execute(arguments: [key, "https://api.test/items", 1, mutationBody, details, "me"])
                            }
                        }
                        let elapsed = ContinuousClock.now - start
                        summary.record(benchmark, metrics[1], Int(Double(count) / elapsed.timeInterval))
                        try pool.close()
                    },
                ])
        }
        // Memory: 10,000 pending on one resource (one in flight, the rest waiting their turn).
        for _ in 0..<3 {
            let pending = 10_000
            let outbox = try SQLiteMutationOutbox(path: freshPath("outbox-memory"))
            let (service, _) = silentService(outbox: outbox, pending: pending + 1)
            let items = service.resource("/items")
            items.mutate(.post, body: mutationBody, contentType: "application/json", durable: true)
            let before = heapBytesInUse() ?? 0
            for _ in 1..<pending {
                items.mutate(.post, body: mutationBody, contentType: "application/json", durable: true)
            }
            let after = heapBytesInUse() ?? 0
            summary.record(benchmark, metrics[2], (after - before) / (pending - 1))
            for request in items.allRequests { request.cancel() }
            _ = try await service.pendingMutations()
        }
        summary.printSummary()
    }
}
