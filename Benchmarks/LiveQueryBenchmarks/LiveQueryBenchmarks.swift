// LiveQueryKit against GRDB's ValueObservation, same schema, same documents, same machine, same run.
//   TETHER_BENCHMARKS=1 swift package --scratch-path .build-bench benchmark --target LiveQueryBenchmarks
// Each scenario runs once per benchmark (maxIterations 1); its figures are custom metrics, in the units named.

import Benchmark
import DeliveryKit
import Dispatch
import Foundation
import GRDB
import LiveQueryKit
import TetherConcurrency
import TetherJSON

let latency = BenchmarkMetric.custom("latency (µs)", useScalingFactor: false)
let commitLatency = BenchmarkMetric.custom("commit latency (µs)", useScalingFactor: false)
let peakResidentDelta = BenchmarkMetric.custom("peak RSS delta (KB)", useScalingFactor: false)
let deliveries = BenchmarkMetric.custom("deliveries", useScalingFactor: false)
let heldHighWater = BenchmarkMetric.custom("snapshots held, high-water", useScalingFactor: false)
let toFinal = BenchmarkMetric.custom("last commit → final delivery (ms)", useScalingFactor: false)
let writerTime = BenchmarkMetric.custom("writer, all commits (ms)", useScalingFactor: false)
let evaluations = BenchmarkMetric.custom("query evaluations", useScalingFactor: false)
let incrementalUpdates = BenchmarkMetric.custom("incremental result updates", useScalingFactor: false)

func scenario(_ metrics: [BenchmarkMetric]) -> Benchmark.Configuration {
    .init(metrics: metrics, warmupIterations: 0, maxDuration: .seconds(600), maxIterations: 1)
}

/// Commits at `rate` per second, one document of the observed group each, recording for each result delivered the
/// time from the start of the commit it reflects to the handler.
func measureLatency(
    _ benchmark: Benchmark, rate: Int, count: Int,
    write: @escaping @Sendable (_ index: Int, _ seq: Int) async throws -> Void,
    observe: (@escaping @Sendable ([JSONValue]) -> Void) async throws -> AnyObject
) async throws {
    let sent = LockedValue([Int](repeating: 0, count: count))
    let measured = LockedValue<[Int]>([])
    let newest = LockedValue(-1)
    let handle = try await observe { documents in
        let seq = newestSeq(documents)
        let now = nowMicroseconds()
        guard seq >= 0 else { return }
        let first = newest.withLock { newest -> Bool in
            guard seq > newest else { return false }
            newest = seq
            return true
        }
        if first { measured.withLock { $0.append(now - sent.withLock { $0[seq] }) } }
    }
    try await Task.sleep(for: .milliseconds(300))  // the initial result
    let interval = 1_000_000 / rate
    let start = nowMicroseconds()
    for index in 0..<count {
        let due = start + index * interval
        let wait = due - nowMicroseconds()
        if wait > 0 { try await Task.sleep(for: .microseconds(wait)) }
        sent.withLock { $0[index] = nowMicroseconds() }
        try await write(Fixture.observedIndex(index), index)
    }
    while newest.withLock({ $0 }) < count - 1 { try await Task.sleep(for: .milliseconds(5)) }
    for value in measured.withLock({ $0 }) { benchmark.measurement(latency, value) }
    withExtendedLifetime(handle) {}
}

/// The fast writer: `count` single-document commits as fast as they go, a handler that takes 10 ms.
func measureFastWriter(
    _ benchmark: Benchmark, count: Int, waitForFinal: Duration,
    write: @escaping @Sendable (_ index: Int, _ seq: Int) async throws -> Void,
    observe: (@escaping @Sendable ([JSONValue]) -> Void) async throws -> AnyObject,
    held: (AnyObject) -> Int?
) async throws {
    let delivered = LockedValue(0)
    let newest = LockedValue((seq: -1, at: 0))
    let handle = try await observe { documents in
        Thread.sleep(forTimeInterval: 0.010)
        let seq = newestSeq(documents)
        delivered.withLock { $0 += 1 }
        newest.withLock { if seq > $0.seq { $0 = (seq, nowMicroseconds()) } }
    }
    try await Task.sleep(for: .milliseconds(300))
    let before = ResidentSampler.resident()
    let sampler = ResidentSampler()
    let start = nowMicroseconds()
    for index in 0..<count { try await write(Fixture.observedIndex(index), index) }
    let end = nowMicroseconds()
    let deadline = ContinuousClock.now + waitForFinal
    while newest.withLock({ $0.seq }) < count - 1, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(5))
    }
    let peak = sampler.stop()
    let final = newest.withLock { $0 }
    benchmark.measurement(peakResidentDelta, max(0, peak - before) / 1024)
    benchmark.measurement(deliveries, delivered.withLock { $0 })
    benchmark.measurement(writerTime, (end - start) / 1000)
    // -1: the final state had not been delivered when the wait ended.
    benchmark.measurement(toFinal, final.seq == count - 1 ? (final.at - end) / 1000 : -1)
    if let held = held(handle) { benchmark.measurement(heldHighWater, held) }
    withExtendedLifetime(handle) {}
}

/// A GRDB observation that counts its fetches.
func grdbObservation(
    _ pool: DatabasePool, fetches: LockedValue<Int>, queue: DispatchQueue,
    onChange: @escaping @Sendable ([JSONValue]) -> Void
) -> AnyDatabaseCancellable {
    ValueObservation.trackingConstantRegion { db -> [JSONValue] in
        fetches.withLock { $0 += 1 }
        return try Fixture.grdbFetch(db)
    }.start(
        in: pool, scheduling: .async(onQueue: queue), onError: { print("GRDB observation error: \($0)") },
        onChange: onChange)
}

