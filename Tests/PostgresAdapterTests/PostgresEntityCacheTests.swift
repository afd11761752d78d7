import EntityCacheKit
import Foundation
import PersistenceKit
import PostgresAdapter
import Testing
import TetherTesting
import TetherTestingTraits

@Suite(
    "PostgresEntityCache: the entity-cache conformance suite, and one cache shared by instances",
    PostgresTestServer.required, .needsProcessorTime, .timeLimit(minutes: 2))
struct PostgresEntityCacheTests {
    /// Runs `body` with a cache on a fresh schema, on a dispatch queue (the cache waits for the server there, as
    /// under `PersistentCache`); drops the schema afterwards.
    static func withCaches<T: Sendable>(
        _ count: Int = 1, _ body: @escaping @Sendable ([PostgresEntityCache]) throws -> T
    ) async throws -> T {
        let configuration = try PostgresTestServer.freshConfiguration()
        let caches = try (0..<count).map { _ in try PostgresEntityCache(configuration: configuration) }
        let result = await withCheckedContinuation { continuation in
            DispatchQueue(label: "tether.tests.entity-cache").async {
                continuation.resume(returning: Result { try body(caches) })
            }
        }
        for cache in caches { cache.close() }
        try await PostgresTestServer.dropSchema(of: configuration)
        return try result.get()
    }

    @Test("Conformance", arguments: EntityCacheConformance.checks)
    func conformance(_ check: EntityCacheCheck) async throws {
        let configuration = try PostgresTestServer.freshConfiguration()
        let cache = try PostgresEntityCache(configuration: configuration)
        try await check.run(on: cache)
        cache.close()
        try await PostgresTestServer.dropSchema(of: configuration)
    }

    @Test("Two instances on one cache see each other's entries; a 304 seen by one refreshes the timestamp for both")
    func sharedByInstances() async throws {
        try await Self.withCaches(2) { caches in
            let (first, second) = (caches[0], caches[1])
            let entity = CachedEntity(
                body: Data("{}".utf8), headers: [.init(name: "ETag", value: "\"7\"")],
                timestamp: Date(timeIntervalSince1970: 1_000))
            try first.writeEntity(entity, forKey: "https://api.example.com/items/7")
            #expect(try second.readEntity(forKey: "https://api.example.com/items/7") == entity)
            try second.updateEntityTimestamp(
                Date(timeIntervalSince1970: 2_000), forKey: "https://api.example.com/items/7")
            #expect(
                try first.readEntity(forKey: "https://api.example.com/items/7")?.timestamp
                    == Date(timeIntervalSince1970: 2_000))
            try second.removeEntity(forKey: "https://api.example.com/items/7")
            #expect(try first.readEntity(forKey: "https://api.example.com/items/7") == nil)
        }
    }

    @Test("A lost connection fails the call in flight with a typed error; the next call connects again")
    func reconnects() async throws {
        let configuration = try PostgresTestServer.freshConfiguration()
        let cache = try PostgresEntityCache(configuration: configuration)
        let entity = CachedEntity(body: Data("x".utf8), headers: [], timestamp: Date(timeIntervalSince1970: 1))
        try await Self.onQueue { try cache.writeEntity(entity, forKey: "k") }
        let terminated = try await PostgresTestServer.execute(
            """
            SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity
            WHERE query LIKE '%\(configuration.schema).tether_entities%' AND pid <> pg_backend_pid()
            """)
        #expect(terminated == ["true"], "the cache's connection was found and terminated")
        var outcomes: [Result<CachedEntity?, any Error>] = []
        for _ in 0..<2 {
            outcomes.append(await Self.onQueueResult { try cache.readEntity(forKey: "k") })
        }
        // The first read may find the connection already gone (and fail) or not yet noticed; the next one reads.
        if case .failure(let error) = outcomes[0] {
            #expect((error as? PersistenceError)?.kind == .ioError, "\(error)")
        }
        #expect(try outcomes.last?.get() == entity)
        cache.close()
        try await PostgresTestServer.dropSchema(of: configuration)
    }

    static func onQueue(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await onQueueResult(body).get()
    }

    static func onQueueResult<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async -> Result<T, any Error> {
        await withCheckedContinuation { continuation in
            DispatchQueue(label: "tether.tests.entity-cache").async {
                continuation.resume(returning: Result { try body() })
            }
        }
    }
}
