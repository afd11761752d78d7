import Benchmark
import BenchmarkSupport
import Dispatch
import GRDB
import LiveQueryKit
import TetherConcurrency

/// 2. A fast writer and a slow consumer (10 ms per result, without blocking a thread), each side in its own
/// back-pressure idiom: Tether's `observeLocalWithNextSignal` (the next result once the handler signals) and its
/// `snapshots()` (an async sequence: asking for the next element is the signal), GRDB's
/// `values(in:bufferingPolicy: .bufferingNewest(1))` (an async sequence keeping only the newest value).
///
/// Each side's run writes `count` commits with an observer and as many without, in `blocks` pairs of blocks, the
/// order within a pair alternating (see ``SlowConsumerSide/run(_:blocks:of:seqs:record:)``).
func slowConsumerScenario(count: Int, blocks: Int, documents: Int, runs: Int) {
    let name = "2. \(count / 1_000)k commits, 10 ms consumer, \(documents / 1_000)k documents"
    let sides = ["Tether", "Tether snapshots()", "GRDB"]
    let tetherOnly = [
        "results computed", "quiet catch-ups", "computed ahead of a signal", "results computed after the last commit",
        "of which ahead of a signal", "held high-water",
    ]
    let names =
        sides.flatMap { side in SlowConsumerSide.figures.map { "\(side) \($0)" } }
        + sides.dropLast().flatMap { side in tetherOnly.map { "\(side) \($0)" } }
    let metrics = Dictionary(
        uniqueKeysWithValues: names.map { ($0, BenchmarkMetric.custom($0, useScalingFactor: false)) })
    Benchmark(name, configuration: scenario(names.map { metrics[$0]! })) { benchmark in
        let fixture = Fixture(documentCount: documents)
        let summary = Runs(name)
        let (store, pool) = try await fixture.sides()
        let record = { (metric: String, value: Int) in summary.record(benchmark, metrics[metric]!, value) }
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
                    record(
                        "\(side) results computed after the last commit", resultsComputed(after) - resultsComputed(end))
                    record("\(side) of which ahead of a signal", after.computedAhead - end.computedAhead)
                    record("\(side) results computed", resultsComputed(after) - resultsComputed(before))
                    record("\(side) quiet catch-ups", after.quietCatchUps - before.quietCatchUps)
                    record("\(side) computed ahead of a signal", after.computedAhead - before.computedAhead)
                    // A snapshot sequence holds at most one result by construction: it has no statistics to ask.
                    let held = (observation as? LiveQuery)?.deliveryStatistics.heldHighWater ?? 1
                    record("\(side) held high-water", held)
                    observation.cancel()
                }
            }
        }
        let signalling = tether("Tether") { consumer in
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
        // The same consumer as GRDB's below: a task that sleeps 10 ms per element.
        let snapshots = tether("Tether snapshots()") { consumer in
            let snapshots = try fixture.tetherQuery(store).snapshots()
            Task { try await consumeSlowly(snapshots, consumer) { newestSeq($0.documents) } }
            return snapshots
        }
        let grdb = SlowConsumerSide(name: "GRDB") { i, seq in
            try await fixture.grdbWrite(pool, index: fixture.observedIndex(i), seq: seq)
        } observe: { consumer in
            let values = Fixture.grdbObservation().values(in: pool, bufferingPolicy: .bufferingNewest(1))
            let task = Task { try await consumeSlowly(values, consumer) { newestSeq($0) } }
            return {
                task.cancel()
                // The next block starts once the consumer's task has ended, so that it no longer fetches.
                _ = await task.result
            }
        }

        for run in 0..<runs {
            try await rotating(
                run,
                [signalling, snapshots, grdb].map { side in
                    { try await side.run(run, blocks: blocks, of: perBlock, seqs: seqs, record: record) }
                })
        }
        summary.printSummary()
    }
}

/// One side of scenario 2: how it writes a commit (the document chosen by the commit's index in its block, and the
/// seq it writes), and how it starts observing for a consumer — returning what ends the observation once a block
/// is measured.
struct SlowConsumerSide {
    let name: String
    let write: @Sendable (Int, Int) async throws -> Void
    let observe: (Consumer) async throws -> () async throws -> Void

    init(
        name: String, write: @escaping @Sendable (Int, Int) async throws -> Void,
        observe: @escaping (Consumer) async throws -> () async throws -> Void
    ) {
        self.name = name
        self.write = write
        self.observe = observe
    }

