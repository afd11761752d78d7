// OwnershipKit benchmarks: observer churn and fan-out, with a direct-call baseline in the same run.
//   TETHER_BENCHMARKS=1 swift package benchmark --target OwnershipBenchmarks

import Benchmark
import OwnershipKit

protocol Listener: Sendable {
    func hear(_ notice: ObserverNotice<Int>)
}

/// A class observer doing a little work per event (an opaque call), so calls cannot be optimised away.
final class Tally: Listener {
    func hear(_ notice: ObserverNotice<Int>) {
        if case .event(let value) = notice { blackHole(value) }
    }
}

struct ClosureListener: Listener {
    let body: @Sendable (ObserverNotice<Int>) -> Void
    func hear(_ notice: ObserverNotice<Int>) { body(notice) }
}

final class Owner: Sendable {}

func makeTable() -> ObserverTable<any Listener, Int> {
    ObserverTable { listener, notice in listener.hear(notice) }
}

let fanOut = 5_000

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 100,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )

    // Siesta's observer-churn case: add a self-owned observer, add a closure it owns, remove both by owner.
    for existing in [5, 100] {
        Benchmark("Churn: add self-owned + add closure + remove (\(existing) existing)") { benchmark in
            let table = makeTable()
            let keep = (0..<existing).map { _ in Tally() }
            for tally in keep { table.add(tally, as: { $0 }) }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                let observer = Tally()
                table.add(observer, as: { $0 })
                table.add(ClosureListener { blackHole($0) }, owner: observer)
                table.removeObservers(ownedBy: observer)
            }
            benchmark.stopMeasurement()
            blackHole(keep)
        }
    }

    // Ending many observers one by one, as stopping a screen's worth of live queries does: each token cancelled in
    // turn. Per ending = the figure / the count; it stays flat as the count grows tenfold when ending is O(1).
    for count in [1_000, 10_000] {
        Benchmark(
            "Ending: \(count) observers, each token cancelled in turn",
            configuration: .init(warmupIterations: 1, maxDuration: .seconds(5), maxIterations: 20)
        ) { benchmark in
            let table = makeTable()
            let tokens = (0..<count).map { _ in table.observe(ClosureListener { blackHole($0) }) }
            benchmark.startMeasurement()
            for token in tokens { token.cancel() }
            benchmark.stopMeasurement()
            blackHole(table)
        }
    }

    // One notification to 5,000 observers; per delivery = the figure / 5,000.
    Benchmark("Fan-out: 1 notification to \(fanOut) closure observers (external owner)") { benchmark in
        let table = makeTable()
        let owner = Owner()
        let tallies = (0..<fanOut).map { _ in Tally() }
        for tally in tallies { table.add(ClosureListener { tally.hear($0) }, owner: owner) }
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations { table.notify(iteration & 1) }
        benchmark.stopMeasurement()
        blackHole((owner, tallies))
    }

    Benchmark("Fan-out: 1 notification to \(fanOut) self-owned observers") { benchmark in
        let table = makeTable()
        let tallies = (0..<fanOut).map { _ in Tally() }
        for tally in tallies { table.add(tally, as: { $0 }) }
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations { table.notify(iteration & 1) }
        benchmark.stopMeasurement()
        blackHole(tallies)
    }

    // The baseline: the same 5,000 observers called directly, through the same existential and closure.
    Benchmark("Baseline: \(fanOut) direct closure calls") { benchmark in
        let tallies = (0..<fanOut).map { _ in Tally() }
        let listeners: [any Listener] = tallies.map { tally in ClosureListener { tally.hear($0) } }
        let deliver: @Sendable (any Listener, ObserverNotice<Int>) -> Void = { $0.hear($1) }
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            let notice = ObserverNotice.event(iteration & 1)
            for listener in listeners { deliver(listener, notice) }
        }
        benchmark.stopMeasurement()
        blackHole(tallies)
    }
}
