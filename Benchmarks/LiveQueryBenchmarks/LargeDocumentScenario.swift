import Benchmark
import BenchmarkSupport
import DocumentStoreKit
import Foundation
import LiveQueryKit
import SQLiteAdapter
import TetherConcurrency
import TetherJSON

/// Peak resident memory, as a multiple of the document's size (in hundredths), while one document holding a string
/// of `megabytes` MB is written to a SQLite store, read back by its id, found by a query on another field, and
/// observed through a change: the figures Reliability.md bounds. Each phase starts from the resident size before it
/// and counts everything the phase holds, the document the caller passes or is given included.
func largeDocumentScenario(megabytes: Int, runs: Int) {
    let figures = ["write", "read by id", "query", "observe a change"].map { "\($0) (peak, % of the document)" }
    let metrics = figures.map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark("A document holding a \(megabytes) MB string", configuration: scenario(metrics)) { benchmark in
        let summary = Runs("Large document")
        let size = megabytes << 20
        for run in 0..<runs {
            let path = Fixture.directory() + "/large-\(UUID().uuidString).sqlite"
            let store = Store(try SQLiteDocumentStore(path: path))
            let documents = store.collection("documents")
            /// Records the peak above the resident size at the start of `phase`, in hundredths of the document.
            func measure<T>(_ index: Int, _ phase: () async throws -> T) async rethrows -> T {
                let start = ResidentMemory.current ?? 0
                ResidentMemory.resetPeak()
                let result = try await phase()
                let peak = (ResidentMemory.peak ?? 0) - start
                summary.record(benchmark, metrics[index], peak * 100 / size)
                return result
            }
            try await measure(0) {
                _ = try await documents.upsert(large(size, run: run, version: 0))
            }
            let byID = try await measure(1) { try await documents.findByID("large").exec() }
            blackHole(byID)
            let byQuery = try await measure(2) { try await documents.find("version == 0").exec() }
            blackHole(byQuery)
            // The observer holds the result it was given; the change's new document is made inside the phase.
            let (first, delivered) = (AsyncGate(), AsyncGate())
            let liveQuery = try documents.find("kind == 'large'").observeLocal { _, event in
                if case .update = event { delivered.open() } else { first.open() }
            }
            await first.wait()
            try await measure(3) {
                _ = try await documents.upsert(large(size, run: run, version: 1))
                await delivered.wait()
            }
            await liveQuery.stop()
            try? FileManager.default.removeItem(atPath: path)
        }
        summary.printSummary()
    }
}

/// The document: `_id` "large", a kind, a version, and a string of `size` ASCII bytes.
private func large(_ size: Int, run: Int, version: Int) -> JSONValue {
    let text = String(repeating: "\(run % 10)", count: size)
    return ["_id": "large", "kind": "large", "version": .number(Double(version)), "text": .string(text)]
}

/// Opens once; every wait returns after that.
private final class AsyncGate: Sendable {
    private let state = LockedValue<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if resumeNow { continuation.resume() }
        }
    }
}

/// Memory a live query over a whole collection holds, as a multiple of the collection's JSON text (in hundredths):
/// `count` documents of about 1.5 KB (nested objects, arrays, numbers and strings), written to a SQLite store, then
/// observed with `findAll()` until the first result arrives. Counted in heap bytes in use (`mallinfo2`), which,
/// unlike the resident size, does not depend on what earlier runs left for malloc to reuse.
func followedCollectionScenario(count: Int, runs: Int) {
    let figures = ["held while observed (% of the JSON)"]
    let metrics = figures.map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark("Observing a collection of \(count) documents", configuration: scenario(metrics)) { benchmark in
        let summary = Runs("Followed collection")
        for run in 0..<runs {
            let path = Fixture.directory() + "/followed-\(UUID().uuidString).sqlite"
            let store = Store(try SQLiteDocumentStore(path: path))
            let documents = store.collection("documents")
            var bytes = 0
            for start in stride(from: 0, to: count, by: 1_000) {
                let batch = (start..<min(start + 1_000, count)).map { record($0, run: run) }
                bytes += batch.reduce(0) { $0 + $1.jsonText.utf8.count }
                try await store.write { transaction in
                    for document in batch { _ = try transaction.collection("documents").upsert(document) }
                }
            }
            let before = heapBytesInUse() ?? 0
            let first = AsyncGate()
            let liveQuery = try documents.findAll().observeLocal { _, _ in first.open() }
            await first.wait()
            summary.record(benchmark, metrics[0], ((heapBytesInUse() ?? 0) - before) * 100 / bytes)
            await liveQuery.stop()
            try? FileManager.default.removeItem(atPath: path)
        }
        summary.printSummary()
    }
}

/// A document of about 1.5 KB, shaped like an API's record: nested objects, an array of objects, numbers, strings.
private func record(_ index: Int, run: Int) -> JSONValue {
    let lines: [JSONValue] = (0..<8).map { line in
        [
            "sku": .string("sku-\(index)-\(line)"), "quantity": .number(Double(line)),
            "price": .number(9.5 + Double(line)),
        ]
    }
    return [
        "_id": .string("r\(index)"), "run": .number(Double(run)), "name": .string("Record number \(index)"),
        "description": .string(String(repeating: "A line of text that describes the record. ", count: 12)),
        "customer": [
            "name": .string("Customer \(index % 977)"), "email": .string("c\(index % 977)@example.com"),
            "address": [
                "street": "1 Main Street", "city": "Springfield", "zip": .string("\(10_000 + index % 89_999)"),
            ],
        ],
        "lines": .array(lines), "tags": ["a", "b", "c"], "total": .number(Double(index % 1_000) * 1.25),
    ]
}
