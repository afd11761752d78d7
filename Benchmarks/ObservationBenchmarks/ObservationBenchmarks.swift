// TetherObservation's models beside the observers they wrap: what a LiveQueryModel adds per delivered result to a
// bare closure observer of the same query, and whether 10,000 models created and released leave the heap where it
// was.
//   TETHER_BENCHMARKS=1 swift package --scratch-path .build-bench benchmark --target ObservationBenchmarks

import Benchmark
import BenchmarkSupport
import Dispatch
import Foundation
import LiveQueryKit
import Observation
import ResourceKit
import TetherClock
import TetherConcurrency
import TetherJSON
import TetherObservation
import TransportKit

let benchmarks: @Sendable () -> Void = {
    perEventBenchmark()
    perResultBenchmark()
    releaseBenchmark()
}

/// The newest write a result has shown so far (its documents' largest `n`); `wait(for:)` resumes the writer as soon
/// as a result shows write `target`. BenchmarkSupport's `Arrivals` records when each write arrived and is polled
/// every millisecond: a poll would swamp a round trip of about 60 µs, so this one resumes a continuation.
final class NewestResult: Sendable {
    private struct State {
        var count = 0
        var waiter: (target: Int, continuation: CheckedContinuation<Void, Never>)?
    }
    private let state = LockedValue(State())

    func arrived(_ count: Int) {
        let resume = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count = max(state.count, count)
            guard let waiter = state.waiter, state.count >= waiter.target else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        resume?.resume()
    }

