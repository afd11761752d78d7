import Dispatch
public import Logging
import PersistenceKit
import TetherConcurrency

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An ``EntityCache`` with a key function and a work queue of its own: what a resource configuration points at.
///
/// Every operation runs on the queue, one at a time, in the order asked: a write then a remove for one key leave no
/// entry, whatever the threads. Callers never wait for the cache (reads are `async`). The cache is disposable:
/// a failing operation is logged as a warning and counted in ``failureCount``, never surfaced to observers.
///
/// ```swift
/// let cache = PersistentCache(try SQLiteEntityCache(path: "cache.sqlite"))
/// service.configure { $0.persistentCache = cache }
/// service.configure("/session/**") { $0.persistentCache = nil }   // never cache these
/// ```
public final class PersistentCache: Sendable {
    /// The storage.
    public let storage: any EntityCache
    let keyFunction: @Sendable (URL) -> String?
    let queue: DispatchQueue
    let logger: Logger
    let failures = LockedValue(0)
    private let throttle: LockedValue<WarningThrottle>
    private let now: @Sendable () -> ContinuousClock.Instant

    /// Makes a cache over `storage`. `key` names the entry for a resource's URL; nil opts that resource out. The
    /// default is the whole URL, so one file can serve several services. Failures of one kind (a full disk, say)
    /// are logged at most once per `warningInterval`, each line counting those held back since.
    public convenience init(
        _ storage: any EntityCache, logger: Logger = Logger(label: "tether.persistence.cache"),
        warningInterval: Duration = .seconds(60), key: @escaping @Sendable (URL) -> String? = { $0.absoluteString }
    ) {
        self.init(storage, logger: logger, warningInterval: warningInterval, now: { .now }, key: key)
    }

    /// As the public initializer, with the monotonic clock the warning interval is measured on.
    package init(
        _ storage: any EntityCache, logger: Logger, warningInterval: Duration,
        now: @escaping @Sendable () -> ContinuousClock.Instant, key: @escaping @Sendable (URL) -> String?
    ) {
        self.storage = storage
        self.keyFunction = key
        self.logger = logger
        self.throttle = LockedValue(WarningThrottle(interval: warningInterval))
        self.now = now
        self.queue = DispatchQueue(label: "tether.persistence.cache")
        LifetimeTracking.made(self, "persistent cache")
    }

    /// The key for `url`, or nil when the resource is not cached.
    public func key(for url: URL) -> String? {
        keyFunction(url)
    }

    /// The entry for `key`, read on the cache's queue after every operation asked for before; nil when there is
    /// none or the read failed (logged).
    public func read(_ key: String) async -> CachedEntity? {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                continuation.resume(returning: attempt("read", key) { try storage.readEntity(forKey: key) } ?? nil)
            }
        }
    }

    /// Stores `entity` for `key`, later, on the cache's queue.
    public func write(_ entity: CachedEntity, forKey key: String) {
        queue.async { [self] in attempt("write", key) { try storage.writeEntity(entity, forKey: key) } }
    }

    /// Sets the timestamp of the entry for `key`, later, on the cache's queue.
    public func updateTimestamp(_ timestamp: Date, forKey key: String) {
        queue.async { [self] in
            attempt("update timestamp", key) { try storage.updateEntityTimestamp(timestamp, forKey: key) }
        }
    }

    /// Removes the entry for `key`, later, on the cache's queue.
    public func remove(forKey key: String) {
        queue.async { [self] in attempt("remove", key) { try storage.removeEntity(forKey: key) } }
    }

    /// Removes every entry, later, on the cache's queue.
    public func removeAll() {
        queue.async { [self] in attempt("remove all", "*") { try storage.removeAllEntities() } }
    }

    /// Returns when every operation asked for before has run.
    public func flush() async {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume() }
        }
    }

    /// How many operations have failed (each was logged).
    public var failureCount: Int {
        failures.withLock { $0 }
    }

    @discardableResult
    private func attempt<T>(_ operation: String, _ key: String, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch {
            failures.withLock { $0 += 1 }
            let kind =
                "\(operation) \((error as? PersistenceError)?.kind.name ?? String(reflecting: type(of: error)))"
            let instant = now()
            guard let heldBack = throttle.withLock({ $0.admit(kind, now: instant) }) else { return nil }
            var metadata: Logger.Metadata = [
                "operation": "\(operation)", "key": "\(Self.redacted(key))", "error": "\(error)",
            ]
            if heldBack > 0 { metadata["held_back"] = "\(heldBack) like it since the last warning" }
            logger.warning("cache operation failed; the cache is disposable, carrying on", metadata: metadata)
            return nil
        }
    }

    /// The key with any URL password replaced, for logs.
    static func redacted(_ key: String) -> String {
        guard var components = URLComponents(string: key), components.password != nil else { return key }
        components.password = "redacted"
        return components.string ?? key
    }
}
