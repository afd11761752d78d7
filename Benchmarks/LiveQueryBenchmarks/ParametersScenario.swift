import BenchmarkSupport
import Dispatch
import GRDB
import LiveQueryKit

/// 5. Many observers over many parameters: 10 observers per group, every group observed, 1,000 commits/s, each commit
/// to a document of one group. Tether: one `observeLocal` with `$args` per observer — one distinct query per group.
/// GRDB: one `SharedValueObservation` per group, 10 subscribers each. Each run first times the same commits with
/// nothing observed: the writer's cost of being observed. "CPU per commit" is the whole process's processor time
/// over the run (writer, engine, handlers) divided by its commits.
///
/// `comparesGRDB` false runs Tether alone: at 1,000 groups GRDB's side would fetch 1,000 observations per commit
/// (its tracked region is the whole table), which a writer at 1,000 commits/s outruns without end.
func parametersScenario(observers: Int, documents: Int, runs: Int, comparesGRDB: Bool) {
    let groups = documents / 100
    let name =
        comparesGRDB
        ? "5. \(grouped(observers)) observers, \(grouped(groups)) parameters, 1,000 commits/s"
        : "5b. \(grouped(observers)) observers, \(grouped(groups)) parameters, \(documents / 1_000)k documents, "
            + "1,000 commits/s, Tether alone"
    let sides = comparesGRDB ? ["Tether", "GRDB"] : ["Tether"]
    let names = sides.flatMap { side in
        ["\(side) \(workName(side)) per 100 commits"]
            + [
                "latency p50 (µs)", "latency p99 (µs)", "commit p99 (µs)", "commit p99, unobserved (µs)",
                "commit p99, observed ÷ unobserved (%)", "CPU per commit (µs)", "CPU per commit, unobserved (µs)",
                "stopping every observer (µs)",
            ].map { "\(side) \($0)" }
    }
    figuresBenchmark(name, figures: names, documents: documents) { fixture, store, pool, record in
        let count = 1_000
        // Commit i writes a document of group i % groups.
        let group = { (i: Int) in i % groups }
        let index = { (i: Int) in fixture.index(inGroup: i % groups, i / groups) }

        /// One side's run: the commits unobserved, then observed by `observers` observers (started by `observe`, which
        /// returns what stops them), with the side's count of evaluations or fetches taken by `work`.
        func run(
            _ side: String, seqBase: Int, work: @escaping () -> Int,
            observe: (Arrivals, Counter) throws -> () async -> Void,
            write: @escaping (_ index: Int, _ seq: Int) async throws -> Void
        ) async throws {
            let usageBefore = ProcessUsage.now()
            let unobserved = try await pacedRun(
                rate: 1_000, count: count, seqBase: seqBase, arrivals: nil, group: group
            ) { i, seq in try await write(index(i), seq) }
            let unobservedUsage = ProcessUsage.now() - usageBefore
            let arrivals = Arrivals()
            let deliveries = Counter()
            let stop = try observe(arrivals, deliveries)
            // Each observer's first result delivered: none of them is still in the handlers' queue ahead of the
            // first measured commits.
            guard try await waitUntil({ deliveries.count >= observers }) else { throw FirstResultsTimedOut(side: side) }
            try await Task.sleep(for: .milliseconds(200))  // any work of the side's start-up, before the count
            let workBefore = work()
            let observedBefore = ProcessUsage.now()
            let observed = try await pacedRun(
                rate: 1_000, count: count, seqBase: seqBase + count, arrivals: arrivals, group: group
            ) { i, seq in try await write(index(i), seq) }
            let observedUsage = ProcessUsage.now() - observedBefore
            record("\(side) \(workName(side)) per 100 commits", (work() - workBefore) * 100 / count)
            record("\(side) latency p50 (µs)", percentile(50, observed.latencies))
            record("\(side) latency p99 (µs)", percentile(99, observed.latencies))
            record("\(side) commit p99 (µs)", percentile(99, observed.commits))
            record("\(side) commit p99, unobserved (µs)", percentile(99, unobserved.commits))
            // The two blocks of one run side by side: the ratio the target is set on, paired within the run.
            record(
                "\(side) commit p99, observed ÷ unobserved (%)",
                percentile(99, observed.commits) * 100 / max(1, percentile(99, unobserved.commits)))
            record("\(side) CPU per commit (µs)", observedUsage.cpuMicroseconds / count)
            record("\(side) CPU per commit, unobserved (µs)", unobservedUsage.cpuMicroseconds / count)
            // One by one, as a screen's worth of observers goes: Tether's stops return once each observer has ended.
            let stopping = nowMicroseconds()
            await stop()
            record("\(side) stopping every observer (µs)", nowMicroseconds() - stopping)
        }

        for runIndex in 0..<runs {
            let seqBase = runIndex * 2 * count
            let tether = {
                try await run(
                    "Tether", seqBase: seqBase, work: { resultsComputed(store.statistics) },
                    observe: { arrivals, deliveries in
                        let handlerQueue = DispatchQueue(label: "tether")
                        let liveQueries = try (0..<observers).map { observer in
                            try fixture.tetherQuery(store, group: observer % groups).observeLocal(
                                deliverOn: handlerQueue
                            ) { documents, _ in
                                arrivals.saw(newestSeq(documents))
                                deliveries.increment()
                            }
                        }
                        return { for liveQuery in liveQueries { await liveQuery.stop() } }
                    },
                    write: { try await fixture.tetherWrite(store, index: $0, seq: $1) })
            }
            let fetches = Counter()
            let grdb = {
                try await run(
                    "GRDB", seqBase: seqBase, work: { fetches.count },
                    observe: { arrivals, deliveries in
                        let handlerQueue = DispatchQueue(label: "grdb")
                        let shared = (0..<groups).map { group in
                            Fixture.grdbObservation(group: group, fetches: fetches).shared(
                                in: pool, scheduling: .async(onQueue: handlerQueue))
                        }
                        let subscriptions = (0..<observers).map { observer in
                            shared[observer % groups].start(
                                onError: { print("\($0)") },
                                onChange: {
                                    arrivals.saw(newestSeq($0))
                                    deliveries.increment()
                                })
                        }
                        return { for subscription in subscriptions { subscription.cancel() } }
                    },
                    write: { try await fixture.grdbWrite(pool, index: $0, seq: $1) })
            }
            if comparesGRDB { try await alternating(runIndex, tether, grdb) } else { try await tether() }
        }
    }
}

/// What a side's work per commit is counted in: Tether's results computed, GRDB's fetches.
private func workName(_ side: String) -> String { side == "GRDB" ? "fetches" : "evaluations" }

/// `12,345` for 12345.
private func grouped(_ number: Int) -> String {
    let digits = Array(String(number))
    return String(
        digits.enumerated().flatMap { offset, digit in
            offset > 0 && (digits.count - offset) % 3 == 0 ? [",", digit] : [digit]
        })
}

/// Not every observer of scenario 5 received its first result.
struct FirstResultsTimedOut: Error, CustomStringConvertible {
    let side: String
    var description: String { "scenario 5: not every observer of \(side) received its first result within 30 s" }
}
