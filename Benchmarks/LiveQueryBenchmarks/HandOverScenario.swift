import BenchmarkSupport
import LiveQueryKit
import TetherConcurrency

/// 6. The hand-over at rest: how long a slow consumer waits, from asking for its next result to holding it, when that
/// result was computed while it worked and nothing else runs. Scenario 2 measures the same moment beside a writer
/// going as fast as it can ("ready → final", "of which before the read"); here each round writes one commit while the
/// consumer works and waits for its result to be ready — Tether's computed and staged for the busy observer
/// (`waitForLiveQueries`), GRDB's fetched into its sequence's buffer — so the figure is each framework's own path
/// from the signal, with the caches a 10 ms pause leaves.
///
/// Per run and side, `rounds` rounds: "hand-over" is the median (and p90) of the rounds' time from the consumer being
/// free to its holding the result, "read" the median of its reading the result's 100 `seq`s after that, and "read
/// again at once" that of the same read repeated straight after — the read's own cost, with the result in the
/// consumer's cache, so that what "read" adds to it is the cost of the memory it finds cold. A round whose
/// commit outlasted the consumer's 10 ms (a checkpoint) is left out and counted as "not ready in time". Tether's
/// "computed at the signal" counts results computed after the result was ready: 0 when every signal took the one
/// waiting, as it should.
func handOverScenario(rounds: Int, documents: Int, runs: Int) {
    let name = "6. Hand-over at rest, 10 ms consumer, \(documents / 1_000)k documents"
    let sides = ["Tether", "Tether snapshots()", "GRDB"]
    let figures = [
        "hand-over (µs)", "hand-over p90 (µs)", "read (µs)", "read again at once (µs)", "rounds not ready in time",
    ]
    let names =
        sides.flatMap { side in figures.map { "\(side) \($0)" } }
        + sides.filter { $0 != "GRDB" }.map { "\($0) computed at the signal" }
    figuresBenchmark(name, figures: names, documents: documents) { fixture, store, pool, record in
        let seqs = SeqCounter()

        /// One side's run: observes, then `rounds` times commits while the consumer works — `write` returns once the
        /// result is ready — and measures the consumer's next hand-over.
        func run(
            _ side: String, observe: (Consumer) throws -> () async -> Void,
            write: @escaping @Sendable (Int) async throws -> Void
        ) async throws {
            let consumer = Consumer(readsTwice: true)
            let end = try observe(consumer)
            guard try await waitUntil({ consumer.deliveries > 0 }) else { throw HandOverTimedOut(side: side) }
            var (handOvers, reads, secondReads, computedAtSignal, late) = ([Int](), [Int](), [Int](), 0, 0)
            for _ in 0..<rounds {
                let ready = LockedValue(0)
                let figures = try await consumer.measure(count: 1, seqBase: seqs.take(1), samplingMemory: false) {
                    _, seq in
                    try await write(seq)
                    ready.withLock { $0 = resultsComputed(store.statistics) }
                }
                guard figures.toFinal >= 0 else { throw HandOverTimedOut(side: side) }
                // The consumer asked before the round's write had returned — its commit took longer than the
                // consumer's 10 ms (a checkpoint) — so this round is no hand-over at rest.
                guard !figures.consumerWaited else {
                    late += 1
                    continue
                }
                handOvers.append(figures.readyToHanded)
                reads.append(figures.readyToFinal - figures.readyToHanded)
                secondReads.append(figures.secondRead)
                if side != "GRDB" { computedAtSignal += resultsComputed(store.statistics) - ready.withLock { $0 } }
            }
            await end()
            record("\(side) hand-over (µs)", percentile(50, handOvers))
            record("\(side) hand-over p90 (µs)", percentile(90, handOvers))
            record("\(side) read (µs)", percentile(50, reads))
            record("\(side) read again at once (µs)", percentile(50, secondReads))
            record("\(side) rounds not ready in time", late)
            if side != "GRDB" { record("\(side) computed at the signal", computedAtSignal) }
        }

        let tetherWrite = { @Sendable (seq: Int) in
            try await fixture.tetherWrite(store, index: fixture.observedIndex(seq), seq: seq)
            await store.waitForLiveQueries()  // computed, and staged for the busy consumer
        }
        let fetches = Counter()
        let grdbWrite = { @Sendable (seq: Int) in
            let fetched = fetches.count
            try await fixture.grdbWrite(pool, index: fixture.observedIndex(seq), seq: seq)
            // Its observation has fetched after the commit; the value is in the buffer well inside the consumer's
            // 10 ms (a late one would show in the p90).
            _ = try await waitUntil { fetches.count > fetched }
        }
        typealias Observe = (Consumer) throws -> () async -> Void
        let observers: [(side: String, observe: Observe)] = [
            ("Tether", { try queueHandlerConsumer(fixture.tetherQuery(store), $0).cancel }),
            ("Tether snapshots()", { try snapshotsConsumer(fixture.tetherQuery(store), $0).cancel }),
            ("GRDB", { grdbConsumer(pool, $0, fetches: fetches) }),
        ]
        let chosen = observers.filter { Fixture.sides?.contains($0.side) ?? true }.map { side in
            { try await run(side.side, observe: side.observe, write: side.side == "GRDB" ? grdbWrite : tetherWrite) }
        }
        for run in 0..<(Fixture.runs ?? runs) { try await rotating(run, chosen) }
    }
}

/// A side's consumer never received its first result, or a round's result never came.
struct HandOverTimedOut: Error, CustomStringConvertible {
    let side: String
    var description: String { "scenario 6: \(side)'s consumer did not receive its result within 30 s" }
}