    /// What each side records: the first five per run, the others per observed block. CPU overhead is the process's
    /// CPU time over the observed blocks against the unobserved blocks' (every thread: the writer's, the engine's,
    /// the consumer's); the wake-ups are the voluntary context switches the observed blocks added, per delivery.
    static let figures = [
        "writer (ms)", "writer, unobserved (ms)", "writer overhead (%)", "CPU overhead (%)",
        "thread wake-ups per delivery", "deliveries", "last commit → final (ms)", "ready → final (µs)",
        "peak RSS delta (KB)",
    ]

    /// One run: `blocks` pairs of blocks of `perBlock` commits, one block with nothing observed and one with an
    /// observer, the pair's order alternating from block to block and from run to run. The writer's overhead is the
    /// observed blocks' total time against the unobserved blocks': the machine's and the file's drift during a run
    /// cancels out, where one long stretch of each let it move the figure as much as the overhead itself. Each
    /// observed block ends with a final state of its own, so each gives a sample of the time to it.
    func run(
        _ run: Int, blocks: Int, of perBlock: Int, seqs: SeqCounter, record: (String, Int) -> Void
    ) async throws {
        var (observed, unobserved) = (0, 0)
        var (observedUsage, unobservedUsage) = (ProcessUsage.zero, ProcessUsage.zero)
        var deliveries = 0
        let unobservedBlock = {
            let before = ProcessUsage.now()
            unobserved += try await timedWrites(count: perBlock, seqBase: seqs.take(perBlock), write: write)
            unobservedUsage += ProcessUsage.now() - before
        }
        for block in 0..<blocks {
            let unobservedFirst = (run + block) % 2 == 0
            if unobservedFirst { try await unobservedBlock() }
            let consumer = Consumer()
            let before = ProcessUsage.now()
            let end = try await observe(consumer)
            try await waitUntil { consumer.deliveries > 0 }
            let figures = try await consumer.measure(count: perBlock, seqBase: seqs.take(perBlock), write: write)
            try await end()
            observedUsage += ProcessUsage.now() - before
            deliveries += figures.deliveries
            observed += figures.writer
            record("\(name) deliveries", figures.deliveries)
            record("\(name) last commit → final (ms)", figures.toFinal)
            record("\(name) ready → final (µs)", figures.readyToFinal)
            record("\(name) peak RSS delta (KB)", figures.peakResidentDelta)
            if !unobservedFirst { try await unobservedBlock() }
        }
        record("\(name) writer (ms)", observed)
        record("\(name) writer, unobserved (ms)", unobserved)
        record("\(name) writer overhead (%)", (observed - unobserved) * 100 / unobserved)
        let cpu = (observedUsage.cpuMicroseconds, unobservedUsage.cpuMicroseconds)
        record("\(name) CPU overhead (%)", (cpu.0 - cpu.1) * 100 / max(cpu.1, 1))
        record(
            "\(name) thread wake-ups per delivery",
            (observedUsage.voluntarySwitches - unobservedUsage.voluntarySwitches) / max(deliveries, 1))
    }
}

/// The seq numbers commits write, counting up across sides and blocks: a result's newest seq tells which commit it
/// reflects.
final class SeqCounter: Sendable {
    private let next = LockedValue(0)

    /// `count` numbers, from the one returned.
    func take(_ count: Int) -> Int {
        next.withLock { next in
            defer { next += count }
            return next
        }
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

/// The time (ms) `count` commits take, one after the other, with resident memory sampled as in an observed block
/// (``Consumer/measure(count:seqBase:write:)``), so that the sampler's own cost is on both sides of the overhead.
func timedWrites(count: Int, seqBase: Int, write: (Int, Int) async throws -> Void) async throws -> Int {
    let sampler = ResidentSampler()
    defer { _ = sampler.stop() }
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

    /// Writes `count` commits as fast as they go and waits for the last one's result.
    func measure(count: Int, seqBase: Int, write: (Int, Int) async throws -> Void) async throws -> Figures {
        let before = ResidentSampler.resident()
        let sampler = ResidentSampler()
        let deliveriesBefore = deliveries
        let start = nowMicroseconds()
        for i in 0..<count { try await write(i, seqBase + i) }
        let end = nowMicroseconds()
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
