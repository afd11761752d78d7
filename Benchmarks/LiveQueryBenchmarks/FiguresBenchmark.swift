import Benchmark
import BenchmarkSupport
import GRDB
import LiveQueryKit

/// Registers a scenario whose figures are recorded by name, one sample per run: `body` runs the scenario on the
/// fixture's two sides, filled with `documents` documents, and records each run's figures with `record(name, value)`,
/// `name` being one of `figures`. The summary is printed once the body returns.
func figuresBenchmark(
    _ name: String, figures: [String], documents: Int,
    _ body: @escaping (Fixture, Store, DatabasePool, _ record: @escaping (String, Int) -> Void) async throws -> Void
) {
    let metrics = Dictionary(
        uniqueKeysWithValues: figures.map { ($0, BenchmarkMetric.custom($0, useScalingFactor: false)) })
    Benchmark(name, configuration: scenario(figures.map { metrics[$0]! })) { benchmark in
        let fixture = Fixture(documentCount: documents)
        let summary = Runs(name)
        let (store, pool) = try await fixture.sides()
        try await body(fixture, store, pool) { summary.record(benchmark, metrics[$0]!, $1) }
        summary.printSummary()
    }
}
