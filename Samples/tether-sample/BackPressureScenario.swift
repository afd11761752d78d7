import DeliveryKit
import Dispatch
import Foundation
import LiveQueryKit
import PipelineKit
import TetherConcurrency
import TetherJSON
import TransportKit

/// Scenario 3 — Ditto's back pressure: a fast writer updates the `items` collection while a slow consumer
/// observes `store_id == 'abc123'`, once per delivery policy and once with the naive pattern (every change
/// dispatched to the consumer's queue). Memory is sampled throughout.
struct BackPressureScenario {
    struct Run: Sendable {
        /// "next-signal", "deliver-on-queue", "immediate" or "naive".
        var policy: String
        var writes = 0
        var writerMilliseconds = 0.0
        /// Results the consumer processed.
        var deliveries = 0
        /// Results replaced by a newer one before delivery (the policies), or 0 (naive: nothing is ever dropped).
        var coalesced = 0
        /// The most results waiting at once: held snapshots (policies) or queued closures (naive).
        var maxWaiting = 0
        var baselineMegabytes = 0.0
        var peakMegabytes = 0.0
        /// From the last write to the consumer having processed the final state.
        var finalStateMilliseconds = 0.0
        var finalStateCorrect = false
        var samples: [MemorySampler.Sample] = []

        var peakDeltaMegabytes: Double { max(0, peakMegabytes - baselineMegabytes) }
    }

    let pipeline: AssembledPipeline
    let settings: SampleSettings
    let console: Console

    /// The policies, then the naive pattern (last, so its memory does not flatter the others).
    static let policies: [ObservationDelivery.Mode] = [.nextSignal, .deliverOnQueue, .immediate]

    func run() async throws -> [Run] {
        let configured = try pipeline.liveQuery(named: settings.liveQuery)
        try await warmUp(configured)
        var runs: [Run] = []
        for mode in Self.policies {
            let query = ConfiguredLiveQuery(name: configured.name, query: configured.query, delivery: ObservationDelivery(mode))
            runs.append(try await measure(mode.rawValue) { consumer in try query.observe(handler: consumer.policyHandler(mode)) })
        }
        runs.append(try await measure("naive") { consumer in
            try configured.query.observeLocal(handler: consumer.naiveHandler())
        })
        return runs
    }

    /// The slow consumer: it turns each result into a view model (the documents' JSON), then takes
    /// `consumerDelay` to "render" it.
    final class Consumer: Sendable {
        let delay: Duration
        /// The consumer's own queue, shared by every run (so none of them pays for starting its thread).
        static let worker = DispatchQueue(label: "tether.sample.consumer")
        let processed = LockedValue<(count: Int, last: [String: JSONValue])>((0, [:]))
        let waiting = LockedValue<(now: Int, most: Int)>((0, 0))

        init(delay: Duration) {
            self.delay = delay
        }

        func render(_ viewModel: [String], documents: [Document]) {
            if delay > .zero { Thread.sleep(forTimeInterval: delay.timeInterval) }
            let quantities = Dictionary(uniqueKeysWithValues: documents.map { ($0.id, $0.value["quantity"] ?? .null) })
            processed.withLock {
                $0.count += 1
                $0.last = quantities
            }
            _ = viewModel.count
        }

        static func viewModel(_ documents: [Document]) -> [String] {
            documents.map { $0.value.jsonText }
        }

        /// Under a policy: render in the handler; under next-signal, on the worker, signalling when done.
        func policyHandler(_ mode: ObservationDelivery.Mode) -> @Sendable ([Document], LiveQueryEvent, SignalNext) -> Void {
            { documents, _, signalNext in
                let model = Self.viewModel(documents)
                if mode == .nextSignal {
                    Self.worker.async {
                        self.render(model, documents: documents)
                        signalNext()
                    }
                } else {
                    self.render(model, documents: documents)
                }
            }
        }

        /// The naive pattern: every change is turned into a view model and queued for the consumer at once.
        func naiveHandler() -> @Sendable ([Document], LiveQueryEvent) -> Void {
            { documents, _ in
                let model = Self.viewModel(documents)
                self.waiting.withLock {
                    $0.now += 1
                    $0.most = max($0.most, $0.now)
                }
                Self.worker.async {
                    self.render(model, documents: documents)
                    self.waiting.withLock { $0.now -= 1 }
                }
            }
        }
    }

