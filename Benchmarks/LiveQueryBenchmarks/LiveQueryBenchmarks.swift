// LiveQueryKit against GRDB's ValueObservation configured as GRDB's docs and strongest users recommend: same schema,
// same documents, same query, same machine, one process, the sides alternating run by run.
//   TETHER_BENCHMARKS=1 swift package --scratch-path .build-bench benchmark --target LiveQueryBenchmarks
// Each scenario runs several times inside one benchmark (maxIterations 1); every run's figure is one sample of a
// custom metric, so the table's p50 is the median over the runs and p0…p100 the spread. "SUMMARY" lines print the
// same: "median (min–max)". How each side is configured, and why: Docs/Performance.md, "Live queries".

import Benchmark
import BenchmarkSupport

let benchmarks: @Sendable () -> Void = {
    for documents in [10_000, 100_000] {
        latencyScenario(rate: 1_000, count: 1_000, documents: documents, runs: 5)
    }
    latencyScenario(rate: 100, count: 200, documents: 10_000, runs: 3)
    slowConsumerScenario(count: 100_000, blocks: 50, documents: 10_000, runs: 5)
    irrelevantScenario(documents: 10_000, runs: 3)
    for observers in [0, 1, 100, 1_000, 10_000] {
        fanOutScenario(observers: observers, documents: 10_000, runs: 3)
    }
    parametersScenario(observers: 1_000, documents: 10_000, runs: 3, comparesGRDB: true)
    parametersScenario(observers: 10_000, documents: 100_000, runs: 3, comparesGRDB: false)
    handOverScenario(rounds: 100, documents: 10_000, runs: 5)
    largeDocumentScenario(megabytes: 50, runs: 3)
    followedCollectionScenario(count: 87_000, runs: 3)
}
