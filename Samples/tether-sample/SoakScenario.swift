import Foundation
import LiveQueryKit
import MemoryPressureKit
import PipelineKit
import ResourceKit
import TetherConcurrency
import TransportKit

/// `--soak SECONDS`: the ownership and back-pressure scenarios in a loop — owner churn, a memory-pressure event
/// and the server's slow answers and 503s every round, a fast writer and a slow consumer under every policy — with
/// resident memory sampled every second. It reports the memory slope after warm-up, checks that every round ended
/// on the final state, and that nothing is left alive at the end.
struct SoakScenario {
    struct Result: Sendable {
        var seconds = 0.0
        var rounds = 0
        var samples: [MemorySampler.Sample] = []
        /// Least-squares slope of resident memory after warm-up, in MB per minute.
        var slopeMegabytesPerMinute = 0.0
        var warmUpSeconds = 0.0
        var firstMegabytes = 0.0
        var lastMegabytes = 0.0
        var roundsOnFinalState = 0
        var leftAlive: [String: Int] = [:]
    }

    let pipeline: AssembledPipeline
    let service: ResourceKit.Service
    let settings: SampleSettings
    let server: DemoServer?
    let console: Console
    let duration: Duration

    func run() async throws -> Result {
        var result = Result()
        let quiet = Console(quiet: true)
        var small = settings
        small.arrivals = min(settings.arrivals, 40)
        let sampler = MemorySampler(interval: .seconds(1))
        let clock = ContinuousClock()
        let start = clock.now
        while clock.now - start < duration {
            try Task.checkCancellation()
            _ = await OwnershipScenario(
                pipeline: pipeline, service: service, settings: settings, server: server, console: quiet
            ).run()
            let runs = try await BackPressureScenario(pipeline: pipeline, settings: small, console: quiet).run()
            result.rounds += 1
            if runs.runs.allSatisfy(\.finalStateCorrect) { result.roundsOnFinalState += 1 }
            console.progress("soak", done: Int((clock.now - start).milliseconds), total: Int(duration.milliseconds))
        }
        console.endProgress()
        result.seconds = (clock.now - start).milliseconds / 1000
        result.samples = sampler.stop()

        // Nothing left: every screen and observer gone, every live query stopped, every resource let go.
        pipeline.simulateMemoryPressure(reason: "the soak's end")
        let deadline = clock.now + .seconds(5)
        while service.cachedResourceCount > 0 || OwnershipScenario.Screen.alive.withLock({ $0 }) > 0
            || OwnershipScenario.ItemsObserver.alive.withLock({ $0 }) > 0, clock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(10))
            pipeline.simulateMemoryPressure(reason: "the soak's end")
        }
        let statistics = pipeline.store.statistics
        result.leftAlive = [
            "resources": service.cachedResourceCount, "screens": OwnershipScenario.Screen.alive.withLock { $0 },
            "owner-held observers": OwnershipScenario.ItemsObserver.alive.withLock { $0 },
            "live-query observers": statistics.observers,
        ]

        // The slope after warm-up (the first fifth, at least 30 s when the run is long enough).
        result.warmUpSeconds = min(max(result.seconds / 5, 30), result.seconds / 2)
        let steady = result.samples.filter { $0.milliseconds / 1000 >= result.warmUpSeconds }
        result.slopeMegabytesPerMinute = Self.slope(steady) * 60_000
        result.firstMegabytes = steady.first?.megabytes ?? 0
        result.lastMegabytes = steady.last?.megabytes ?? 0

        console.line(
            String(
                format:
                    "%d rounds in %.0f s; resident memory after %.0f s of warm-up: %.1f → %.1f MB, slope %+.3f MB/min",
                result.rounds, result.seconds, result.warmUpSeconds, result.firstMegabytes, result.lastMegabytes,
                result.slopeMegabytesPerMinute))
        let roundFailures = Dictionary(grouping: quiet.failures, by: { $0 }).mapValues(\.count)
        for (promise, count) in roundFailures.sorted(by: { $0.key < $1.key }) {
            console.check(false, "in \(count) of \(result.rounds) rounds: \(promise)")
        }
        console.check(
            result.roundsOnFinalState == result.rounds,
            "every round's observers ended on the final state (\(result.roundsOnFinalState)/\(result.rounds))")
        console.check(
            result.leftAlive.values.allSatisfy { $0 == 0 },
            "nothing left alive at the end: \(result.leftAlive.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
        )
        console.check(
            result.slopeMegabytesPerMinute < 1.0,
            String(
                format: "no upward trend after warm-up (%+.3f MB/min, under +1 MB/min)", result.slopeMegabytesPerMinute)
        )
        return result
    }

    /// The least-squares slope of megabytes over milliseconds.
    static func slope(_ samples: [MemorySampler.Sample]) -> Double {
        guard samples.count > 1 else { return 0 }
        let n = Double(samples.count)
        let meanX = samples.map(\.milliseconds).reduce(0, +) / n
        let meanY = samples.map(\.megabytes).reduce(0, +) / n
        let covariance = samples.reduce(0) { $0 + ($1.milliseconds - meanX) * ($1.megabytes - meanY) }
        let variance = samples.reduce(0) { $0 + ($1.milliseconds - meanX) * ($1.milliseconds - meanX) }
        return variance == 0 ? 0 : covariance / variance
    }
}
