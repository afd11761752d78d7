import DeliveryKit
import Dispatch
import Foundation
import LiveQueryKit
import PipelineKit
import TetherClock
import TetherConcurrency
import TetherJSON
import TransportKit

/// Scenario 4 — Ditto's back pressure: a fast writer updates the `items` collection while a slow consumer observes
/// `store_id == 'abc123'` (a third of the documents, a few hundred KB per result), once per delivery policy and once
/// with the naive pattern (every result dispatched to the consumer's queue). Results alive are counted by their
/// `deinit`, resident memory sampled beside them.
///
/// Nothing is left to luck: a calibration run first measures how fast this machine delivers results, then the
/// consumer is made `consumer_slowdown` times slower than that and the writer makes as many commits as it takes to
/// offer `arrivals` results. The naive pattern's consumer also stays `consumer_slowdown` times slower than the results
/// as they arrive in its own run, should the machine have slowed since the calibration (other work on it). The naive
/// pattern must then pile results up — and the sample fails if it does not.
struct BackPressureScenario {
    /// What the calibration run measured, and what the runs use.
    struct Calibration: Sendable {
        var commits = 0
        var results = 0
        var milliseconds = 0.0
        /// The consumer's time per result.
        var consumerDelay = Duration.zero
        /// Each run's commits.
        var writes = 0

        var resultIntervalMilliseconds: Double { milliseconds / Double(max(results, 1)) }
    }

    struct Run: Sendable {
        /// "writer alone", "next-signal", "deliver-on-queue", "immediate" or "naive".
        var policy: String
        var writes = 0
        var writerMilliseconds = 0.0
        /// Results the observer's handler received.
        var offered = 0
        /// Results the consumer rendered.
        var deliveries = 0
        /// Results replaced by a newer one before delivery (the policies), or 0 (naive: nothing is ever dropped).
        var coalesced = 0
        /// The most results the engine held for this observer at once (the policies; 0 for naive).
        var engineHeld = 0
        /// The most of the consumer's results alive at once, and their bytes (counted by `deinit`).
        var mostResults = 0
        var mostResultBytes = 0
        var baselineMegabytes = 0.0
        var peakMegabytes = 0.0
        /// From the last write to the consumer having processed the final state.
        var finalStateMilliseconds = 0.0
        var finalStateCorrect = true
        var samples: [MemorySampler.Sample] = []

        var peakDeltaMegabytes: Double { max(0, peakMegabytes - baselineMegabytes) }
        var mostResultMegabytes: Double { Double(mostResultBytes) / 1_048_576 }
    }

    struct Outcome: Sendable {
        var calibration = Calibration()
        /// The writer with no observer: the store's and the allocator's own growth.
        var writerAlone = Run(policy: "writer alone")
        /// The policies, then the naive pattern.
        var runs: [Run] = []
        /// Whether the naive pattern piled up by a clear factor over every policy.
        var contrastHeld = false

        var naive: Run? { runs.first { $0.policy == "naive" } }
        var policies: [Run] { runs.filter { $0.policy != "naive" } }
    }

    /// The naive pattern must hold at least this many times more results, and bytes, than any policy.
    static let contrastFactor = 10

    let pipeline: AssembledPipeline
    let settings: SampleSettings
    let console: Console
    let tally = ResultTally()

    /// The policies, then the naive pattern (last, so its memory does not flatter the others).
    static let policies: [ObservationDelivery.Mode] = [.nextSignal, .deliverOnQueue, .immediate]

    func run() async throws -> Outcome {
        let configured = try pipeline.liveQuery(named: settings.liveQuery)
        var outcome = Outcome()
        outcome.calibration = try await calibrate(configured)
        let calibration = outcome.calibration
        console.line(
            String(
                format:
                    "calibration: %d commits gave %d results in %.0f ms (one every %.1f ms); the consumer takes %.1f ms per result, the writer %d commits per run",
                calibration.commits, calibration.results, calibration.milliseconds,
                calibration.resultIntervalMilliseconds,
                calibration.consumerDelay.milliseconds, calibration.writes))
        outcome.writerAlone = try await measure("writer alone", writes: calibration.writes, consumer: nil) { _ in nil }
        for mode in Self.policies {
            let query = ConfiguredLiveQuery(
                name: configured.name, query: configured.query, delivery: ObservationDelivery(mode))
            outcome.runs.append(
                try await measure(
                    mode.type, writes: calibration.writes,
                    consumer: Consumer(delay: calibration.consumerDelay, tally: tally)
                ) {
                    consumer in try query.observe(handler: consumer.policyHandler(mode))
                })
        }
        outcome.runs.append(
            try await measure(
                "naive", writes: calibration.writes,
                consumer: Consumer(
                    delay: calibration.consumerDelay, tally: tally, slowdown: settings.consumerSlowdown)
            ) {
                consumer in try configured.query.observeLocal(handler: consumer.naiveHandler())
            })
        outcome.contrastHeld = checkContrast(outcome)
        return outcome
    }

