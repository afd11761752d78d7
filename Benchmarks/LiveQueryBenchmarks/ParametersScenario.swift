import BenchmarkSupport
import Dispatch
import GRDB
import LiveQueryKit

/// 5. 1,000 observers over 100 parameters (10 per group, every group observed), 1,000 commits/s, each commit to a
/// document of one group. Tether: 1,000 `observeLocal` with `$args` — 100 distinct queries. GRDB: 100
/// `SharedValueObservation`s, one per group, 10 subscribers each. Each run first times the same commits with
/// nothing observed: the writer's cost of being observed.
func parametersScenario(runs: Int) {
    let name = "5. 1,000 observers, 100 parameters, 1,000 commits/s"
    let names = [
        "Tether evaluations per 100 commits", "Tether latency p50 (µs)", "Tether latency p99 (µs)",
        "Tether commit p99 (µs)", "Tether commit p99, unobserved (µs)",
        "GRDB fetches per 100 commits", "GRDB latency p50 (µs)", "GRDB latency p99 (µs)",
        "GRDB commit p99 (µs)", "GRDB commit p99, unobserved (µs)",
    ]
    figuresBenchmark(name, figures: names, documents: 10_000) { fixture, store, pool, record in
        let groups = fixture.groups
        let count = 1_000
        // Commit i writes a document of group i % groups.
        let group = { (i: Int) in i % groups }
        let index = { (i: Int) in fixture.index(inGroup: i % groups, i / groups) }

        for run in 0..<runs {
            let seqBase = run * 2 * count
            let tether = {
                let unobserved = try await pacedRun(
                    rate: 1_000, count: count, seqBase: seqBase, arrivals: nil, group: group
                ) { i, seq in try await fixture.tetherWrite(store, index: index(i), seq: seq) }
                let arrivals = Arrivals()
                let deliveries = Counter()
                let handlerQueue = DispatchQueue(label: "tether")
                let liveQueries = try (0..<1_000).map { observer in
                    try fixture.tetherQuery(store, group: observer % groups).observeLocal(deliverOn: handlerQueue) {
                        documents, _ in
                        arrivals.saw(newestSeq(documents))
                        deliveries.increment()
                    }
                }
                try await settled(deliveries)
                let before = store.statistics
                let observed = try await pacedRun(
                    rate: 1_000, count: count, seqBase: seqBase + count, arrivals: arrivals, group: group
                ) { i, seq in try await fixture.tetherWrite(store, index: index(i), seq: seq) }
                await store.waitForLiveQueries()
                let after = store.statistics
                let work = after.evaluations + after.incrementalUpdates - before.evaluations - before.incrementalUpdates
                record("Tether evaluations per 100 commits", work * 100 / count)
                record("Tether latency p50 (µs)", percentile(50, observed.latencies))
                record("Tether latency p99 (µs)", percentile(99, observed.latencies))
                record("Tether commit p99 (µs)", percentile(99, observed.commits))
                record("Tether commit p99, unobserved (µs)", percentile(99, unobserved.commits))
                for liveQuery in liveQueries { await liveQuery.stop() }
            }
            let grdb = {
                let unobserved = try await pacedRun(
                    rate: 1_000, count: count, seqBase: seqBase, arrivals: nil, group: group
                ) { i, seq in try await fixture.grdbWrite(pool, index: index(i), seq: seq) }
                let arrivals = Arrivals()
                let fetches = Counter()
                let deliveries = Counter()
                let handlerQueue = DispatchQueue(label: "grdb")
                let shared = (0..<groups).map { group in
                    Fixture.grdbObservation(group: group, fetches: fetches).shared(
                        in: pool, scheduling: .async(onQueue: handlerQueue))
                }
                let subscriptions = (0..<1_000).map { observer in
                    shared[observer % groups].start(
                        onError: { print("\($0)") },
                        onChange: {
                            arrivals.saw(newestSeq($0))
                            deliveries.increment()
                        })
                }
                try await settled(deliveries)
                try await Task.sleep(for: .milliseconds(200))  // any fetch of GRDB's start-up, before the count
                let fetchesBefore = fetches.count
                let observed = try await pacedRun(
                    rate: 1_000, count: count, seqBase: seqBase + count, arrivals: arrivals, group: group
                ) { i, seq in try await fixture.grdbWrite(pool, index: index(i), seq: seq) }
                record("GRDB fetches per 100 commits", (fetches.count - fetchesBefore) * 100 / count)
                record("GRDB latency p50 (µs)", percentile(50, observed.latencies))
                record("GRDB latency p99 (µs)", percentile(99, observed.latencies))
                record("GRDB commit p99 (µs)", percentile(99, observed.commits))
                record("GRDB commit p99, unobserved (µs)", percentile(99, unobserved.commits))
                for subscription in subscriptions { subscription.cancel() }
            }
            try await alternating(run, tether, grdb)
        }
    }
}

/// Returns once each of the 1,000 observers has had its first result: a side's initial deliveries (1,000 handler
/// calls on its one queue, about 15 ms) must not be in the queue ahead of its first measured commits.
private func settled(_ deliveries: Counter) async throws {
    guard try await waitUntil({ deliveries.count >= 1_000 }) else { throw FirstResultsTimedOut() }
}

/// Not every observer of scenario 5 received its first result.
struct FirstResultsTimedOut: Error, CustomStringConvertible {
    var description: String { "scenario 5: not every observer received its first result within 30 s" }
}
