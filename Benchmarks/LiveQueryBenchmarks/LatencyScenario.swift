import Benchmark
import BenchmarkSupport
import Dispatch
import GRDB
import LiveQueryKit

/// 1. Commit → handler latency: one observer of the group's 100 documents, commits at a steady rate to documents of
/// that group, each changing the result. Tether: `observeLocal(deliverOn:)` on a query over a declared index. GRDB:
/// `trackingConstantRegion` + `removeDuplicates()` over an expression index, `.async(onQueue:)`.
func latencyScenario(rate: Int, count: Int, documents: Int, runs: Int) {
    let name = "1. Latency, \(rate) commits/s, \(documents / 1_000)k documents"
    let metrics = ["Tether p50 (µs)", "Tether p99 (µs)", "GRDB p50 (µs)", "GRDB p99 (µs)"].map {
        BenchmarkMetric.custom($0, useScalingFactor: false)
    }
    Benchmark(name, configuration: scenario(metrics)) { benchmark in
        let fixture = Fixture(documentCount: documents)
        let summary = Runs(name)
        let (store, pool) = try await fixture.sides()
        print("GRDB plan: \(try Fixture.grdbPlan(pool))")

        let tetherArrivals = Arrivals()
        let liveQuery = try fixture.tetherQuery(store).observeLocal(deliverOn: DispatchQueue(label: "tether")) {
            documents, _ in
            tetherArrivals.saw(newestSeq(documents))
        }
        let grdbArrivals = Arrivals()
        let grdbCancellable = Fixture.grdbObservation().start(
            in: pool, scheduling: .async(onQueue: DispatchQueue(label: "grdb")),
            onError: { print("GRDB observation error: \($0)") }, onChange: { grdbArrivals.saw(newestSeq($0)) })
        await store.waitForLiveQueries()
        try await Task.sleep(for: .milliseconds(200))  // GRDB's initial fetch

        let observed = { (_: Int) in Fixture.observedGroup }
        for run in 0..<runs {
            let seqBase = run * count
            let record = { (offset: Int, result: PacedRun) in
                summary.record(benchmark, metrics[offset], percentile(50, result.latencies))
                summary.record(benchmark, metrics[offset + 1], percentile(99, result.latencies))
            }
            try await alternating(run) {
                let result = try await pacedRun(
                    rate: rate, count: count, seqBase: seqBase, arrivals: tetherArrivals, group: observed
                ) { i, seq in try await fixture.tetherWrite(store, index: fixture.observedIndex(i), seq: seq) }
                record(0, result)
            } _: {
                let result = try await pacedRun(
                    rate: rate, count: count, seqBase: seqBase, arrivals: grdbArrivals, group: observed
                ) { i, seq in try await fixture.grdbWrite(pool, index: fixture.observedIndex(i), seq: seq) }
                record(2, result)
            }
        }
        print("Tether statistics: \(store.statistics)")
        summary.printSummary()
        await liveQuery.stop()
        grdbCancellable.cancel()
    }
}
