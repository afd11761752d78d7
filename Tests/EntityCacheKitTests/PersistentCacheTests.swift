import EntityCacheKit
import Foundation
import InMemoryLogging
import Logging
import Testing
import TetherConcurrency
import TetherTestingTraits

@Suite("PersistentCache: a work queue of its own, in order, failures logged", .leakChecked)
struct PersistentCacheTests {
    @Test("Operations run in the order asked, whatever the caller; reads see every earlier write")
    func ordering() async {
        let storage = InMemoryEntityCache()
        let cache = PersistentCache(storage)
        let entity = CachedEntity(
            body: Data("x".utf8), headers: [.init(name: "ETag", value: "\"1\"")],
            timestamp: Date(timeIntervalSince1970: 5))
        cache.write(entity, forKey: "k")
        cache.updateTimestamp(Date(timeIntervalSince1970: 9), forKey: "k")
        #expect(await cache.read("k")?.timestamp == Date(timeIntervalSince1970: 9))
        cache.remove(forKey: "k")
        #expect(await cache.read("k") == nil)
        for index in 0..<100 { cache.write(entity, forKey: "k\(index)") }
        cache.removeAll()
        await cache.flush()
        #expect(storage.keys.isEmpty)
        #expect(cache.key(for: URL(string: "https://example.com/a?b=1")!) == "https://example.com/a?b=1")
    }

    struct Failing: EntityCache {
        struct Broken: Error {}
        func readEntity(forKey key: String) throws -> CachedEntity? { throw Broken() }
        func writeEntity(_ entity: CachedEntity, forKey key: String) throws { throw Broken() }
        func updateEntityTimestamp(_ timestamp: Date, forKey key: String) throws { throw Broken() }
        func removeEntity(forKey key: String) throws { throw Broken() }
        func removeAllEntities() throws { throw Broken() }
    }

    @Test("A failing cache is logged and counted, never thrown; passwords in keys are redacted in the log")
    func failures() async {
        let logs = InMemoryLogHandler()
        let cache = PersistentCache(Failing(), logger: Logger(label: "test") { _ in logs })
        #expect(await cache.read("https://user:secret@example.com/x") == nil)
        cache.write(CachedEntity(body: Data(), headers: [], timestamp: Date()), forKey: "k")
        await cache.flush()
        #expect(cache.failureCount == 2)
        let lines = logs.entries.map { "\($0.message) \($0.metadata)" }
        #expect(lines.count == 2)
        #expect(!lines.joined().contains("secret"))
    }

    @Test(
        "A cache that fails on every operation (a full disk) logs one warning per kind per interval, counting the rest")
    func throttledWarnings() async {
        let logs = InMemoryLogHandler()
        let clock = LockedValue(ContinuousClock.now)
        let cache = PersistentCache(
            Failing(), logger: Logger(label: "test") { _ in logs }, warningInterval: .seconds(60),
            now: { clock.withLock { $0 } }, key: { $0.absoluteString })
        let entity = CachedEntity(body: Data(), headers: [], timestamp: Date())
        for index in 0..<1000 { cache.write(entity, forKey: "k\(index)") }
        cache.remove(forKey: "k0")
        await cache.flush()
        #expect(cache.failureCount == 1001, "every failure is counted")
        #expect(logs.entries.count == 2, "one line for the writes, one for the remove: \(logs.entries.map(\.message))")
        clock.withLock { $0 = $0.advanced(by: .seconds(61)) }
        cache.write(entity, forKey: "late")
        await cache.flush()
        #expect(logs.entries.count == 3)
        #expect(logs.entries.last?.metadata["held_back"]?.description == "999 like it since the last warning")
    }

    @Test("The key function can opt a resource out")
    func optOut() {
        let cache = PersistentCache(InMemoryEntityCache()) { url in
            url.path.hasPrefix("/private") ? nil : url.absoluteString
        }
        #expect(cache.key(for: URL(string: "https://x.test/private/a")!) == nil)
        #expect(cache.key(for: URL(string: "https://x.test/public/a")!) != nil)
    }
}
