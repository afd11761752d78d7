import EntityCacheKit
import Foundation
import ResourceKit
import SQLiteAdapter
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

@Suite("ResourceKit with a SQLite persistent cache", .timeLimit(minutes: 1), .leakChecked)
struct ResourceCacheTests {
    final class Owner: Sendable {}

    static func service(_ transport: InMemoryTransport, cache: PersistentCache, expiration: Duration) -> Service {
        let service = Service(baseURL: "https://api.test", transport: transport)
        service.configure {
            $0.persistentCache = cache
            $0.expirationTime = expiration
        }
        return service
    }

    @Test("Only successful data is written; a 304 re-timestamps; a local override and a wipe remove the entry")
    func writeBack() async throws {
        try await TemporaryDirectory.with { directory in
            let storage = try SQLiteEntityCache(path: directory.file("cache.sqlite"))
            let cache = PersistentCache(storage)
            let transport = InMemoryTransport()
            transport.route("https://api.test/a", reply: .text("one", headers: ["ETag": "\"1\""]))
            transport.route("https://api.test/broken", reply: .status(500))
            let service = Self.service(transport, cache: cache, expiration: .seconds(30))
            let a = service.resource("/a")
            _ = await a.load().outcome
            _ = await service.resource("/broken").load().outcome
            await cache.flush()
            let written = try #require(try storage.readEntity(forKey: "https://api.test/a"))
            #expect(String(decoding: written.body, as: UTF8.self) == "one")
            #expect(written.headers.contains { $0.name == "ETag" && $0.value == "\"1\"" })
            #expect(try storage.readEntity(forKey: "https://api.test/broken") == nil, "an error is never cached")

            transport.route("https://api.test/a", reply: .status(304))
            _ = await a.load().outcome
            await cache.flush()
            let touched = try #require(try storage.readEntity(forKey: "https://api.test/a"))
            #expect(touched.timestamp > written.timestamp)
            #expect(touched.body == written.body)

            a.overrideLocalContent(with: "local")
            await cache.flush()
            #expect(try storage.readEntity(forKey: "https://api.test/a") == nil)
            transport.route("https://api.test/a", reply: .text("two"))
            _ = await a.load().outcome
            a.wipe()
            await cache.flush()
            #expect(try storage.readEntity(forKey: "https://api.test/a") == nil)
        }
    }

    @Test(
        "A mutation whose answer becomes the data writes that answer to the cache; a refused one leaves the entry; one that reloads leaves it to the reload"
    )
    func mutationWritesBack() async throws {
        try await TemporaryDirectory.with { directory in
            let storage = try SQLiteEntityCache(path: directory.file("cache.sqlite"))
            let cache = PersistentCache(storage)
            let transport = InMemoryTransport()
            transport.route(.get, "https://api.test/a", reply: .text("one", headers: ["ETag": "\"1\""]))
            transport.route(.put, "https://api.test/a", reply: .text("two", headers: ["ETag": "\"2\""]))
            transport.route(.patch, "https://api.test/a", reply: .text("no", status: 409))
            let service = Self.service(transport, cache: cache, expiration: .seconds(30))
            let a = service.resource("/a")
            _ = await a.load().outcome

            #expect(await a.mutate(.put, text: "two", onSuccess: .useResponse).outcome.error == nil)
            await cache.flush()
            let written = try #require(try storage.readEntity(forKey: "https://api.test/a"))
            #expect(String(decoding: written.body, as: UTF8.self) == "two", "the answer, as a load's is kept")
            #expect(written.headers.contains { $0.name == "ETag" && $0.value == "\"2\"" })

            #expect(await a.mutate(.patch, text: "x", onSuccess: .useResponse).outcome.error != nil)
            await cache.flush()
            let kept = try #require(try storage.readEntity(forKey: "https://api.test/a"))
            #expect(String(decoding: kept.body, as: UTF8.self) == "two", "a refusal changes nothing stored")

            // A restarted app shows the answer from the cache, with no request: loadIfNeeded() either waits for the
            // cache's read or, once it has landed, finds the data fresh and does nothing.
            let transport2 = InMemoryTransport()
            let restarted = Self.service(transport2, cache: cache, expiration: .seconds(3600)).resource("/a")
            _ = await restarted.loadIfNeeded()?.outcome
            try await eventually { restarted.latestData?.typedContent(as: String.self) == "two" }
            #expect(transport2.requests.isEmpty)
        }
    }

