import EntityCacheKit
import Logging
import Synchronization
import TetherClock
import TetherConcurrency
import TransportKit

extension Resource {
    /// Loads the resource if it needs it: returns the load already in flight (so a hundred callers cause one
    /// request), nothing when the data is up to date (see ``isUpToDate``), and otherwise starts a load.
    @discardableResult
    public func loadIfNeeded() -> Request? {
        // The fast path: one lock, no allocation.
        let generation = core.configurationGeneration.load(ordering: .acquiring)
        let (now, elapsed) = (core.timeSource.now, core.timeSource.elapsed)
        let fast = state.withLock { state -> LoadDecision in
            guard state.loading.isCacheChecked else { return .proceed }
            if let load = state.loading.load { return .join(load.request) }
            // Borrowed from the cache's box, not copied: a copy retains and releases every field of it.
            guard let cached = state.getConfiguration, cached.generation == generation else { return .proceed }
            return state.isUpToDate(now: now, elapsed: elapsed, configuration: cached.configuration)
                ? .upToDate : .proceed
        }
        switch fast {
        case .join(let request):
            core.logging.staleness.trace("load in flight: joining it", metadata: ["url": "\(urlString)"])
            return request
        case .upToDate:
            core.logging.staleness.trace("up to date: not loading", metadata: ["url": "\(urlString)"])
            return nil
        case .proceed:
            break
        }
        if let deferred = loadAfterCacheCheck() { return deferred }
        return startLoad(onlyIfNeeded: true)
    }

    /// While the persistent-cache read is in progress, `loadIfNeeded` returns one request for every caller, which
    /// decides when the read ends: fresh cached data completes it with no request sent; otherwise it follows the
    /// load (conditional, with the cached ETag). Nil when the read has already ended.
    private func loadAfterCacheCheck() -> Request? {
        startCacheCheckIfNeeded()
        // The request every caller gets is the load's own request, made now and started (or completed) later.
        let prepared = prepareLoadRequest()
        let (deferred, isNew) = state.withLock { state -> (Request?, Bool) in
            guard state.loading.isReadingCache else { return (nil, false) }
            // One cancelled while it waited is over; later callers get a new one.
            if let deferred = state.loading.deferred, !deferred.isCompleted { return (deferred, false) }
            state.loading.setDeferred(prepared.request)
            return (prepared.request, true)
        }
        guard let deferred else { return nil }
        guard isNew else { return deferred }
        let decide: @Sendable () -> Void = { [self] in
            state.withLock { $0.loading.setDeferred(nil) }
            // Fresh cached data completes it with no request; otherwise it becomes the load (or joins one).
            if startLoad(onlyIfNeeded: true, prepared: prepared) == nil {
                deferred.complete(with: currentOutcome())
            }
        }
        if whenCacheChecked(then: decide) { decide() }
        return deferred
    }

    /// The resource's state as a request outcome: its data, or its error.
    private func currentOutcome() -> RequestOutcome {
        state.withLock { state in
            if let data = state.latestData { return .newData(data) }
            if let error = state.latestError { return .failure(error) }
            return .notModified(nil)
        }
    }

    /// Loads the resource now, whatever its state. A load already in flight is superseded: its outcome no longer
    /// touches the resource. The returned request completes after the resource's state and observers are updated.
    @discardableResult
    public func load() -> Request {
        // Never nil: only `onlyIfNeeded` loads decline.
        startLoad(onlyIfNeeded: false)
            ?? Request(method: .get, url: urlString, timeSource: core.timeSource, resolve: nil)
    }

    /// Makes `request`'s outcome the resource's, as if it were a load: a load in flight is superseded, observers
    /// get ``ResourceEvent/requested`` now and the outcome's event when it ends. `request` is started if it has
    /// not been. Returns the load, which completes after the resource's state and observers are updated; cancelling
    /// it cancels `request` (unless something else follows that too).
    ///
    /// ```swift
    /// let save = profile.request(.put, json: edited)
    /// profile.load(using: save)   // the server's answer to the PUT is the profile's new data
    /// ```
    @discardableResult
    public func load(using request: Request) -> Request {
        // Never nil: a forced load never declines.
        startLoad(onlyIfNeeded: false, following: request) ?? request
    }

