// ResourceKit benchmarks: lookups, cache growth and churn, loadIfNeeded, stub loads, fan-out, optimistic updates —
// each beside a baseline.
//   TETHER_BENCHMARKS=1 swift package --scratch-path .build-bench benchmark --target ResourceBenchmarks

import Benchmark
import BenchmarkSupport
import ResourceKit
import Synchronization
import TetherClock
import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

let base = "https://api.example.com/v1"
let paths = (0..<20).map { "/items/\($0)" }
let lookupRounds = 20_000
let fanOut = 5_000
let mutationObservers = 1_000

final class Owner: Sendable {}

func makeService(countLimit: Int = 2048) -> (Service, InMemoryTransport) {
    let transport = InMemoryTransport(timeSource: ManualTimeSource())  // replies wait for a clock that never moves
    let service = Service(baseURL: base, transport: transport, cacheCountLimit: countLimit)
    return (service, transport)
}

/// Looks up 10,000 new URLs in a fresh service with `countLimit`, measuring the lookups only.
func measureNewURLs(_ benchmark: Benchmark, countLimit: Int) {
    let fresh = (0..<10_000).map { "/new/\($0)" }
    for _ in benchmark.scaledIterations {
        let (service, _) = makeService(countLimit: countLimit)
        benchmark.startMeasurement()
        for path in fresh { blackHole(service.resource(path)) }
        benchmark.stopMeasurement()
    }
}

