/// Where a resource's loading stands: its one persistent-cache read, and the load whose outcome will update it.
///
/// Every state, and who moves it (all under the resource's lock):
///
/// ```
///                   startCacheCheck(hasCache: false)
///   .cacheUnread ───────────────────────────────────────────────► .idle ◄──────────┐
///        │ startCacheCheck(hasCache: true)                            │ begin(_:)     │ resolve(_:), wipe()
///        ▼                                                            ▼               │
///   .readingCache(waiters, deferred, load) ── finishCacheCheck() ──► .loading(load) ─┘
///        ▲  │ begin(_:) (a forced load during the read), resolve(_:), wipe(), defer(_:)
///        └──┘
/// ```
///
/// - `cacheUnread`: nothing has asked for the data yet; no load can be in flight (every load starts the read).
/// - `readingCache`: the cache read is in progress. Callers of `cacheChecked()` wait in `waiters`; `loadIfNeeded`
///   hands every caller one `deferred` request, decided when the read ends; a forced `load()` may already be in
///   flight (`load`), revalidating with the cached ETag once the read is over.
/// - `idle`: the read has ended (or there is no cache) and no load is in flight.
/// - `loading`: the read has ended and `load` is in flight.
package struct LoadState: Sendable {
    /// A load in flight: the one whose outcome will update the resource.
    package struct Load: Sendable {
        package let request: Request
        /// The resource's invalidation count when the load began: an invalidation since makes its data stale at once.
        package let invalidations: UInt64

        package init(request: Request, invalidations: UInt64) {
            self.request = request
            self.invalidations = invalidations
        }
    }

    package enum Phase: Sendable {
        case cacheUnread
        case readingCache(waiters: [@Sendable () -> Void], deferred: Request?, load: Load?)
        case idle
        case loading(Load)
    }

    package private(set) var phase = Phase.cacheUnread

    package init() {}

    /// Whether the cache read has ended (or there was none to make).
    package var isCacheChecked: Bool {
        switch phase {
        case .idle, .loading: true
        case .cacheUnread, .readingCache: false
        }
    }

    /// Whether the cache read is in progress.
    package var isReadingCache: Bool {
        if case .readingCache = phase { true } else { false }
    }

    /// The load in flight, if any.
    package var load: Load? {
        switch phase {
        case .readingCache(_, _, let load): load
        case .loading(let load): load
        case .cacheUnread, .idle: nil
        }
    }

    /// The request `loadIfNeeded` hands every caller while the cache is read.
    package var deferred: Request? {
        if case .readingCache(_, let deferred, _) = phase { deferred } else { nil }
    }

    // MARK: Transitions

    /// `cacheUnread` → `readingCache` (or straight to `idle` when there is no cache). True when a read must begin.
    package mutating func startCacheCheck(hasCache: Bool) -> Bool {
        guard case .cacheUnread = phase else { return false }
        phase = hasCache ? .readingCache(waiters: [], deferred: nil, load: nil) : .idle
        return hasCache
    }

    /// `readingCache` → `idle` or `loading`; returns the waiters to run (outside the lock).
    package mutating func finishCacheCheck() -> [@Sendable () -> Void] {
        guard case .readingCache(let waiters, _, let load) = phase else { return [] }
        phase = load.map { .loading($0) } ?? .idle
        return waiters
    }

    /// Adds `waiter` for the end of the cache read; false (nothing added) when the read is not in progress.
    package mutating func addCacheWaiter(_ waiter: @escaping @Sendable () -> Void) -> Bool {
        guard case .readingCache(var waiters, let deferred, let load) = phase else { return false }
        waiters.append(waiter)
        phase = .readingCache(waiters: waiters, deferred: deferred, load: load)
        return true
    }

    /// Sets (or clears) the request `loadIfNeeded` hands out during the read; nothing outside the read.
    package mutating func setDeferred(_ request: Request?) {
        guard case .readingCache(let waiters, _, let load) = phase else { return }
        phase = .readingCache(waiters: waiters, deferred: request, load: load)
    }

    /// Makes `load` the load in flight, superseding any other: `idle`/`loading` → `loading`; during the read it
    /// waits there.
    package mutating func begin(_ load: Load) {
        switch phase {
        case .readingCache(let waiters, let deferred, _):
            phase = .readingCache(waiters: waiters, deferred: deferred, load: load)
        case .cacheUnread, .idle, .loading:
            phase = .loading(load)
        }
    }

    /// Ends the load made with `request`, if it is still the one in flight: `loading` → `idle` (or the read goes on
    /// without it). Returns the load, or nil when it was superseded or wiped.
    package mutating func resolve(_ request: Request) -> Load? {
        guard let load, load.request === request else { return nil }
        endLoad()
        return load
    }

    /// Forgets the load in flight (a wipe cancels it).
    package mutating func endLoad() {
        switch phase {
        case .readingCache(let waiters, let deferred, _):
            phase = .readingCache(waiters: waiters, deferred: deferred, load: nil)
        case .loading:
            phase = .idle
        case .cacheUnread, .idle:
            break
        }
    }
}

/// What `loadIfNeeded` (and a load about to start) decides under the lock.
enum LoadDecision {
    /// Return this request: the load in flight, or the one every caller shares.
    case join(Request)
    /// The data is up to date: nothing to load.
    case upToDate
    /// Nothing decided here: go on (start a load, or take the slower path).
    case proceed
}