    /// Makes the data stale: the next ``loadIfNeeded()`` loads, and a load in flight now brings data that is
    /// already stale. Sends no event.
    public func invalidate() {
        state.withLock { state in
            state.invalidated = true
            state.invalidations &+= 1
        }
        core.logging.staleness.debug("invalidated", metadata: ["url": "\(urlString)"])
    }

    /// Returns the resource to its freshly created state: cancels every request (their outcomes never touch the
    /// resource afterwards), clears data, error and invalidation, and sends ``ResourceEvent/newData(_:)`` with
    /// ``NewDataSource/wipe``. Observers stay.
    public func wipe() {
        let (requests, released) = state.withLock {
            state -> ([Request], (Entity?, ResourceError?, OptimisticLayers?)) in
            let requests = state.requests.map(\.request)
            state.requests.removeAll()
            state.loading.endLoad()
            let released = (state.latestData, state.latestError.take(), state.optimistic.take())
            _ = state.confirm(nil, posting: .newData(.wipe))  // no layers now: posted at once
            state.invalidated = false
            state.invalidations &+= 1
            return (requests, released)
        }
        removeCacheEntry()
        withExtendedLifetime(released) {}  // the replaced values are released here, outside the lock
        core.logging.stateChanges.debug(
            "wiped", metadata: ["url": "\(urlString)", "cancelledRequests": "\(requests.count)"])
        deliverEvents()
        for request in requests { request.cancel() }
    }

    /// Replaces the data without touching the network: clears the error and sends ``ResourceEvent/newData(_:)``
    /// with ``NewDataSource/localOverride``. Loads in flight carry on (and replace it when they succeed); the data
    /// counts as up to date from its timestamp — an earlier ``invalidate()`` included — so call ``invalidate()``
    /// after it if the server should be asked again.
    public func overrideLocalData(with entity: Entity) {
        let (now, elapsed) = (core.timeSource.now, core.timeSource.elapsed)
        let (released, event) = state.withLock { state -> ((Entity?, ResourceError?), ResourceEvent?) in
            let released = (state.confirmedData, state.latestError.take())
            state.dataReceived = ResourceState.monotonic(entity.timestamp, now: now, elapsed: elapsed)
            state.invalidated = false  // fresh data, from its timestamp, as a load's would be
            return (released, state.confirm(entity, posting: .newData(.localOverride)))
        }
        removeCacheEntry()
        withExtendedLifetime(released) {}  // the replaced values are released here, outside the lock
        if let event { showLayers(posting: event) }
        core.logging.stateChanges.debug("local override", metadata: ["url": "\(urlString)"])
        deliverEvents()
    }

    /// Replaces the content of the data (keeping its headers; a new entity when there is none) with `content`,
    /// timestamped now (see ``overrideLocalData(with:)``).
    public func overrideLocalContent(with content: any Sendable) {
        var entity = latestData ?? Entity(content: content, timestamp: core.timeSource.now)
        entity.content = content
        entity.timestamp = core.timeSource.now
        overrideLocalData(with: entity)
    }

    /// After `delay` (at once when zero), cancels the resource's loads if it has no observers then; then calls
    /// `completion`. For a view that goes away before its data arrives: nobody is left to want the response.
    public func cancelLoadIfUnobserved(
        afterDelay delay: Duration = .zero, then completion: (@Sendable () -> Void)? = nil
    ) {
        guard delay > .zero else {
            cancelLoadsIfUnobserved()
            completion?()
            return
        }
        let timeSource = core.timeSource
        Task { [self] in
            try? await timeSource.sleep(for: delay)
            cancelLoadsIfUnobserved()
            completion?()
        }
    }

    private func cancelLoadsIfUnobserved() {
        guard !hasObservers else { return }
        let loads = state.withLock { $0.requests.filter(\.isLoad).map(\.request) }
        if !loads.isEmpty {
            core.logging.network.debug(
                "cancelling loads: no observers", metadata: ["url": "\(urlString)", "loads": "\(loads.count)"])
        }
        for load in loads { load.cancel() }
    }

    // MARK: The mechanism

    /// A load's request, made before the load begins, and the box for its raw body (when there is a cache).
    struct PreparedLoad: Sendable {
        let request: Request
        let capture: LockedValue<CachedEntity?>?

        var parts: (Request, LockedValue<CachedEntity?>?) { (request, capture) }
    }