    @Test("Fresh cached data: newData(cache) and no request; stale: newData(cache), then a conditional request")
    func freshAndStale() async throws {
        try await TemporaryDirectory.with { directory in
            let cache = PersistentCache(try SQLiteEntityCache(path: directory.file("cache.sqlite")))
            let first = InMemoryTransport()
            first.route("https://api.test/a", reply: .text("cached", headers: ["ETag": "\"v1\""]))
            _ = await Self.service(first, cache: cache, expiration: .seconds(30)).resource("/a").load().outcome
            await cache.flush()

            let fresh = InMemoryTransport()
            let freshResource = Self.service(fresh, cache: cache, expiration: .seconds(3600)).resource("/a")
            let outcome = try #require(await freshResource.loadIfNeeded()?.outcome)
            #expect(outcome.entity?.typedContent(as: String.self) == "cached")
            #expect(fresh.requests.isEmpty, "fresh cached data must not be requested")

            let stale = InMemoryTransport()
            stale.route("https://api.test/a", reply: .status(304))
            let staleResource = Self.service(stale, cache: cache, expiration: .zero).resource("/a")
            let events = LockedValue<[ResourceEvent]>([])
            let owner = Owner()
            staleResource.addObserver(owner: owner) { _, event in events.withLock { $0.append(event) } }
            _ = await staleResource.loadIfNeeded()?.outcome
            let seen = events.withLock { $0 }
            #expect(seen.contains(.newData(.cache)))
            #expect(seen.last == .notModified, "\(seen)")
            #expect(stale.requests.count == 1)
            #expect(stale.requests.first?.headers["If-None-Match"] == "\"v1\"")
            withExtendedLifetime(owner) {}
        }
    }

    /// An entity cache whose reads wait until released.
    final class GatedCache: EntityCache {
        let base = InMemoryEntityCache()
        let open = LockedValue(false)
        func readEntity(forKey key: String) throws -> CachedEntity? {
            while !open.withLock({ $0 }) { usleep(1000) }
            return try base.readEntity(forKey: key)
        }
        func writeEntity(_ entity: CachedEntity, forKey key: String) throws {
            try base.writeEntity(entity, forKey: key)
        }
        func updateEntityTimestamp(_ timestamp: Date, forKey key: String) throws {
            try base.updateEntityTimestamp(timestamp, forKey: key)
        }
        func removeEntity(forKey key: String) throws { try base.removeEntity(forKey: key) }
        func removeAllEntities() throws { try base.removeAllEntities() }
    }

    @Test("A cache hit is ignored when local data was set while it was being read")
    func hitIgnoredAfterOverride() async throws {
        let gated = GatedCache()
        try gated.base.writeEntity(
            CachedEntity(body: Data("old".utf8), headers: [], timestamp: Date()), forKey: "https://api.test/a")
        let cache = PersistentCache(gated)
        let resource = Self.service(InMemoryTransport(), cache: cache, expiration: .seconds(30)).resource("/a")
        let events = LockedValue<[ResourceEvent]>([])
        let owner = Owner()
        resource.addObserver(owner: owner) { _, event in events.withLock { $0.append(event) } }  // starts the read
        resource.overrideLocalContent(with: "mine")
        gated.open.withLock { $0 = true }
        await resource.cacheChecked()  // the hit has been applied or ignored by now
        #expect(resource.typedContent(as: String.self) == "mine")
        #expect(!events.withLock { $0 }.contains(.newData(.cache)))
        withExtendedLifetime(owner) {}
    }

    @Test("loadIfNeeded() during the cache read: one request for every caller; cancelled, it never becomes the load")
    func deferredLoad() async throws {
        let gated = GatedCache()
        let cache = PersistentCache(gated)
        let transport = InMemoryTransport()
        transport.route("https://api.test/a", reply: .text("network"))
        let resource = Self.service(transport, cache: cache, expiration: .seconds(30)).resource("/a")
        let first = try #require(resource.loadIfNeeded())
        let others = (0..<20).compactMap { _ in resource.loadIfNeeded() }
        #expect(others.allSatisfy { $0 === first }, "every caller during the read gets the same request")
        first.cancel()
        // A caller after the cancellation, still during the read, gets a new request, not the cancelled one.
        let load = try #require(resource.loadIfNeeded())
        #expect(load !== first)
        gated.open.withLock { $0 = true }
        #expect(try await load.outcome.get().typedContent(as: String.self) == "network")
        #expect(transport.requests.count == 1)
    }
}
