import Benchmark
import Dispatch
import GRDB
import LiveQueryKit
import TetherConcurrency

/// 2. A fast writer and a slow consumer (10 ms per result, without blocking a thread), each side in its own
/// back-pressure idiom: Tether's `observeLocalWithNextSignal` (the next result once the handler signals), GRDB's
/// `values(in:bufferingPolicy: .bufferingNewest(1))` (an async sequence keeping only the newest value). Each run
/// also times the same commits with nothing observed: the writer's overhead.
func slowConsumerScenario(count: Int, documents: Int, runs: Int) {
    let name = "2. \(count / 1_000)k commits, 10 ms consumer, \(documents / 1_000)k documents"
    let names = [
        "Tether deliveries", "Tether held high-water", "Tether last commit → final (ms)", "Tether writer (ms)",
        "Tether writer, unobserved (ms)", "Tether writer overhead (%)", "Tether peak RSS delta (KB)",
        "GRDB deliveries", "GRDB last commit → final (ms)", "GRDB writer (ms)", "GRDB writer, unobserved (ms)",
        "GRDB writer overhead (%)", "GRDB peak RSS delta (KB)",
    ]
    let metrics = Dictionary(
        uniqueKeysWithValues: names.map { ($0, BenchmarkMetric.custom($0, useScalingFactor: false)) })
    Benchmark(name, configuration: scenario(names.map { metrics[$0]! })) { benchmark in
        let fixture = Fixture(documentCount: documents)
        let summary = Runs(name)
        let (store, pool) = try await fixture.sides()
        let record = { (metric: String, value: Int) in summary.record(benchmark, metrics[metric]!, value) }

        for run in 0..<runs {
            let seqBase = run * 2 * count
            let tether = {
                let unobserved = try await timedWrites(count: count, seqBase: seqBase) { i, seq in
                    try await fixture.tetherWrite(store, index: fixture.observedIndex(i), seq: seq)
                }
                let consumer = Consumer()
                let handlerQueue = DispatchQueue(label: "tether")
                let liveQuery = try fixture.tetherQuery(store).observeLocalWithNextSignal(deliverOn: handlerQueue) {
                    documents, _, signalNext in
                    consumer.received(newestSeq(documents))
                    handlerQueue.asyncAfter(deadline: .now() + .milliseconds(10)) { signalNext() }
                }
                try await waitUntil { consumer.deliveries > 0 }
                let figures = try await consumer.measure(count: count, seqBase: seqBase + count) { i, seq in
                    try await fixture.tetherWrite(store, index: fixture.observedIndex(i), seq: seq)
                }
                record("Tether deliveries", figures.deliveries)
                record("Tether held high-water", liveQuery.deliveryStatistics.heldHighWater)
                record("Tether last commit → final (ms)", figures.toFinal)
                record("Tether writer (ms)", figures.writer)
                record("Tether writer, unobserved (ms)", unobserved)
                record("Tether writer overhead (%)", (figures.writer - unobserved) * 100 / unobserved)
                record("Tether peak RSS delta (KB)", figures.peakResidentDelta)
                await liveQuery.stop()
            }
            let grdb = {
                let unobserved = try await timedWrites(count: count, seqBase: seqBase) { i, seq in
                    try await fixture.grdbWrite(pool, index: fixture.observedIndex(i), seq: seq)
                }
                let consumer = Consumer()
                let values = Fixture.grdbObservation().values(in: pool, bufferingPolicy: .bufferingNewest(1))
                let task = Task {
                    for try await documents in values {
                        consumer.received(newestSeq(documents))
                        try await Task.sleep(for: .milliseconds(10))
                    }
                }
                try await waitUntil { consumer.deliveries > 0 }
                let figures = try await consumer.measure(count: count, seqBase: seqBase + count) { i, seq in
                    try await fixture.grdbWrite(pool, index: fixture.observedIndex(i), seq: seq)
                }
                record("GRDB deliveries", figures.deliveries)
                record("GRDB last commit → final (ms)", figures.toFinal)
                record("GRDB writer (ms)", figures.writer)
                record("GRDB writer, unobserved (ms)", unobserved)
                record("GRDB writer overhead (%)", (figures.writer - unobserved) * 100 / unobserved)
                record("GRDB peak RSS delta (KB)", figures.peakResidentDelta)
                task.cancel()
            }
            try await alternating(run, tether, grdb)
        }
        summary.printSummary()
    }
}

/// The time (ms) `count` commits take, one after the other.
func timedWrites(count: Int, seqBase: Int, write: (Int, Int) async throws -> Void) async throws -> Int {
    let start = nowMicroseconds()
    for i in 0..<count { try await write(i, seqBase + i) }
    return (nowMicroseconds() - start) / 1_000
}

/// A slow consumer's side of the scenario: what it received, and when the newest result reached it.
final class Consumer: Sendable {
    private let state = LockedValue((deliveries: 0, newest: -1, at: 0))

    func received(_ seq: Int) {
        let now = nowMicroseconds()
        state.withLock { state in
            state.deliveries += 1
            if seq > state.newest { (state.newest, state.at) = (seq, now) }
        }
    }

    var deliveries: Int { state.withLock { $0.deliveries } }

    struct Figures {
        var deliveries: Int
        /// From the end of the last commit to the delivery of its result, ms; -1 if it never came.
        var toFinal: Int
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
        let at = state.withLock { $0.at }
        return Figures(
            deliveries: deliveries - deliveriesBefore, toFinal: arrived ? (at - end) / 1_000 : -1,
            writer: (end - start) / 1_000, peakResidentDelta: max(0, peak - before) / 1_024)
    }
}