    func wait(for target: Int) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                guard state.count < target else { return true }
                state.waiter = (target, continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// Reads `model` on `queue` after each result it takes, as a view does: tracking is armed on the queue, and the read
/// runs after the job that changed the model.
final class QueueReader: Sendable {
    let model: LiveQueryModel
    let queue: DispatchQueue
    let arrivals = NewestResult()

    init(_ model: LiveQueryModel, queue: DispatchQueue) {
        self.model = model
        self.queue = queue
        queue.async { self.read() }
    }

    private func read() {
        let newest = withObservationTracking {
            newestWrite(model.documents)
        } onChange: { [self] in
            queue.async { self.read() }
        }
        arrivals.arrived(newest)
    }
}

/// The largest `n` of `documents`: the newest write they show.
func newestWrite(_ documents: [Document]) -> Int {
    documents.compactMap { $0.int("n") }.max() ?? -1
}

/// Writes `count` times, one at a time, to one of the query's ten documents, each waiting until the observer has a
/// result showing it; microseconds per result. The result stays ten documents, so what is measured is the way from
/// the write to the observer, not a growing evaluation.
func roundTrips(_ items: StoreCollection, count: Int, arrivals: NewestResult) async throws -> Int {
    let start = nowMicroseconds()
    for index in 0..<count {
        try await items.upsert(["_id": .string("d\(index % 10)"), "group": 1, "n": .number(Double(index))])
        await arrivals.wait(for: index)
    }
    return (nowMicroseconds() - start) / count
}

/// New content set on a resource `count` times, each reaching its observer directly (no delivery policy): a closure
/// observer that reads the content, or a ResourceModel; nanoseconds per event, the observer's work included.
func perEventBenchmark() {
    let metrics = [
        "Closure observer reading the content: per event (ns)", "ResourceModel: per event (ns)",
    ].map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark("Per resource event: ResourceModel beside a closure observer", configuration: scenario(metrics)) {
        benchmark in
        let summary = Runs("Per resource event")
        let count = 20_000
        let service = Service(baseURL: "https://api.test", transport: InMemoryTransport())
        let contents = (0..<count).map { JSONValue.array([.number(Double($0))]) }
        for run in 0..<6 {
            try await alternating(
                run,
                {
                    let resource = service.resource("/closure")
                    let owner = NSObject()
                    let seen = Counter()
                    resource.addObserver(owner: owner) { resource, event in
                        if event != .observerAdded, resource.typedContent(as: JSONValue.self) != nil {
                            seen.increment()
                        }
                    }
                    let start = nowMicroseconds()
                    for content in contents { resource.overrideLocalContent(with: content) }
                    summary.record(benchmark, metrics[0], (nowMicroseconds() - start) * 1_000 / count)
                    precondition(seen.count == count)
                    resource.removeObservers(ownedBy: owner)
                },
                {
                    let resource = service.resource("/model")
                    let model = ResourceModel<JSONValue>(resource, loadsOnAccess: false, delivery: nil)
                    let start = nowMicroseconds()
                    for content in contents { resource.overrideLocalContent(with: content) }
                    summary.record(benchmark, metrics[1], (nowMicroseconds() - start) * 1_000 / count)
                    precondition(model.content == contents.last)
                })
        }
        summary.printSummary()
    }
}

func perResultBenchmark() {
    let metrics = [
        "Closure observer, observeLocal(deliverOn:): write to delivery, per result (µs)",
        "LiveQueryModel, read on its queue: write to the read, per result (µs)",
    ].map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark("Per delivered result: LiveQueryModel beside a closure observer", configuration: scenario(metrics)) {
        benchmark in
        let summary = Runs("Per delivered result")
        let count = 2_000
        for run in 0..<6 {
            try await alternating(
                run,
                {
                    let store = Store.inMemory()
                    let items = store.collection("items")
                    let arrivals = NewestResult()
                    let liveQuery = try items.find("group == 1").sort("_id").observeLocal(
                        deliverOn: DispatchQueue(label: "closure")
                    ) { documents, _ in
                        arrivals.arrived(newestWrite(documents))
                    }
                    summary.record(
                        benchmark, metrics[0], try await roundTrips(items, count: count, arrivals: arrivals))
                    await liveQuery.stop()
                    withExtendedLifetime(store) {}  // a store released ends its live queries
                },
                {
                    let store = Store.inMemory()
                    let items = store.collection("items")
                    let queue = DispatchQueue(label: "model")
                    let model = try LiveQueryModel(items.find("group == 1").sort("_id"), deliverOn: .queue(queue))
                    let reader = QueueReader(model, queue: queue)
                    summary.record(
                        benchmark, metrics[1],
                        try await roundTrips(items, count: count, arrivals: reader.arrivals))
                    await model.stop()
                    withExtendedLifetime(store) {}
                })
        }
        summary.printSummary()
    }
}

/// 10,000 models made and released, six rounds: the heap after each round beside the one after the round before
/// (glibc's `mallinfo2`) — flat when nothing is left behind — and what each kind of model holds while alive, in the
/// first round (later rounds also free the entries the round before left for the observer tables' sweeps).
func releaseBenchmark() {
    let metrics = [
        "ResourceModel: heap per live model, first round (B)", "ResourceModel: heap after a round minus before it (KB)",
        "LiveQueryModel: heap per live model, first round (B)",
        "LiveQueryModel: heap after a round minus before it (KB)",
        "LiveQueryModel: observers registered after a round",
    ].map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark("10,000 models made and released, six rounds", configuration: scenario(metrics)) { benchmark in
        let summary = Runs("Models released")
        let count = 10_000
        let transport = InMemoryTransport()
        transport.route(.get, "https://api.test/items", reply: .json("[1, 2, 3]"))
        let service = Service(baseURL: "https://api.test", transport: transport)
        let resource = service.resource("/items")
        _ = await resource.load().outcome
        let store = Store.inMemory()
        let items = store.collection("items")
        try await items.upsert(["_id": "a", "group": 1])
        let query = items.find("group == 1")

        var previousResource: Int?
        var previousLiveQuery: Int?
        for round in 0..<6 {
            let before = heapBytesInUse() ?? 0
            var resourceModels: [ResourceModel<JSONValue>] = []
            resourceModels.reserveCapacity(count)
            for _ in 0..<count {
                resourceModels.append(ResourceModel(resource, loadsOnAccess: false, delivery: nil))
            }
            precondition(resourceModels.allSatisfy { $0.content == [1, 2, 3] })
            let alive = heapBytesInUse() ?? 0
            resourceModels = []
            _ = await resource.load().outcome  // an event: the released models' entries end as it is delivered
            precondition(resource.observerCount == 0)
            let after = heapBytesInUse() ?? 0
            if round == 0 { summary.record(benchmark, metrics[0], (alive - before) / count) }
            if let previousResource { summary.record(benchmark, metrics[1], (after - previousResource) / 1_024) }
            previousResource = after

            let queryBefore = heapBytesInUse() ?? 0
            var liveQueryModels: [LiveQueryModel] = []
            liveQueryModels.reserveCapacity(count)
            for _ in 0..<count {
                liveQueryModels.append(try LiveQueryModel(query, deliverOn: .inline, pacing: .immediately))
            }
            let models = liveQueryModels
            let allTaken = try await waitUntil { models.allSatisfy { $0.resultCount == 1 } }
            precondition(allTaken)
            let queryAlive = heapBytesInUse() ?? 0
            liveQueryModels = []
            try await items.upsert(["_id": "a", "group": 1, "round": .number(Double(round))])
            await store.waitForLiveQueries()
            summary.record(benchmark, metrics[4], store.statistics.observers)
            let queryAfter = heapBytesInUse() ?? 0
            if round == 0 { summary.record(benchmark, metrics[2], (queryAlive - queryBefore) / count) }
            if let previousLiveQuery {
                summary.record(benchmark, metrics[3], (queryAfter - previousLiveQuery) / 1_024)
            }
            previousLiveQuery = queryAfter
        }
        summary.printSummary()
    }
}
