import EntityCacheKit
import Logging
import TetherConcurrency
import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Siesta's persistent-cache behaviour. A resource reads its cache entry once, lazily (its first observer or the
/// first read of ``Resource/latestData``); a hit becomes ``NewDataSource/cache`` data unless data arrived meanwhile.
/// Loads wait for that read, so a fresh entry saves the request and a stale one lends its ETag.
extension Resource {
    /// The cache and key for this resource's loads, if it is cached.
    var cacheSlot: (cache: PersistentCache, key: String)? {
        guard let url, let cache = configuration(for: .get).persistentCache, let key = cache.key(for: url) else {
            return nil
        }
        return (cache, key)
    }

    /// Starts the cache read if it has not begun (and marks it done at once when there is no cache).
    func startCacheCheckIfNeeded() {
        // Cheap when done: one lock. A resource without a cache goes straight to done, never through reading, so
        // that its loads never take the deferred path.
        guard state.withLock({ if case .cacheUnread = $0.loading.phase { true } else { false } }) else { return }
        let slot = cacheSlot
        let begin = state.withLock { $0.loading.startCacheCheck(hasCache: slot != nil) }
        guard begin, let (cache, key) = slot else { return }
        let changesBefore = state.withLock { $0.dataChanges }
        let pipeline = configuration(for: .get).pipeline
        Task { [self] in
            let cached = await cache.read(key)
            if let cached {
                applyCacheHit(cached, changesBefore: changesBefore, pipeline: pipeline, cache: cache, key: key)
            }
            finishCacheCheck()
        }
    }

    /// Shows a cache hit, unless the data changed while it was read or the pipeline rejects it.
    private func applyCacheHit(
        _ cached: CachedEntity, changesBefore: UInt64, pipeline: Pipeline, cache: PersistentCache, key: String
    ) {
        let raw = Entity(
            content: cached.body, headers: HTTPHeaders(cached.headers.map { ($0.name, $0.value) }),
            timestamp: cached.timestamp)
        let entity: Entity
        switch pipeline.process(raw) {
        case .success(let processed):
            entity = processed
        case .failure(let failure):
            core.logging.stateChanges.warning(
                "cached data rejected by the pipeline; removing it",
                metadata: ["url": "\(urlString)", "stage": "\(failure.stage)", "error": "\(failure.error)"])
            cache.remove(forKey: key)
            return
        }
        let (applied, event) = state.withLock { state -> (Bool, ResourceEvent?) in
            guard state.dataChanges == changesBefore, state.confirmedData == nil else { return (false, nil) }
            state.dataReceived = nil  // persisted: its age is the wall clock's, and a future timestamp is stale
            return (true, state.confirm(entity, posting: .newData(.cache)))
        }
        core.logging.stateChanges.debug(
            applied ? "data from the persistent cache" : "cache hit ignored: newer data arrived meanwhile",
            metadata: ["url": "\(urlString)"])
        if let event { showLayers(posting: event) }
        if applied { deliverEvents() }
    }

    private func finishCacheCheck() {
        let waiters = state.withLock { $0.loading.finishCacheCheck() }
        for waiter in waiters { waiter() }
    }

    /// Whether the cache check has ended; if not, `then` runs when it does (and the check is started).
    func whenCacheChecked(then continuation: @escaping @Sendable () -> Void) -> Bool {
        startCacheCheckIfNeeded()
        return state.withLock { !$0.loading.addCacheWaiter(continuation) }
    }

    /// Waits for the cache check to end: by then a hit has been shown or ignored (tests wait on it).
    package func cacheChecked() async {
        await withCheckedContinuation { continuation in
            if whenCacheChecked(then: { continuation.resume() }) { continuation.resume() }
        }
    }

    // MARK: Writing back

    /// After a load's outcome is applied: new data is written, a 304 re-timestamps the entry.
    func writeBack(_ outcome: RequestOutcome, raw: CachedEntity?, at now: Date) {
        guard let (cache, key) = cacheSlot else { return }
        switch outcome {
        case .newData:
            if let raw { cache.write(raw, forKey: key) }
        case .notModified:
            cache.updateTimestamp(now, forKey: key)
        case .failure:
            break
        }
    }

    /// After a local override or a wipe: the entry no longer describes the data.
    func removeCacheEntry() {
        guard let (cache, key) = cacheSlot else { return }
        cache.remove(forKey: key)
    }
}