    /// The slow consumer: it turns each result into a view model, then takes `delay` to "render" it.
    final class Consumer: Sendable {
        let delay: Duration
        /// For the naive pattern: the consumer takes this many times the mean interval between the results offered
        /// so far, when that is longer than `delay`.
        let slowdown: Double?
        let tally: ResultTally
        /// The consumer's own queue, shared by every run (so none of them pays for starting its thread).
        static let worker = DispatchQueue(label: "tether.sample.consumer")
        /// Results offered, and — while ``slowdown`` is given — when the first and the last were.
        let offers = LockedValue<(count: Int, first: ContinuousClock.Instant?, last: ContinuousClock.Instant?)>(
            (0, nil, nil))
        let processed = LockedValue<(count: Int, last: [String: JSONValue])>((0, [:]))

        init(delay: Duration, tally: ResultTally, slowdown: Double? = nil) {
            self.delay = delay
            self.tally = tally
            self.slowdown = slowdown
        }

        /// A result was offered: counted, and timed when the consumer keeps pace with the results' arrival.
        func offer() {
            let now = slowdown == nil ? nil : ContinuousClock.now
            offers.withLock { offers in
                offers.count += 1
                if let now { (offers.first, offers.last) = (offers.first ?? now, now) }
            }
        }

        /// Results offered so far.
        var offered: Int { offers.withLock { $0.count } }

        /// How long the consumer takes over a result now: `delay`, or ``slowdown`` times the mean interval between
        /// the results offered so far when that is longer.
        var currentDelay: Duration {
            let (count, first, last) = offers.withLock { $0 }
            guard let slowdown, let first, let last, count >= 2 else { return delay }
            return max(delay, (last - first) / (count - 1) * slowdown)
        }

        func render(_ model: ItemsViewModel) {
            let delay = currentDelay
            if delay > .zero { Thread.sleep(forTimeInterval: delay.timeInterval) }
            processed.withLock {
                $0.count += 1
                $0.last = model.quantities
            }
        }

        /// Under a policy: render in the handler; under next-signal, on the worker, signalling when done.
        func policyHandler(_ mode: ObservationDelivery.Mode)
            -> @Sendable ([Document], LiveQueryEvent, SignalNext) -> Void
        {
            { documents, _, signalNext in
                self.offer()
                let model = ItemsViewModel(documents, tally: self.tally)
                if mode == .nextSignal {
                    Self.worker.async {
                        self.render(model)
                        signalNext()
                    }
                } else {
                    self.render(model)
                }
            }
        }

        /// The naive pattern: every result is turned into a view model and queued for the consumer at once.
        func naiveHandler() -> @Sendable ([Document], LiveQueryEvent) -> Void {
            { documents, _ in
                self.offer()
                let model = ItemsViewModel(documents, tally: self.tally)
                Self.worker.async { self.render(model) }
            }
        }
    }

    /// The naive pattern with a consumer that keeps up, writing for about a second: how many results this machine
    /// offers per commit and per second. It also warms SQLite's page cache, the engine and the allocator.
    private func calibrate(_ configured: ConfiguredLiveQuery) async throws -> Calibration {
        let items = pipeline.store.collection("items")
        try await reset(items)
        let consumer = Consumer(delay: .zero, tally: tally)
        let liveQuery = try configured.query.observeLocal(handler: consumer.naiveHandler())
        let clock = ContinuousClock()
        let start = clock.now
        var commits = 0
        while clock.now - start < .seconds(1) || commits < 50 {
            try Task.checkCancellation()
            _ = try await items.upsert(item(commits % settings.documents, quantity: 1000 + commits))
            commits += 1
        }
        let elapsed = clock.now - start
        try await waitForFinalState(consumer, deadline: clock.now + .seconds(60))
        await liveQuery.stop()
        var calibration = Calibration(
            commits: commits, results: max(consumer.offered, 1), milliseconds: elapsed.milliseconds)
        let interval = elapsed / calibration.results
        calibration.consumerDelay = interval * settings.consumerSlowdown
        let commitsPerResult = Double(commits) / Double(calibration.results)
        calibration.writes = max(Int((Double(settings.arrivals) * commitsPerResult).rounded(.up)), settings.arrivals)
        return calibration
    }

