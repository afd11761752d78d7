import TetherConcurrency

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An ``EntityCache`` in a dictionary: for tests, and to share data between services in one process. Entries last
/// as long as the cache object.
public final class InMemoryEntityCache: EntityCache {
    let entries = LockedValue<[String: CachedEntity]>([:])

    /// Makes an empty cache.
    public init() {
        LifetimeTracking.made(self, "in-memory entity cache")
    }

    /// The entry for `key`, or nil.
    public func readEntity(forKey key: String) throws -> CachedEntity? {
        entries.withLock { $0[key] }
    }

    /// Stores `entity` for `key`.
    public func writeEntity(_ entity: CachedEntity, forKey key: String) throws {
        entries.withLock { $0[key] = entity }
    }

    /// Sets the timestamp of the entry for `key`, if there is one.
    public func updateEntityTimestamp(_ timestamp: Date, forKey key: String) throws {
        entries.withLock { $0[key]?.timestamp = timestamp }
    }

    /// Removes the entry for `key`.
    public func removeEntity(forKey key: String) throws {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    /// Removes every entry.
    public func removeAllEntities() throws {
        entries.withLock { $0.removeAll() }
    }

    /// The keys with an entry, sorted.
    public var keys: [String] {
        entries.withLock { $0.keys.sorted() }
    }
}
