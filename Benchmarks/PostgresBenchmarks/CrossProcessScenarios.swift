import Benchmark
import BenchmarkSupport
import Dispatch
import LiveQueryKit
import PostgresAdapter
import TetherJSON

/// 1. Commit → handler latency on PostgreSQL: an observer of one group's 100 newest documents, commits at a steady
/// rate each changing its result. Beside the writer (its own store: the commit carries its documents, no round
/// trip) and in another process (the commit travels as a NOTIFY, the listener reads the change log, the engine reads
/// the changed document, the handler runs).
func crossProcessLatencyScenario(rate: Int, count: Int, runs: Int) {
    let name = "1. Latency on PostgreSQL, \(rate) commits/s"
    let metrics = [
        "same process p50 (µs)", "same process p99 (µs)", "other process p50 (µs)", "other process p99 (µs)",
        "commits/s reached",
    ].map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark(name, configuration: scenario(metrics)) { benchmark in
        let fixture = try await Fixture.make()
        let summary = Runs(name)
        let store = Store(fixture.documents)
        let local = Arrivals()
        let liveQuery = try Fixture.query(store).observeLocal(deliverOn: DispatchQueue(label: "local")) {
            documents, _ in
            local.saw(documents.reduce(-1) { max($0, $1.value["seq"]?.intValue ?? -1) })
        }
        await store.waitForLiveQueries()
        let remote = try await RemoteObservers(
            url: fixture.url, schema: fixture.schema, observers: 1, groups: 1, arrivals: Arrivals())
        for run in 0..<runs {
            let record = { (offset: Int, result: PacedRun) in
                summary.record(benchmark, metrics[offset], percentile(50, result.latencies))
                summary.record(benchmark, metrics[offset + 1], percentile(99, result.latencies))
            }
            try await alternating(run) {
                let start = nowMicroseconds()
                let result = try await pacedRun(
                    rate: rate, count: count, seqBase: 2 * run * count, arrivals: local, group: { _ in 0 }
                ) { i, seq in try await fixture.write(group: 0, i: i, seq: seq) }
                record(0, result)
                summary.record(benchmark, metrics[4], count * 1_000_000 / max(1, nowMicroseconds() - start))
            } _: {
                let result = try await pacedRun(
                    rate: rate, count: count, seqBase: (2 * run + 1) * count, arrivals: remote.arrivals,
                    group: { _ in 0 }
                ) { i, seq in try await fixture.write(group: 0, i: i, seq: seq) }
                record(2, result)
            }
        }
        print("writer's store: \(fixture.documents.statistics); its engine: \(store.statistics)")
        summary.printSummary()
        await remote.close()
        await liveQuery.stop()
        await fixture.close()
    }
}

/// 2. Writer throughput: commits one after another, as fast as they go, with 0, 1 or 100 observers in another
/// process (100: one per group; the writes go round the groups). The observers cost the writer nothing but the
/// NOTIFY each commit sends anyway and the other process's reads, which compete for the server.
func writerThroughputScenario(remoteObservers: Int, commits: Int, runs: Int) {
    let name = "2. Writer throughput, \(remoteObservers) observers in another process"
    let metrics = ["commits/s", "commit p99 (µs)"].map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark(name, configuration: scenario(metrics)) { benchmark in
        let fixture = try await Fixture.make()
        let summary = Runs(name)
        let remote =
            remoteObservers > 0
            ? try await RemoteObservers(
                url: fixture.url, schema: fixture.schema, observers: remoteObservers,
                groups: min(remoteObservers, Fixture.groups), arrivals: Arrivals()) : nil
        for run in 0..<runs {
            var durations: [Int] = []
            durations.reserveCapacity(commits)
            let start = nowMicroseconds()
            for i in 0..<commits {
                let begin = nowMicroseconds()
                try await fixture.write(group: i % Fixture.groups, i: i / Fixture.groups, seq: run * commits + i)
                durations.append(nowMicroseconds() - begin)
            }
            let elapsed = nowMicroseconds() - start
            summary.record(benchmark, metrics[0], commits * 1_000_000 / max(1, elapsed))
            summary.record(benchmark, metrics[1], percentile(99, durations))
            // The observers catch up before the next run, so that no run pays for the one before.
            if let remote { _ = try await remote.report(through: try await fixture.commit) }
        }
        summary.printSummary()
        await remote?.close()
        await fixture.close()
    }
}

/// 3. Shared evaluation across processes: 1,000 live queries of one shape over 100 groups in another process, the
/// writer here committing at 1,000/s to a random group each time. Counts what the other process sends the server
/// per commit — Hasura's multiplexing is the anchor: it batches 100 live queries of one shape into one statement.
func sharedParametersScenario(observers: Int, groups: Int, commits: Int, runs: Int) {
    let name = "3. \(observers) live queries over \(groups) groups in another process, 1000 commits/s"
    let metrics = [
        "observer statements per 100 commits", "observer reads per 100 commits", "evaluations per 100 commits",
        "writer statements per 100 commits",
    ].map { BenchmarkMetric.custom($0, useScalingFactor: false) }
    Benchmark(name, configuration: scenario(metrics)) { benchmark in
        let fixture = try await Fixture.make()
        let summary = Runs(name)
        let remote = try await RemoteObservers(
            url: fixture.url, schema: fixture.schema, observers: observers, groups: groups, arrivals: Arrivals())
        var generator = SystemRandomNumberGenerator()
        for run in 0..<runs {
            let before = try await remote.report(through: try await fixture.commit)
            let writerBefore = fixture.documents.statistics.statements
            let touched = (0..<commits).map { _ in Int.random(in: 0..<groups, using: &generator) }
            _ = try await pacedRun(
                rate: 1_000, count: commits, seqBase: run * commits, arrivals: nil, group: { touched[$0] }
            ) { i, seq in try await fixture.write(group: touched[i], i: i, seq: seq) }
            let after = try await remote.report(through: try await fixture.commit)
            let per100 = { (index: Int) in (after[index] - before[index]) * 100 / commits }
            summary.record(benchmark, metrics[0], per100(0))
            summary.record(benchmark, metrics[1], per100(1))
            summary.record(benchmark, metrics[2], (after[3] + after[4] - before[3] - before[4]) * 100 / commits)
            summary.record(
                benchmark, metrics[3], (fixture.documents.statistics.statements - writerBefore) * 100 / commits)
        }
        summary.printSummary()
        await remote.close()
        await fixture.close()
    }
}
