import Benchmark
import BenchmarkSupport
import Dispatch
import GRDB
import LiveQueryKit
import TetherConcurrency

/// 2. A fast writer and a slow consumer (10 ms per result, without blocking a thread), each side in its own
/// back-pressure idiom: Tether's `observeLocalWithNextSignal` (the next result once the handler signals) and its
/// `snapshots()` (an async sequence: asking for the next element is the signal), GRDB's
/// `values(in:bufferingPolicy: .bufferingNewest(1))` (an async sequence keeping only the newest value). Each run
/// also times the same commits with nothing observed, before and after the observed ones: the writer's overhead is
/// measured against the mean of the two, so that a drift of the machine or the file during the run cancels out.
func slowConsumerScenario(count: Int, documents: Int, runs: Int) {
    let name = "2. \(count / 1_000)k commits, 10 ms consumer, \(documents / 1_000)k documents"
    let sides = ["Tether", "Tether snapshots()", "GRDB"]
    let figures = [
        "deliveries", "last commit → final (ms)", "ready → final (µs)", "writer (ms)", "writer, unobserved (ms)",
        "writer overhead (%)", "peak RSS delta (KB)",
    ]
    let tetherOnly = [
        "results computed", "quiet catch-ups", "computed ahead of a signal", "results computed after the last commit",
        "of which ahead of a signal",
    ]
    let names =
        sides.flatMap { side in figures.map { "\(side) \($0)" } }
        + sides.dropLast().flatMap { side in tetherOnly.map { "\(side) \($0)" } } + ["Tether held high-water"]
    let metrics = Dictionary(
        uniqueKeysWithValues: names.map { ($0, BenchmarkMetric.custom($0, useScalingFactor: false)) })
    Benchmark(name, configuration: scenario(names.map { metrics[$0]! })) { benchmark in
        let fixture = Fixture(documentCount: documents)
        let summary = Runs(name)
        let (store, pool) = try await fixture.sides()
        let record = { (metric: String, value: Int) in summary.record(benchmark, metrics[metric]!, value) }
        let recordFigures = { (side: String, figures: Consumer.Figures, unobserved: Int) in
            record("\(side) deliveries", figures.deliveries)
            record("\(side) last commit → final (ms)", figures.toFinal)
            record("\(side) ready → final (µs)", figures.readyToFinal)
            record("\(side) writer (ms)", figures.writer)
            record("\(side) writer, unobserved (ms)", unobserved)
            record("\(side) writer overhead (%)", (figures.writer - unobserved) * 100 / unobserved)
            record("\(side) peak RSS delta (KB)", figures.peakResidentDelta)
        }

        for run in 0..<runs {
            /// Each Tether side writes seq numbers of its own: the result's newest seq tells its final state.
            let tether = { (side: String, seqBase: Int, observe: (Consumer) throws -> any ObservationCancellable) in
                let unobserved = { (base: Int) in
                    try await timedWrites(count: count, seqBase: base) { i, seq in
                        try await fixture.tetherWrite(store, index: fixture.observedIndex(i), seq: seq)
                    }
                }
                let unobservedBefore = try await unobserved(seqBase)
                let consumer = Consumer()
                let observation = try observe(consumer)
                try await waitUntil { consumer.deliveries > 0 }
                let before = store.statistics
                let atEnd = LockedValue<LiveQueryStatistics?>(nil)
                let figures = try await consumer.measure(
                    count: count, seqBase: seqBase + count, atEnd: { atEnd.withLock { $0 = store.statistics } }
                ) { i, seq in
                    try await fixture.tetherWrite(store, index: fixture.observedIndex(i), seq: seq)
                }
                let after = store.statistics
                // Whether the final result was computed ahead of the consumer's signal, or when it signalled.
                let end = atEnd.withLock { $0 } ?? after
                record("\(side) results computed after the last commit", resultsComputed(after) - resultsComputed(end))
                record("\(side) of which ahead of a signal", after.computedAhead - end.computedAhead)
                record("\(side) results computed", resultsComputed(after) - resultsComputed(before))
                record("\(side) quiet catch-ups", after.quietCatchUps - before.quietCatchUps)
                record("\(side) computed ahead of a signal", after.computedAhead - before.computedAhead)
                // A snapshot sequence holds at most one result by construction, and has no statistics to ask.
                if let liveQuery = observation as? LiveQuery {
                    record("\(side) held high-water", liveQuery.deliveryStatistics.heldHighWater)
                }
                observation.cancel()
                let unobservedAfter = try await unobserved(seqBase + 2 * count)
                recordFigures(side, figures, (unobservedBefore + unobservedAfter) / 2)
            }
            let signalling = {
                try await tether("Tether", run * 6 * count) { consumer in
                    let handlerQueue = DispatchQueue(label: "tether")
                    return try fixture.tetherQuery(store).observeLocalWithNextSignal(deliverOn: handlerQueue) {
                        documents, _, signalNext in
                        consumer.received(newestSeq(documents))
                        handlerQueue.asyncAfter(deadline: .now() + .milliseconds(10)) {
                            consumer.free()
                            signalNext()
                        }
                    }
                }
            }
            // The same consumer as GRDB's below: a task that sleeps 10 ms per element. A snapshot sequence holds at
            // most one result, the latest, by construction.
            let snapshots = {
                try await tether("Tether snapshots()", run * 6 * count + 3 * count) { consumer in
                    let snapshots = try fixture.tetherQuery(store).snapshots()
                    Task { try await consumeSlowly(snapshots, consumer) { newestSeq($0.documents) } }
                    return snapshots
                }
            }
            let grdb = {
                let seqBase = run * 3 * count
                let unobserved = { (base: Int) in
                    try await timedWrites(count: count, seqBase: base) { i, seq in
                        try await fixture.grdbWrite(pool, index: fixture.observedIndex(i), seq: seq)
                    }
                }
                let unobservedBefore = try await unobserved(seqBase)
                let consumer = Consumer()
                let values = Fixture.grdbObservation().values(in: pool, bufferingPolicy: .bufferingNewest(1))
                let task = Task { try await consumeSlowly(values, consumer) { newestSeq($0) } }
                try await waitUntil { consumer.deliveries > 0 }
                let figures = try await consumer.measure(count: count, seqBase: seqBase + count) { i, seq in
                    try await fixture.grdbWrite(pool, index: fixture.observedIndex(i), seq: seq)
                }
                task.cancel()
                // Unobserved once the consumer's task has ended, so that it no longer fetches.
                _ = await task.result
                let unobservedAfter = try await unobserved(seqBase + 2 * count)
                recordFigures("GRDB", figures, (unobservedBefore + unobservedAfter) / 2)
            }
            try await rotating(run, [signalling, snapshots, grdb])
        }
        summary.printSummary()
    }
}

