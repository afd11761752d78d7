import EntityCacheKit
import Foundation
import LiveQueryKit
import PipelineKit
import ResourceKit
import TetherConcurrency

/// Scenario 4 — the persistent cache: on a second run the store's list shows the last run's data at once, before
/// any network answer, and a refresh revalidates it with its ETag: 304 Not Modified.
struct PersistenceScenario {
    struct Result: Sendable {
        /// Whether the cache held the list when the scenario began (a previous run wrote it).
        var cacheHit = false
        /// From observing to the cached data, when there was a hit.
        var cacheMilliseconds: Double?
        /// From observing to the network's answer.
        var networkMilliseconds = 0.0
        /// "304 Not Modified" or "200 OK".
        var networkAnswer = ""
        /// The events, in order.
        var events: [String] = []
        /// Documents the store already held (from the previous run's back-pressure scenario).
        var storedDocuments = 0
        /// Where the data lives.
        var persistence = ""
    }

    let pipeline: AssembledPipeline
    let service: ResourceKit.Service
    let console: Console

    final class Screen: Sendable {}

    func run() async throws -> Result {
        var result = Result()
        result.persistence = pipeline.persistence.summary
        result.storedDocuments = try await pipeline.store.collection("items").findAll().exec().count
        let resource = service.resource("/stores/abc123/items")
        let clock = ContinuousClock()
        let start = clock.now
        let events = LockedValue<[(String, Duration)]>([])
        let screen = Screen()
        resource.addObserver(owner: screen) { _, event in
            events.withLock { $0.append(("\(event)", clock.now - start)) }
        }
        // Wait briefly for the cache's answer (it is read when the first observer arrives).
        while events.withLock({ !$0.contains { $0.0 == "newData(cache)" } }), clock.now - start < .milliseconds(500) {
            if pipeline.persistentCache == nil { break }
            try await Task.sleep(for: .milliseconds(1))
        }
        // A screen refreshes on opening, as an app would: a conditional request when data is cached.
        let outcome = await resource.load().outcome
        result.networkMilliseconds = (clock.now - start).milliseconds
        let seen = events.withLock { $0 }
        result.events = seen.map(\.0)
        if let hit = seen.first(where: { $0.0 == "newData(cache)" }) {
            result.cacheHit = true
            result.cacheMilliseconds = hit.1.milliseconds
        }
        result.networkAnswer =
            seen.contains { $0.0 == "notModified" } ? "304 Not Modified" : (outcome.entity != nil ? "200 OK" : "failed")
        await pipeline.persistentCache?.flush()
        withExtendedLifetime(screen) {}

        console.line("persistence: \(result.persistence)")
        if result.cacheHit, let cached = result.cacheMilliseconds {
            console.line(
                String(
                    format: "cached list shown after %.1f ms, before the network answered (%.1f ms): %@",
                    cached, result.networkMilliseconds, result.networkAnswer))
            console.check(
                result.events.firstIndex(of: "newData(cache)") ?? .max < result.events.firstIndex(of: "requested")
                    ?? .max,
                "the cached data arrived before the request went out")
            console.check(
                result.networkAnswer == "304 Not Modified", "the refresh revalidated the cached data: 304 Not Modified")
        } else {
            console.line(
                "no cached list yet (a first run): fetched from the network (\(result.networkAnswer)) and stored")
            console.line("run the sample again to see the cached data at once, then a 304 revalidation")
            console.check(outcome.entity != nil, "the list was fetched")
        }
        if result.storedDocuments > 0 {
            console.line("the store kept \(result.storedDocuments) documents from the last run")
        }
        return result
    }
}