let benchmarks: @Sendable () -> Void = {
    // 1. Commit → handler latency.
    for (rate, count) in [(10, 50), (100, 200), (1_000, 1_000)] {
        Benchmark("1. Latency at \(rate) commits/s — Tether", configuration: scenario([latency])) { benchmark in
            let store = try await Fixture.tetherStore()
            let items = store.collection("items")
            try await measureLatency(benchmark, rate: rate, count: count) { index, seq in
                try await items.upsert(Fixture.document(index, seq: seq))
            } observe: { handler in
                try Fixture.tetherQuery(store).observeLocal(deliverOn: DispatchQueue(label: "handler")) {
                    documents, _ in
                    handler(documents.map(\.value))
                }
            }
        }
        Benchmark("1. Latency at \(rate) commits/s — GRDB ValueObservation", configuration: scenario([latency])) {
            benchmark in
            let pool = try Fixture.grdbPool()
            try await measureLatency(benchmark, rate: rate, count: count) { index, seq in
                try await Fixture.grdbWrite(pool, index: index, seq: seq)
            } observe: { handler in
                grdbObservation(
                    pool, fetches: LockedValue(0), queue: DispatchQueue(label: "handler"), onChange: handler)
            }
        }
    }

    // 2. A fast writer and a 10 ms handler.
    let fastMetrics = [peakResidentDelta, deliveries, heldHighWater, toFinal, writerTime]
    Benchmark("2. 100,000 commits, 10 ms handler — Tether", configuration: scenario(fastMetrics)) { benchmark in
        let store = try await Fixture.tetherStore()
        let items = store.collection("items")
        try await measureFastWriter(benchmark, count: 100_000, waitForFinal: .seconds(30)) { index, seq in
            try await items.upsert(Fixture.document(index, seq: seq))
        } observe: { handler in
            try Fixture.tetherQuery(store).observeLocal(deliverOn: DispatchQueue(label: "handler")) { documents, _ in
                handler(documents.map(\.value))
            }
        } held: {
            ($0 as? LiveQuery)?.deliveryStatistics.heldHighWater
        }
    }
    Benchmark(
        "2. 100,000 commits, 10 ms handler — GRDB ValueObservation .async(onQueue:)",
        configuration: scenario(fastMetrics)
    ) { benchmark in
        let pool = try Fixture.grdbPool()
        try await measureFastWriter(benchmark, count: 100_000, waitForFinal: .seconds(30)) { index, seq in
            try await Fixture.grdbWrite(pool, index: index, seq: seq)
        } observe: { handler in
            grdbObservation(pool, fetches: LockedValue(0), queue: DispatchQueue(label: "handler"), onChange: handler)
        } held: { _ in
            nil
        }
    }

    // 3. Irrelevant writes: 1,000 commits to another group.
    Benchmark("3. 1,000 irrelevant commits — Tether", configuration: scenario([evaluations, incrementalUpdates])) {
        benchmark in
        let store = try await Fixture.tetherStore()
        let items = store.collection("items")
        let liveQuery = try Fixture.tetherQuery(store).observeLocal { _, _ in }
        try await Task.sleep(for: .milliseconds(300))
        let before = store.statistics.evaluations
        for index in 0..<1_000 { try await items.upsert(Fixture.document(Fixture.otherIndex(index), seq: index)) }
        try await Task.sleep(for: .milliseconds(300))
        benchmark.measurement(evaluations, store.statistics.evaluations - before)
        benchmark.measurement(incrementalUpdates, store.statistics.incrementalUpdates)
        await liveQuery.stop()
    }
    Benchmark("3. 1,000 irrelevant commits — GRDB ValueObservation", configuration: scenario([evaluations])) {
        benchmark in
        let pool = try Fixture.grdbPool()
        let fetches = LockedValue(0)
        let observation = grdbObservation(pool, fetches: fetches, queue: DispatchQueue(label: "handler")) { _ in }
        try await Task.sleep(for: .milliseconds(300))
        let before = fetches.withLock { $0 }
        for index in 0..<1_000 { try await Fixture.grdbWrite(pool, index: Fixture.otherIndex(index), seq: index) }
        try await Task.sleep(for: .milliseconds(300))
        benchmark.measurement(evaluations, fetches.withLock { $0 } - before)
        withExtendedLifetime(observation) {}
    }

    // 4. Fan-out: one query, many observers.
    for observers in [0, 1, 10, 100, 1_000] {
        Benchmark(
            "4. Fan-out to \(observers) observers, 200 commits — Tether",
            configuration: scenario([commitLatency, evaluations, incrementalUpdates])
        ) { benchmark in
            let store = try await Fixture.tetherStore()
            let items = store.collection("items")
            let queries = try (0..<observers).map { _ in try Fixture.tetherQuery(store).observeLocal { _, _ in } }
            try await Task.sleep(for: .milliseconds(500))
            let before = store.statistics.evaluations
            let incrementalBefore = store.statistics.incrementalUpdates
            for index in 0..<200 {
                let start = nowMicroseconds()
                try await items.upsert(Fixture.document(Fixture.observedIndex(index), seq: index))
                benchmark.measurement(commitLatency, nowMicroseconds() - start)
            }
            try await Task.sleep(for: .milliseconds(500))
            benchmark.measurement(evaluations, store.statistics.evaluations - before)
            benchmark.measurement(incrementalUpdates, store.statistics.incrementalUpdates - incrementalBefore)
            for query in queries { await query.stop() }
        }
    }
}