/// The slow consumer of an async sequence, the same on both sides: takes an element, notes its newest seq, lets go of
/// it, works 10 ms (without blocking a thread), then asks for the next. Letting go before the work puts freeing the
/// element in the consumer's own time on both sides alike: left to the optimizer, a `for try await` loop freed GRDB's
/// arrays before its sleep and Tether's snapshots after it, on the measured path (16–27 µs for 100 documents).
func consumeSlowly<Elements: AsyncSequence>(
    _ elements: Elements, _ consumer: Consumer, newest: (Elements.Element) -> Int
) async throws {
    var iterator = elements.makeAsyncIterator()
    while let element = try await iterator.next() {
        consumer.received(newest(element))
        _ = consume element  // its lifetime ends here, whatever the optimizer would have chosen
        try await Task.sleep(for: .milliseconds(10))
        consumer.free()
    }
}

/// The time (ms) `count` commits take, one after the other.
func timedWrites(count: Int, seqBase: Int, write: (Int, Int) async throws -> Void) async throws -> Int {
    let start = nowMicroseconds()
    for i in 0..<count { try await write(i, seqBase + i) }
    return (nowMicroseconds() - start) / 1_000
}

/// A slow consumer's side of the scenario: what it received, when the newest result reached it, and when the
/// consumer was last free to take a result before that.
final class Consumer: Sendable {
    private let state = LockedValue((deliveries: 0, newest: -1, at: 0, lastFree: 0, freeBeforeNewest: 0))

    func received(_ seq: Int) {
        let now = nowMicroseconds()
        state.withLock { state in
            state.deliveries += 1
            if seq > state.newest { (state.newest, state.at, state.freeBeforeNewest) = (seq, now, state.lastFree) }
        }
    }

    /// The consumer has finished with its result and asks for the next (it signals, or iterates again).
    func free() {
        let now = nowMicroseconds()
        state.withLock { $0.lastFree = now }
    }

    var deliveries: Int { state.withLock { $0.deliveries } }

    struct Figures {
        var deliveries: Int
        /// From the end of the last commit to the delivery of its result, ms; -1 if it never came. Mostly the wait
        /// for the consumer to be free, anywhere in its 10 ms.
        var toFinal: Int
        /// From the moment the last commit had returned and the consumer was free, to the delivery of the final
        /// result, µs: the framework's own share of ``toFinal``, without the consumer's phase.
        var readyToFinal: Int
        var writer: Int
        var peakResidentDelta: Int
    }

    /// Writes `count` commits as fast as they go and waits for the last one's result; `atEnd` runs as soon as the
    /// last commit has returned.
    func measure(
        count: Int, seqBase: Int, atEnd: () -> Void = {}, write: (Int, Int) async throws -> Void
    ) async throws -> Figures {
        let before = ResidentSampler.resident()
        let sampler = ResidentSampler()
        let deliveriesBefore = deliveries
        let start = nowMicroseconds()
        for i in 0..<count { try await write(i, seqBase + i) }
        let end = nowMicroseconds()
        atEnd()
        let last = seqBase + count - 1
        let arrived = try await waitUntil { self.state.withLock { $0.newest } >= last }
        let peak = sampler.stop()
        let (at, freeBefore) = state.withLock { ($0.at, $0.freeBeforeNewest) }
        return Figures(
            deliveries: deliveries - deliveriesBefore, toFinal: arrived ? (at - end) / 1_000 : -1,
            readyToFinal: arrived ? at - max(end, freeBefore) : -1,
            writer: (end - start) / 1_000, peakResidentDelta: max(0, peak - before) / 1_024)
    }
}