    private func measure(
        _ policy: String, writes: Int, consumer: Consumer?, observe: (Consumer) throws -> LiveQuery?
    ) async throws -> Run {
        var run = Run(policy: policy, writes: writes)
        let items = pipeline.store.collection("items")
        try await reset(items)
        tally.reset()
        run.baselineMegabytes = Double(MemorySampler.residentBytes()) / 1_048_576
        let sampler = MemorySampler(interval: settings.sampleInterval, tally: tally)
        let liveQuery = try consumer.flatMap(observe)
        defer {
            liveQuery?.stop()
            sampler.stop()
        }

        let clock = ContinuousClock()
        let start = clock.now
        for write in 0..<run.writes {
            try Task.checkCancellation()
            let index = (write * 7) % settings.documents
            _ = try await items.upsert(item(index, quantity: 1000 + write))
            if write % 50 == 0 { console.progress("\(policy): writing", done: write, total: run.writes) }
        }
        let writerEnd = clock.now
        console.endProgress()
        run.writerMilliseconds = (writerEnd - start).milliseconds

        if let consumer, let liveQuery {
            let finalState = try await waitForFinalState(consumer, deadline: clock.now + .seconds(300))
            run.finalStateMilliseconds = (clock.now - writerEnd).milliseconds
            run.finalStateCorrect = finalState
            // Let the naive queue drain, so the next run starts clean.
            while tally.now.alive > 0, clock.now < writerEnd + .seconds(300), !Task.isCancelled {
                try await Task.sleep(for: .milliseconds(5))
            }
            let statistics = liveQuery.deliveryStatistics
            await liveQuery.stop()
            run.offered = consumer.offered
            run.deliveries = consumer.processed.withLock { $0.count }
            if policy != "naive" {
                run.coalesced = statistics.coalesced
                run.engineHeld = statistics.heldHighWater
            }
        }
        run.samples = sampler.stop()
        run.peakMegabytes = run.samples.map(\.megabytes).max() ?? run.baselineMegabytes
        let counts = tally.now
        (run.mostResults, run.mostResultBytes) = (counts.mostAlive, counts.mostBytes)
        report(run)
        return run
    }

    /// Whether the consumer's last result is the collection's final state; waits for it until `deadline`.
    @discardableResult
    private func waitForFinalState(_ consumer: Consumer, deadline: ContinuousClock.Instant) async throws -> Bool {
        let expected = Dictionary(
            uniqueKeysWithValues: try await pipeline.liveQuery(named: settings.liveQuery).query.exec()
                .map { ($0.id, $0.value["quantity"] ?? .null) })
        while consumer.processed.withLock({ $0.last }) != expected, ContinuousClock.now < deadline, !Task.isCancelled {
            try await Task.sleep(for: .milliseconds(2))
        }
        return consumer.processed.withLock { $0.last } == expected
    }

    private func report(_ run: Run) {
        guard run.policy != "writer alone" else {
            console.line(
                String(
                    format:
                        "writer alone: %d writes in %.0f ms, no observer; resident memory +%.1f MB (the store and the allocator)",
                    run.writes, run.writerMilliseconds, run.peakDeltaMegabytes))
            return
        }
        console.line(
            String(
                format:
                    "%@: %d writes in %.0f ms; %d results offered, %d processed, %d coalesced; at most %d results alive (%.1f MB); resident +%.1f MB; final state after %.0f ms",
                run.policy, run.writes, run.writerMilliseconds, run.offered, run.deliveries, run.coalesced,
                run.mostResults,
                run.mostResultMegabytes, run.peakDeltaMegabytes, run.finalStateMilliseconds))
        console.check(run.finalStateCorrect, "\(run.policy): the consumer ended on the final state")
        if run.policy != "naive" {
            console.check(
                run.engineHeld <= 2,
                "\(run.policy): at most 2 results held, however fast the writer (\(run.engineHeld))")
        }
    }

    /// A demonstration that shows nothing is a failed check: the naive pattern must hold many times the results,
    /// and the bytes, that any policy held.
    private func checkContrast(_ outcome: Outcome) -> Bool {
        guard let naive = outcome.naive else { return false }
        let mostResults = max(outcome.policies.map(\.mostResults).max() ?? 0, 1)
        let mostBytes = max(outcome.policies.map(\.mostResultBytes).max() ?? 0, 1)
        let held =
            naive.mostResults >= Self.contrastFactor * mostResults
            && naive.mostResultBytes >= Self.contrastFactor * mostBytes
        return console.check(
            held,
            String(
                format:
                    "the naive pattern piled up: %d results (%.1f MB) alive at once, against at most %d (%.2f MB) under the policies — at least %d times as many, in count and in bytes",
                naive.mostResults, naive.mostResultMegabytes, mostResults, Double(mostBytes) / 1_048_576,
                Self.contrastFactor))
    }

    /// Empties the collection and writes its documents afresh, in one transaction.
    private func reset(_ items: StoreCollection) async throws {
        let count = settings.documents
        try await pipeline.store.write { transaction in
            let collection = transaction.collection("items")
            for document in try collection.find("store_id != ''") { _ = try collection.remove(id: document.id) }
            for index in 0..<count { _ = try collection.upsert(self.item(index, quantity: index % 40)) }
        }
    }

    /// An item: a few fields and `notes` of `document_size` bytes, as a real list's rows carry.
    func item(_ index: Int, quantity: Int) -> JSONValue {
        let store = Inventory.stores[index % Inventory.stores.count]
        let product = Inventory.products[index % Inventory.products.count]
        return [
            "_id": .string("item-\(index)"), "store_id": .string(store), "name": .string("\(product) \(index)"),
            "quantity": .number(Double(quantity)), "price": .number(Double(index % 97) / 4),
            "notes": .string(Self.notes(for: product, bytes: settings.documentSize)),
        ]
    }

    static func notes(for product: String, bytes: Int) -> String {
        let sentence = "Fresh \(product), stored cool and dry, restocked weekly. "
        return String(String(repeating: sentence, count: bytes / sentence.utf8.count + 1).prefix(bytes))
    }
}
