import Benchmark
import BenchmarkSupport
import Dispatch
import GRDB
import LiveQueryKit

/// 3. Irrelevant writes: 1,000 commits to documents of another group. Tether: query evaluations and result updates
/// (target 0). GRDB: fetches (its tracked region is the table: it cannot tell).
func irrelevantScenario(documents: Int, runs: Int) {
    let name = "3. 1,000 irrelevant commits, \(documents / 1_000)k documents"
    let metrics = ["Tether evaluations + updates", "GRDB fetches"].map {
        BenchmarkMetric.custom($0, useScalingFactor: false)
    }
    Benchmark(name, configuration: scenario(metrics)) { benchmark in
        let fixture = Fixture(documentCount: documents)
        let summary = Runs(name)
        let (store, pool) = try await fixture.sides()
        let liveQuery = try fixture.tetherQuery(store).observeLocal { _, _ in }
        let fetches = Counter()
        let arrivals = Arrivals()
        let observation = Fixture.grdbObservation(fetches: fetches).start(
            in: pool, scheduling: .async(onQueue: DispatchQueue(label: "grdb")), onError: { print("\($0)") },
            onChange: { arrivals.saw(newestSeq($0)) })
        await store.waitForLiveQueries()
        for run in 0..<runs {
            let before = store.statistics
            for i in 0..<1_000 { try await fixture.tetherWrite(store, index: fixture.otherIndex(i), seq: i) }
            await store.waitForLiveQueries()
            let after = store.statistics
            summary.record(
                benchmark, metrics[0],
                after.evaluations + after.incrementalUpdates - before.evaluations - before.incrementalUpdates)

            let fetchesBefore = fetches.count
            for i in 0..<1_000 { try await fixture.grdbWrite(pool, index: fixture.otherIndex(i), seq: i) }
            // A relevant commit after them, whose result marks the end: its own fetch is not counted.
            let marker = 1_000_000 + run
            try await fixture.grdbWrite(pool, index: fixture.observedIndex(0), seq: marker)
            try await waitUntil { arrivals.arrived(marker) }
            summary.record(benchmark, metrics[1], fetches.count - fetchesBefore - 1)
        }
        summary.printSummary()
        await liveQuery.stop()
        observation.cancel()
    }
}

/// 4. Fan-out: one query, N observers, 200 commits as fast as they go. Tether: N `observeLocal` (identical queries
/// share one evaluation). GRDB: one `SharedValueObservation` with N subscribers — its own idiom for this.
func fanOutScenario(observers: Int, documents: Int, runs: Int) {
    let name = "4. Fan-out to \(observers) observers, 200 commits, \(documents / 1_000)k documents"
    let names = [
        "Tether commit p50 (µs)", "Tether commit p99 (µs)", "Tether results computed",
        "GRDB commit p50 (µs)", "GRDB commit p99 (µs)", "GRDB fetches",
        "Tether starting every observer (µs)", "Tether stopping every observer (µs)",
        "GRDB starting every observer (µs)", "GRDB stopping every observer (µs)",
        "Tether heap bytes per observer", "GRDB heap bytes per observer",
    ]
    let metrics = names.map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark(name, configuration: scenario(metrics)) { benchmark in
        let fixture = Fixture(documentCount: documents)
        let summary = Runs(name)
        let (store, pool) = try await fixture.sides()
        let handlerQueue = DispatchQueue(label: "handlers")
        // Starting (until every observer has its first result) and stopping, once per benchmark: the cost of a
        // screen's worth of observers of one query coming and going. And the heap each side's observers hold once
        // started (glibc's figure for the whole process: the other sides' threads are idle meanwhile).
        var heapBefore = heapBytesInUse()
        var started = nowMicroseconds()
        let liveQueries = try (0..<observers).map { _ in
            try fixture.tetherQuery(store).observeLocal(deliverOn: handlerQueue) { _, _ in }
        }
        await store.waitForLiveQueries()
        handlerQueue.sync {}
        let tetherStart = nowMicroseconds() - started
        let tetherHeap = heapBytesPerObserver(since: heapBefore, observers: observers)
        let fetches = Counter()
        let grdbQueue = DispatchQueue(label: "grdb")
        let shared = Fixture.grdbObservation(fetches: fetches).shared(in: pool, scheduling: .async(onQueue: grdbQueue))
        let arrivals = Arrivals()
        let firstResults = Counter()
        heapBefore = heapBytesInUse()
        started = nowMicroseconds()
        let subscriptions = (0..<observers).map { _ in
            shared.start(
                onError: { print("\($0)") },
                onChange: {
                    arrivals.saw(newestSeq($0))
                    firstResults.increment()
                })
        }
        _ = try await waitUntil { firstResults.count >= observers }
        let grdbStart = nowMicroseconds() - started
        grdbQueue.sync {}
        let grdbHeap = heapBytesPerObserver(since: heapBefore, observers: observers)
        for run in 0..<runs {
            let seqBase = run * 200
            let before = store.statistics
            let tether = try await pacedRun(
                rate: 1_000_000, count: 200, seqBase: seqBase, arrivals: nil, group: { _ in 0 }
            ) { i, seq in try await fixture.tetherWrite(store, index: fixture.observedIndex(i), seq: seq) }
            await store.waitForLiveQueries()
            let after = store.statistics
            summary.record(benchmark, metrics[0], percentile(50, tether.commits))
            summary.record(benchmark, metrics[1], percentile(99, tether.commits))
            summary.record(
                benchmark, metrics[2],
                after.evaluations + after.incrementalUpdates - before.evaluations - before.incrementalUpdates)

            let fetchesBefore = fetches.count
            let grdb = try await pacedRun(
                rate: 1_000_000, count: 200, seqBase: seqBase, arrivals: observers > 0 ? arrivals : nil,
                group: { _ in 0 }
            ) { i, seq in try await fixture.grdbWrite(pool, index: fixture.observedIndex(i), seq: seq) }
            summary.record(benchmark, metrics[3], percentile(50, grdb.commits))
            summary.record(benchmark, metrics[4], percentile(99, grdb.commits))
            summary.record(benchmark, metrics[5], fetches.count - fetchesBefore)
        }
        // GRDB's last fetch reaches its subscribers one after another on its queue, after the first of them saw it:
        // that fan-out ends before Tether's observers are stopped, so that it is not timed as theirs.
        grdbQueue.sync {}
        started = nowMicroseconds()
        for liveQuery in liveQueries { await liveQuery.stop() }
        summary.record(benchmark, metrics[6], tetherStart)
        summary.record(benchmark, metrics[7], nowMicroseconds() - started)
        started = nowMicroseconds()
        for subscription in subscriptions { subscription.cancel() }
        summary.record(benchmark, metrics[8], grdbStart)
        summary.record(benchmark, metrics[9], nowMicroseconds() - started)
        if let tetherHeap, let grdbHeap {
            summary.record(benchmark, metrics[10], tetherHeap)
            summary.record(benchmark, metrics[11], grdbHeap)
        }
        summary.printSummary()
    }
}

/// The heap grown since `before`, per observer; nil without heap statistics or observers.
private func heapBytesPerObserver(since before: Int?, observers: Int) -> Int? {
    guard let before, let now = heapBytesInUse(), observers > 0 else { return nil }
    return (now - before) / observers
}
