import BenchmarkSupport
import GRDB
import LiveQueryKit
import TetherConcurrency

/// 2. A fast writer and a slow consumer (10 ms per result, without blocking a thread), each side in its own
/// back-pressure idiom: Tether's `observeLocalWithNextSignal` (the next result once the handler signals) and its
/// `snapshots()` (an async sequence: asking for the next element is the signal), GRDB's
/// `values(in:bufferingPolicy: .bufferingNewest(1))` (an async sequence keeping only the newest value).
///
/// Each side's run writes `count` commits with an observer and as many without, in `blocks` pairs of blocks, the
/// order within a pair alternating (see ``SlowConsumerSide/run(_:blocks:of:seqs:record:)``). Two control sides run only
/// when `TETHER_BENCH_SIDES` names them:
/// - `Tether held (control)` observes with a `snapshots()` consumer that holds its first element until the block's
///   writes end (``consumeAfterTheWrites(_:_:newest:)``): the writer's cost of being observed, without the delivery
///   cycle.
/// - `Consumer alone (control)` observes nothing: the same consumer wakes every 10 ms and reads the newest seq the
///   writer noted. What the consumer's own wake-ups cost this writer on this machine, with no framework at all.
func slowConsumerScenario(count: Int, blocks: Int, documents: Int, runs: Int) {
    let name = "2. \(count / 1_000)k commits, 10 ms consumer, \(documents / 1_000)k documents"
    // The controls run only when TETHER_BENCH_SIDES names them.
    let control = "Tether held (control)"
    let alone = "Consumer alone (control)"
    let sides =
        ["Tether", "Tether snapshots()", "GRDB"] + [control, alone].filter { Fixture.sides?.contains($0) == true }
    let tetherOnly = [
        "results computed", "quiet catch-ups", "computed ahead of a signal", "ahead left to the signal",
        "of which a write in flight", "results computed after the last commit",
        "of which ahead of a signal", "of which not ahead", "held high-water", "engine rounds",
    ]
    let names =
        sides.flatMap { side in SlowConsumerSide.figures.map { "\(side) \($0)" } }
        + sides.filter { $0 != "GRDB" && $0 != alone }.flatMap { side in tetherOnly.map { "\(side) \($0)" } }
    figuresBenchmark(name, figures: names, documents: documents) { fixture, store, pool, record in
        let seqs = SeqCounter()
        let perBlock = count / blocks

        /// A Tether side: around each observed block, the store's statistics; `atEnd`, noted as the block's last
        /// commit returns, tells whether the final result was computed ahead of the consumer's signal.
        let tether = { (side: String, observe: @escaping (Consumer) throws -> any ObservationCancellable) in
            let atEnd = LockedValue<LiveQueryStatistics?>(nil)
            return SlowConsumerSide(name: side) { i, seq in
                try await fixture.tetherWrite(store, index: fixture.observedIndex(i), seq: seq)
                if i == perBlock - 1 { atEnd.withLock { $0 = store.statistics } }
            } observe: { consumer in
                let before = store.statistics
                let observation = try observe(consumer)
                return {
                    let after = store.statistics
                    let end = atEnd.withLock { $0 } ?? after
                    let afterLast = resultsComputed(after) - resultsComputed(end)
                    let aheadAfterLast = after.computedAhead - end.computedAhead
                    record("\(side) results computed after the last commit", afterLast)
                    record("\(side) of which ahead of a signal", aheadAfterLast)
                    // The rest were computed when the consumer signalled and found no current result staged (or, for a
                    // consumer already idle, on the last commit): the blocks whose consumer waited for a computation,
                    // the mean being their share.
                    record("\(side) of which not ahead", max(0, afterLast - aheadAfterLast))
                    record("\(side) results computed", resultsComputed(after) - resultsComputed(before))
                    record("\(side) quiet catch-ups", after.quietCatchUps - before.quietCatchUps)
                    record("\(side) engine rounds", after.rounds - before.rounds)
                    record("\(side) computed ahead of a signal", after.computedAhead - before.computedAhead)
                    record("\(side) ahead left to the signal", after.aheadLeftToSignal - before.aheadLeftToSignal)
                    record(
                        "\(side) of which a write in flight", after.aheadLeftWhileWriting - before.aheadLeftWhileWriting
                    )
                    let statistics =
                        (observation as? LiveQuery)?.deliveryStatistics
                        ?? (observation as? LiveQuerySnapshots)?.deliveryStatistics
                    record("\(side) held high-water", statistics?.heldHighWater ?? -1)
                    observation.cancel()
                }
            }
        }
        let signalling = tether("Tether") { try queueHandlerConsumer(fixture.tetherQuery(store), $0) }
        // The same consumer as GRDB's below: a task that sleeps 10 ms per element.
        let snapshots = tether("Tether snapshots()") { try snapshotsConsumer(fixture.tetherQuery(store), $0) }
        let held = tether(control) { consumer in
            let snapshots = try fixture.tetherQuery(store).snapshots()
            Task { try await consumeAfterTheWrites(snapshots, consumer) { newestSeq($0.documents) } }
            return snapshots
        }
        let grdb = SlowConsumerSide(name: "GRDB") { i, seq in
            try await fixture.grdbWrite(pool, index: fixture.observedIndex(i), seq: seq)
        } observe: { consumer in
            grdbConsumer(pool, consumer)
        }

        // The newest seq written, noted by the writer of both kinds of block alike.
        let latest = LockedValue(-1)
        let consumerAlone = SlowConsumerSide(name: alone) { i, seq in
            try await fixture.tetherWrite(store, index: fixture.observedIndex(i), seq: seq)
            latest.withLock { $0 = seq }
        } observe: { consumer in
            let task = Task {
                while !Task.isCancelled {
                    consumer.received { latest.withLock { $0 } }
                    try await Task.sleep(for: .milliseconds(10))
                    consumer.free()
                }
            }
            return {
                task.cancel()
                _ = await task.result
            }
        }
        let chosen = [signalling, snapshots, grdb, held, consumerAlone].filter {
            sides.contains($0.name) && (Fixture.sides?.contains($0.name) ?? true)
        }
        for run in 0..<(Fixture.runs ?? runs) {
            try await rotating(
                run,
                chosen.map { side in
                    { try await side.run(run, blocks: blocks, of: perBlock, seqs: seqs, record: record) }
                })
        }
    }
}