    /// Makes a load's request: its outcome is applied to the resource by ``resolveLoad(_:_:raw:)`` — unless it
    /// never becomes the resource's load, in which case it passes through untouched.
    func prepareLoadRequest() -> PreparedLoad {
        // The raw body of new data, kept for the persistent cache (only when there is one).
        let capture = cacheSlot == nil ? nil : LockedValue<CachedEntity?>(nil)
        let request = Request(
            method: .get, url: urlString, timeSource: core.timeSource,
            resolve: { [self] request, outcome in resolveLoad(request, outcome, raw: capture?.withLock { $0.take() }) },
            progressInterval: configuration(for: .get).progressReportingInterval)
        // Its progress reaches the observers while it is the resource's load. Weakly: a request made for a load
        // that turns out not to be needed is dropped without completing.
        request.onProgress { [self, weak request] progress in
            if let request { loadProgressed(request, to: progress) }
        }
        return PreparedLoad(request: request, capture: capture)
    }

    /// Starts a load, deciding under the lock, so that concurrent callers agree: with `onlyIfNeeded`, returns the
    /// load in flight, or nil when up to date, instead of starting one. With `following`, the load sends nothing of
    /// its own: that request's outcome becomes the load's (see ``load(using:)``).
    func startLoad(onlyIfNeeded: Bool, prepared: PreparedLoad? = nil, following: Request? = nil) -> Request? {
        startCacheCheckIfNeeded()
        let configuration = configuration(for: .get)
        let now = core.timeSource.now
        let (request, capture) = (prepared ?? prepareLoadRequest()).parts
        var awaitsCache = false
        var etag: String?
        let decision = state.withLock { state -> LoadDecision in
            awaitsCache = state.loading.isReadingCache
            // A prepared request cancelled while it waited is over: it must not become the load.
            if let prepared, prepared.request.isCompleted { return .join(prepared.request) }
            if onlyIfNeeded {
                if let load = state.loading.load {
                    // A prepared request that finds a load in flight follows it.
                    if let prepared, prepared.request !== load.request {
                        load.request.onCompletion { prepared.request.complete(with: $0) }
                        return .join(prepared.request)
                    }
                    return .join(load.request)
                }
                if state.isUpToDate(now: now, elapsed: core.timeSource.elapsed, configuration: configuration) {
                    return .upToDate
                }
            }
            etag = state.confirmedData?.etag
            state.loading.begin(LoadState.Load(request: request, invalidations: state.invalidations))
            state.requests.append((request, true))
            state.post(.requested)
            return .proceed
        }
        switch decision {
        case .join(let existing): return existing
        case .upToDate: return nil
        case .proceed: break
        }
        core.logging.staleness.debug(
            onlyIfNeeded ? "not up to date: loading" : "loading", metadata: ["url": "\(urlString)"])
        deliverEvents()
        if let following {
            request.start { load in await Request.follow(following, for: load) }
            return request
        }
        guard url != nil else {
            request.complete(with: .failure(invalidURLError(method: .get)))
            return request
        }
        let exchange = loadExchange(
            configuration: configuration, etag: etag, awaitsCache: awaitsCache, capture: capture)
        guard configuration.requestDecorators.isEmpty else {
            // The decorated request's outcome is the load's; repeating it sends the load's GET again, as it is then.
            let raw = Request(
                method: .get, url: urlString, timeSource: core.timeSource, resolve: nil,
                replay: { [self] in loadRequestAgain(capture: capture) },
                progressInterval: configuration.progressReportingInterval)
            raw.prepare(exchange)
            let decorated = decorated(raw)
            request.start { load in await Request.follow(decorated, for: load) }
            return request
        }
        request.start(exchange)
        return request
    }

    /// The work of a load's exchange: a conditional GET (`If-None-Match: etag`) configured by `configuration`,
    /// whose raw body goes into `capture` for the persistent cache.
    private func loadExchange(
        configuration: ResourceConfiguration, etag: String?, awaitsCache: Bool,
        capture: LockedValue<CachedEntity?>?
    ) -> Request.Work {
        let transportRequest = transportRequest(.get, configuration: configuration) { request in
            if let etag { request.headers["If-None-Match"] = etag }
        }
        guard let transportRequest else {
            let error = invalidURLError(method: .get)
            return { _ in .failure(error) }
        }
        let pipeline = configuration.pipeline
        return { [self] request in
            var transportRequest = transportRequest
            if awaitsCache {
                // A forced load begun during the cache read still revalidates what the cache holds.
                await cacheChecked()
                if transportRequest.headers["If-None-Match"] == nil,
                    let etag = state.withLock({ $0.confirmedData?.etag })
                {
                    transportRequest.headers["If-None-Match"] = etag
                }
            }
            return await exchange(transportRequest, pipeline: pipeline, capture: capture, reportingTo: request)
        }
    }

