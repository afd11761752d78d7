// PostgresAdapter across processes: the writer here, observers in `tether-postgres-bench-observer` (another process,
// its own store, sharing only the server), against the same observers in the writer's own store. Needs a server:
//   TETHER_BENCHMARKS=1 swift build -c release --scratch-path .build-bench --product PostgresBenchmarks
//   TETHER_BENCHMARKS=1 bash Scripts/with-postgres.sh \
//       swift package --scratch-path .build-bench benchmark --target PostgresBenchmarks
// Each scenario runs several times inside one benchmark (maxIterations 1); "SUMMARY" lines print "median (min–max)"
// over the runs. What each figure means, and the figures: Docs/Performance.md, "PostgreSQL across processes".

import Benchmark

let benchmarks: @Sendable () -> Void = {
    for (rate, count) in [(100, 300), (1_000, 2_000)] {
        crossProcessLatencyScenario(rate: rate, count: count, runs: 3)
    }
    for observers in [0, 1, 100] {
        writerThroughputScenario(remoteObservers: observers, commits: 2_000, runs: 3)
    }
    sharedParametersScenario(observers: 1_000, groups: 100, commits: 2_000, runs: 3)
}