    private func measure(
        _ policy: String, writes: Int? = nil, reports: Bool = true, observe: (Consumer) throws -> LiveQuery
    ) async throws -> Run {
        var run = Run(policy: policy, writes: writes ?? settings.writes)
        let items = pipeline.store.collection("items")
        try await reset(items)
        run.baselineMegabytes = Double(MemorySampler.residentBytes()) / 1_048_576
        let sampler = MemorySampler(interval: settings.sampleInterval)
        let consumer = Consumer(delay: settings.consumerDelay)
        let liveQuery = try observe(consumer)
        defer {
            liveQuery.stop()
            sampler.stop()
        }

        let clock = ContinuousClock()
        let start = clock.now
        for write in 0..<run.writes {
            try Task.checkCancellation()
            let index = (write * 7) % settings.documents
            _ = try await items.upsert(Self.item(index, quantity: 1000 + write))
            if reports, write % 50 == 0 { console.progress("\(policy): writing", done: write, total: run.writes) }
        }
        let writerEnd = clock.now
        console.endProgress()
        run.writerMilliseconds = (writerEnd - start).milliseconds

        let expected = Dictionary(uniqueKeysWithValues: try await pipeline.liveQuery(named: settings.liveQuery).query.exec()
            .map { ($0.id, $0.value["quantity"] ?? .null) })
        let deadline = clock.now + .seconds(300)
        while consumer.processed.withLock({ $0.last }) != expected, clock.now < deadline, !Task.isCancelled {
            try await Task.sleep(for: .milliseconds(2))
        }
        run.finalStateMilliseconds = (clock.now - writerEnd).milliseconds
        run.finalStateCorrect = consumer.processed.withLock { $0.last } == expected
        // Let the naive queue drain, so the next run starts clean.
        while consumer.waiting.withLock({ $0.now }) > 0, clock.now < deadline, !Task.isCancelled {
            try await Task.sleep(for: .milliseconds(5))
        }
        let statistics = liveQuery.deliveryStatistics
        await liveQuery.stop()
        run.samples = sampler.stop()
        run.peakMegabytes = run.samples.map(\.megabytes).max() ?? run.baselineMegabytes
        run.deliveries = consumer.processed.withLock { $0.count }
        if policy == "naive" {
            run.maxWaiting = consumer.waiting.withLock { $0.most }
        } else {
            run.coalesced = statistics.coalesced
            run.maxWaiting = statistics.heldHighWater
        }
        guard reports else { return run }
        console.line(String(
            format: "%@: %d writes in %.0f ms; %d results processed, %d coalesced, at most %d waiting; peak +%.1f MB; final state after %.0f ms",
            policy, run.writes, run.writerMilliseconds, run.deliveries, run.coalesced, run.maxWaiting, run.peakDeltaMegabytes,
            run.finalStateMilliseconds))
        console.check(run.finalStateCorrect, "\(policy): the consumer ended on the final state")
        if policy != "naive" {
            console.check(run.maxWaiting <= 2, "\(policy): at most 2 results held, however fast the writer (\(run.maxWaiting))")
        }
        return run
    }

    /// An unreported run with a few hundred writes, so that the first measured run does not pay for warming
    /// SQLite's page cache, the engine and the allocator.
    private func warmUp(_ configured: ConfiguredLiveQuery) async throws {
        let query = ConfiguredLiveQuery(name: configured.name, query: configured.query, delivery: ObservationDelivery(.nextSignal))
        _ = try await measure("warm-up", writes: min(settings.writes, 500), reports: false) { consumer in
            try query.observe(handler: consumer.policyHandler(.nextSignal))
        }
    }

    /// Empties the collection and writes its documents afresh, in one transaction.
    private func reset(_ items: StoreCollection) async throws {
        let count = settings.documents
        try await pipeline.store.write { transaction in
            let collection = transaction.collection("items")
            for document in try collection.find("store_id != ''") { _ = try collection.remove(id: document.id) }
            for index in 0..<count { _ = try collection.upsert(Self.item(index, quantity: index % 40)) }
        }
    }

    static func item(_ index: Int, quantity: Int) -> JSONValue {
        let store = Inventory.stores[index % Inventory.stores.count]
        return [
            "_id": .string("item-\(index)"), "store_id": .string(store),
            "name": .string(Inventory.products[index % Inventory.products.count] + " \(index)"),
            "quantity": .number(Double(quantity)), "price": .number(Double(index % 97) / 4),
        ]
    }
}