    /// A load's GET made again (``Request/repeated()``), unstarted: the configuration and ETag as they are now.
    private func loadRequestAgain(capture: LockedValue<CachedEntity?>?) -> Request {
        let configuration = configuration(for: .get)
        let request = Request(
            method: .get, url: urlString, timeSource: core.timeSource, resolve: nil,
            replay: { [self] in loadRequestAgain(capture: capture) },
            progressInterval: configuration.progressReportingInterval)
        let etag = state.withLock { $0.confirmedData?.etag }
        request.prepare(loadExchange(configuration: configuration, etag: etag, awaitsCache: false, capture: capture))
        return request
    }

    /// Applies a load's outcome to the state — unless the load was superseded or wiped — and posts its event.
    /// Returns the outcome as the request reports it (a 304 carries the data it confirmed).
    func resolveLoad(_ request: Request, _ outcome: RequestOutcome, raw: CachedEntity?) -> RequestOutcome {
        let (now, elapsed) = (core.timeSource.now, core.timeSource.elapsed)
        var released: (Entity?, ResourceError?) = (nil, nil)
        var applied = false
        var event: ResourceEvent?
        let resolved = state.withLock { state -> RequestOutcome in
            // Listed until its outcome shows: with optimistic layers over its data, that is when they are applied.
            defer { if event == nil { state.removeRequest(request) } }
            guard let load = state.loading.resolve(request) else { return outcome }  // superseded or wiped
            applied = true
            let current = load.invalidations == state.invalidations
            switch outcome {
            case .newData(let entity):
                // Succeeded mutations waiting for this load give way to its data in the same step.
                _ = state.removeLayers { $0.removedByLoadFrom.map { $0 <= load.invalidations } ?? false }
                (released, event) = state.confirmFromNetwork(entity, now: now, elapsed: elapsed, fresh: current)
                return outcome
            case .notModified:
                guard var data = state.confirmedData else {
                    let error = ResourceError(
                        .notModifiedWithoutData,
                        message: "the server answered 304 Not Modified, but there is no data to keep",
                        method: request.method, url: request.url, timestamp: now)
                    released.1 = state.latestError
                    state.latestError = error
                    state.errorReceived = elapsed
                    if current { state.invalidated = false }
                    state.post(.error)
                    return .failure(error)
                }
                data.timestamp = now
                state.dataReceived = elapsed
                released.1 = state.latestError.take()
                if current { state.invalidated = false }
                _ = state.removeLayers { $0.removedByLoadFrom.map { $0 <= load.invalidations } ?? false }
                event = state.confirm(data, posting: .notModified)
                return .notModified(data)
            case .failure(let error):
                if error.isCancellation {
                    state.post(.requestCancelled)
                } else {
                    released.1 = state.latestError
                    state.latestError = error
                    state.errorReceived = ResourceState.monotonic(error.timestamp, now: now, elapsed: elapsed)
                    if current { state.invalidated = false }
                    state.post(.error)
                }
                return outcome
            }
        }
        withExtendedLifetime(released) {}  // the replaced values are released here, outside the lock
        if let event { showLayers(posting: event, finishing: request) }
        logOutcome(resolved)
        if applied { writeBack(resolved, raw: raw, at: now) }
        deliverEvents()
        return resolved
    }

    private func logOutcome(_ outcome: RequestOutcome) {
        let logging = core.logging
        switch outcome {
        case .newData: logging.stateChanges.debug("new data from the network", metadata: ["url": "\(urlString)"])
        case .notModified: logging.stateChanges.debug("not modified", metadata: ["url": "\(urlString)"])
        case .failure(let error) where error.isCancellation:
            logging.network.debug("load cancelled", metadata: ["url": "\(urlString)"])
        case .failure(let error):
            // Observers get the error event and `load()` throws it: debug, not warning.
            logging.stateChanges.debug("load failed", metadata: ["url": "\(urlString)", "error": "\(error.message)"])
        }
    }

    func invalidURLError(method: HTTPMethod) -> ResourceError {
        ResourceError(
            .invalidURL, message: invalid?.problem ?? "the resource has no valid URL", method: method,
            url: urlString, timestamp: core.timeSource.now)
    }
}
