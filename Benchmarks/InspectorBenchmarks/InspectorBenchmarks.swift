// What the inspector costs: the same fan-out and churn with no inspector, and with one attached and asked ten
// times a second (ten times the page's rate) — both sides in one process, alternating, 7 runs each (9 for the live
// queries); and what one inspection costs. "SUMMARY" lines print "median (min–max)" over the runs.
//   TETHER_BENCHMARKS=1 swift package --scratch-path .build-bench benchmark --target InspectorBenchmarks

import Benchmark
import BenchmarkSupport
import Foundation
import LiveQueryKit
import ResourceKit
import TetherClock
import TetherInspector
import TetherJSON
import TransportKit

final class Owner: Sendable {}

let base = "https://api.example.com/v1"

func makeService() -> Service {
    Service(baseURL: base, transport: InMemoryTransport(timeSource: ManualTimeSource()))
}

/// An inspector watching `service` and `store`, asked for its whole document (encoded as the API sends it) every
/// `interval` until the returned task is cancelled.
func attachInspector(service: Service, store: Store, every interval: Duration) throws -> Task<Void, Never> {
    let inspector = try Inspector()
    inspector.watch(service, named: "api")
    inspector.watch(store, named: "store")
    return Task.detached {
        let encoder = JSONEncoder()
        while !Task.isCancelled {
            blackHole(try? encoder.encode(inspector.inspect()))
            try? await Task.sleep(for: interval)
        }
    }
}

/// Runs `body` `runs` times without an inspector and with one attached, alternating which goes first; records the
/// microseconds each took under `metrics[0]` (without) and `metrics[1]` (with).
func withAndWithout(
    _ benchmark: Benchmark, _ summary: Runs, _ metrics: [BenchmarkMetric], runs: Int,
    _ body: @escaping (Service, Store) async throws -> Void
) async throws {
    for run in 0..<runs {
        try await alternating(run) {
            let (service, store) = (makeService(), Store.inMemory())
            let start = nowMicroseconds()
            try await body(service, store)
            summary.record(benchmark, metrics[0], nowMicroseconds() - start)
        } _: {
            let (service, store) = (makeService(), Store.inMemory())
            let poller = try attachInspector(service: service, store: store, every: .milliseconds(100))
            let start = nowMicroseconds()
            try await body(service, store)
            summary.record(benchmark, metrics[1], nowMicroseconds() - start)
            poller.cancel()
            await poller.value
        }
    }
}

func metrics(_ what: String) -> [BenchmarkMetric] {
    ["\(what), no inspector (µs)", "\(what), inspector attached (µs)"].map {
        BenchmarkMetric.custom($0, useScalingFactor: false)
    }
}

let benchmarks: @Sendable () -> Void = {
    // Fan-out: one resource, 1,000 owned observers (closures), 2,000 changes delivered to each.
    let fanOut = metrics("2M deliveries")
    Benchmark("Fan-out: 1,000 observers × 2,000 changes", configuration: scenario(fanOut)) { benchmark in
        let summary = Runs("Fan-out")
        try await withAndWithout(benchmark, summary, fanOut, runs: 7) { service, _ in
            let resource = service.resource("/items")
            let owners = (0..<1_000).map { _ in Owner() }
            for owner in owners { resource.addObserver(owner: owner) { _, _ in } }
            for index in 0..<2_000 { resource.overrideLocalContent(with: "v\(index)") }
            withExtendedLifetime(owners) {}
        }
        summary.printSummary()
    }

    // Churn: 20,000 screens, each observing one of 100 resources and gone at once; swept by the next changes.
    let churn = metrics("20k owners come and go")
    Benchmark("Churn: 20,000 owners add an observer and die", configuration: scenario(churn)) { benchmark in
        let summary = Runs("Churn")
        try await withAndWithout(benchmark, summary, churn, runs: 7) { service, _ in
            let resources = (0..<100).map { service.resource("/items/\($0)") }
            for index in 0..<20_000 {
                let owner = Owner()
                resources[index % 100].addObserver(owner: owner) { _, _ in }
            }
            for resource in resources { resource.overrideLocalContent(with: "swept") }
            blackHole(service.flushUnused())
        }
        summary.printSummary()
    }

    // Live queries: 100 observers of one query, 2,000 commits, each changing its result and caught up with before the
    // next (a round per commit: without the wait, how many commits a round merges varies from run to run, and the
    // time with it, 44–323 ms on either side).
    let live = metrics("2,000 commits to 100 observers")
    Benchmark("Live queries: 100 observers × 2,000 commits", configuration: scenario(live)) { benchmark in
        let summary = Runs("Live queries")
        try await withAndWithout(benchmark, summary, live, runs: 9) { _, store in
            let items = store.collection("items")
            let owners = (0..<100).map { _ in Owner() }
            for owner in owners { try items.find("group == 'a'").observeLocal(owner: owner) { _, _ in } }
            for index in 0..<2_000 {
                try await items.upsert(["_id": .string("d\(index % 50)"), "group": "a", "n": .number(Double(index))])
                await store.waitForLiveQueries()
            }
            withExtendedLifetime(owners) {}
        }
        summary.printSummary()
    }

    // One inspection: 1,000 resources with one observer each, and 1,000 live-query observers over 100 queries.
    let inspection = ["one inspection (µs)", "its JSON (bytes)"].map {
        BenchmarkMetric.custom($0, useScalingFactor: false)
    }
    Benchmark("One inspection: 1,000 resources, 1,000 live-query observers", configuration: scenario(inspection)) {
        benchmark in
        let summary = Runs("One inspection")
        let (service, store) = (makeService(), Store.inMemory())
        let owners = (0..<1_000).map { _ in Owner() }
        for (index, owner) in owners.enumerated() {
            service.resource("/items/\(index)").addObserver(owner: owner) { _, _ in }
            try store.collection("items").find("group == $args.g", args: ["g": .string("g\(index % 100)")])
                .observeLocal(owner: owner) { _, _ in }
        }
        await store.waitForLiveQueries()
        let inspector = try Inspector()
        inspector.watch(service, named: "api")
        inspector.watch(store, named: "store")
        let encoder = JSONEncoder()
        for _ in 0..<20 {
            let start = nowMicroseconds()
            let body = try encoder.encode(inspector.inspect())
            summary.record(benchmark, inspection[0], nowMicroseconds() - start)
            summary.record(benchmark, inspection[1], body.count)
        }
        summary.printSummary()
        withExtendedLifetime(owners) {}
    }
}