let bytesPerResource = BenchmarkMetric.custom("Bytes per resource", polarity: .prefersSmaller, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 3,
        maxDuration: .seconds(3),
        maxIterations: 1_000
    )

    // 20 URLs × 20,000 lookups of existing resources; per lookup = the figure / 400,000.
    Benchmark("Lookup: 20 URLs × 20k service.resource(path)") { benchmark in
        let (service, _) = makeService()
        let resources = paths.map { service.resource($0) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<lookupRounds {
                for path in paths { blackHole(service.resource(path)) }
            }
        }
        benchmark.stopMeasurement()
        blackHole(resources)
    }

    // The baseline: the same lookups in a plain dictionary behind a Mutex.
    Benchmark("Baseline: 20 URLs × 20k Mutex<[String: Resource]> lookups") { benchmark in
        let (service, _) = makeService()
        let table = Mutex<[String: Resource]>([:])
        table.withLock { table in for path in paths { table[path] = service.resource(path) } }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<lookupRounds {
                for path in paths { blackHole(table.withLock { $0[path] }) }
            }
        }
        benchmark.stopMeasurement()
    }

    Benchmark("Lookup: 20 URLs × 20k service.resource(absoluteURL:)") { benchmark in
        let (service, _) = makeService()
        let urls = paths.map { base + $0 }
        let resources = urls.map { service.resource(absoluteURL: $0) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<lookupRounds {
                for url in urls { blackHole(service.resource(absoluteURL: url)) }
            }
        }
        benchmark.stopMeasurement()
        blackHole(resources)
    }

    // The same lookups with a URL value instead of a string.
    Benchmark("Lookup: 20 URLs × 20k service.resource(absoluteURL: URL)") { benchmark in
        let (service, _) = makeService()
        let urls = paths.map { URL(string: base + $0)! }
        let resources = urls.map { service.resource(absoluteURL: $0) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<lookupRounds {
                for url in urls { blackHole(service.resource(absoluteURL: url)) }
            }
        }
        benchmark.stopMeasurement()
        blackHole(resources)
    }

    // What one cached, unobserved resource costs on the heap: 10,000 made in a fresh service (their registry
    // entries included), the heap's growth divided by 10,000.
    Benchmark(
        "Memory: 10k cached, unobserved resources",
        configuration: .init(metrics: [bytesPerResource], warmupIterations: 1, maxIterations: 20)
    ) { benchmark in
        let fresh = (0..<10_000).map { "/memory/\($0)" }
        for _ in benchmark.scaledIterations {
            let (service, _) = makeService(countLimit: 20_000)
            guard let before = heapBytesInUse() else { return }
            for path in fresh { blackHole(service.resource(path)) }
            let after = heapBytesInUse() ?? before
            benchmark.measurement(bytesPerResource, (after - before) / fresh.count)
            blackHole(service)
        }
    }

    // 10,000 new URLs into an empty cache (no limit reached).
    Benchmark("Cache growth: 10k new URLs") { benchmark in
        measureNewURLs(benchmark, countLimit: 20_000)
    }

    // The baseline: a new object per entry into a plain dictionary behind a Mutex.
    Benchmark("Baseline: 10k new objects into Mutex<[String: Owner]>") { benchmark in
        let fresh = (0..<10_000).map { "/grow/\($0)" }
        for _ in benchmark.scaledIterations {
            let table = Mutex<[String: Owner]>([:])
            benchmark.startMeasurement()
            for path in fresh { table.withLock { $0[path] = Owner() } }
            benchmark.stopMeasurement()
        }
    }

    // 10,000 new URLs with a count limit of 100: a flush every 100 insertions or so.
    Benchmark("Churn: 10k new URLs, count limit 100") { benchmark in
        measureNewURLs(benchmark, countLimit: 100)
    }

    // loadIfNeeded × 300,000 on a resource whose data is fresh (up to date): per call = the figure / 300,000.
    Benchmark("loadIfNeeded × 300k: fresh data (up to date)") { benchmark in
        let (service, _) = makeService()
        let resource = service.resource("/fresh")
        service.configure { $0.expirationTime = .seconds(3600) }
        resource.overrideLocalContent(with: "fresh")
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<300_000 { blackHole(resource.loadIfNeeded()) }
        }
        benchmark.stopMeasurement()
    }

    // loadIfNeeded × 300,000 on a resource with a load in flight: every call joins it.
    Benchmark("loadIfNeeded × 300k: load in flight (deduplicated)") { benchmark in
        let (service, transport) = makeService()
        transport.route(base + "/pending", reply: .json("[]", delay: .seconds(1)))
        let resource = service.resource("/pending")
        let load: Request = resource.load()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<300_000 { blackHole(resource.loadIfNeeded()) }
        }
        benchmark.stopMeasurement()
        load.cancel()
    }

    // 1,000 loads one after another over the in-memory transport, which answers at once: the framework's own cost
    // per load — request, hand-over to the transport, state, events — is the figure / 1,000.
    Benchmark("Stub loads: 1,000 × Resource.load(), one after another") { benchmark in
        let (service, transport) = makeService()
        transport.route(base + "/stub", reply: .json("[]"))
        let resource = service.resource("/stub")
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<1_000 { blackHole(try await resource.loadedData()) }
        }
        benchmark.stopMeasurement()
    }

    // One event to 5,000 closure observers; per delivery = the figure / 5,000.
    Benchmark("Fan-out: 1 event to \(fanOut) closure observers") { benchmark in
        let (service, _) = makeService()
        let resource = service.resource("/fan-out")
        let owner = Owner()
        for _ in 0..<fanOut { resource.addObserver(owner: owner) { _, event in blackHole(event) } }
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations { resource.overrideLocalContent(with: iteration) }
        benchmark.stopMeasurement()
        blackHole(owner)
    }

    // A mutation's optimistic update shown to 1,000 closure observers, beside a local override shown to the same
    // observers: what an optimistic update adds (a request made and started, a layer computed) to the fan-out.
    // Measured from the call to its return; the mutation is cancelled (rolled back) outside the measurement.
    Benchmark("Optimistic update: 1 mutation shown to \(mutationObservers) closure observers") { benchmark in
        let (service, _) = makeService()
        let resource = service.resource("/mutated")
        let owner = Owner()
        for _ in 0..<mutationObservers { resource.addObserver(owner: owner) { _, event in blackHole(event) } }
        resource.overrideLocalContent(with: 0)
        blackHole(resource.configuration(for: .put))  // computed once per method, as the override's was
        benchmark.startMeasurement()
        let mutation = resource.mutate(.put, text: "1", optimistic: .replacing(with: 1))
        benchmark.stopMeasurement()
        mutation.cancel()
        blackHole(owner)
    }

    Benchmark("Baseline: 1 local override shown to \(mutationObservers) closure observers") { benchmark in
        let (service, _) = makeService()
        let resource = service.resource("/overridden")
        let owner = Owner()
        for _ in 0..<mutationObservers { resource.addObserver(owner: owner) { _, event in blackHole(event) } }
        resource.overrideLocalContent(with: 0)
        benchmark.startMeasurement()
        resource.overrideLocalContent(with: 1)
        benchmark.stopMeasurement()
        blackHole(owner)
    }

    Benchmark("Baseline: \(fanOut) direct closure calls") { benchmark in
        let (service, _) = makeService()
        let resource = service.resource("/fan-out")
        let closures: [@Sendable (Resource, ResourceEvent) -> Void] = (0..<fanOut).map { _ in
            { _, event in blackHole(event) }
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for closure in closures { closure(resource, .newData(.localOverride)) }
        }
        benchmark.stopMeasurement()
    }
}
