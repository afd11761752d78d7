import Logging
import OwnershipKit
import Synchronization
import TetherClock
import TetherConcurrency
public import TransportKit

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The state of one remote resource — its latest data, its latest error, whether it is loading — and the observers
/// that follow it. Get one from ``Service/resource(_:)``: a service hands out at most one per URL.
///
/// ```swift
/// let items = core.resource("/items")
/// items.addObserver(owner: self) { resource, event in
///     show(resource.typedContent(as: JSONValue.self), loading: resource.isLoading, error: resource.latestError)
/// }
/// items.loadIfNeeded()
/// ```
///
/// Every method may be called from any thread or task. Observers see a resource's events one at a time, in the
/// order its state changed, never re-entrantly. A resource is retained by its service while it has observers;
/// when it has none and nobody else references it, it is eligible for deallocation at the service's next flush.
public final class Resource: Sendable, Hashable, CustomStringConvertible {
    /// The service that made this resource. (A resource keeps its service's workings alive, not the `Service`
    /// object: if that was dropped while this resource is still referenced, this is a new face on the same cache.)
    public var service: Service {
        core.service()
    }

    /// The service's workings: transport, clock, configuration, cache.
    let core: ServiceCore
    /// The resource's URL; nil when the input did not make a valid one (its loads fail saying why).
    public let url: URL?

    /// The service's cache key.
    let key: String
    let invalid: InvalidAddress?
    /// The observer table, made when the first observer is added: most cached resources are never observed, and
    /// the table (its lock, its watermark) would be a third of what one of them costs.
    private let observerTable = LazyReference<ObserverTable<ObserverSink, ResourceNotification>>()
    let state = LockedValue(ResourceState())

    init(core: ServiceCore, key: String, url: URL?, invalid: InvalidAddress?) {
        self.core = core
        self.key = key
        self.url = url
        self.invalid = invalid
        LifetimeTracking.made(self, "resource \(url?.absoluteString ?? invalid?.text ?? key)")
    }

    /// The observer table, if an observer was ever added.
    var observersIfAny: ObserverTable<ObserverSink, ResourceNotification>? {
        observerTable.load()
    }

    /// The observer table, made now if this is the first observer.
    var observers: ObserverTable<ObserverSink, ResourceNotification> {
        if let table = observerTable.load() { return table }
        return observerTable.storeIfNil(ObserverTable { sink, notice in sink.deliver(notice) })
    }

    /// The URL as a string, or the text that was not a valid URL.
    public var urlString: String {
        url?.absoluteString ?? invalid?.text ?? key
    }

    /// `Resource(url)`.
    public var description: String {
        "Resource(\(urlString))"
    }

    /// Identity: a service never has two resources for one URL.
    public static func == (lhs: Resource, rhs: Resource) -> Bool { lhs === rhs }

    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    // MARK: State

    /// The latest valid data: kept through errors, replaced by new data, cleared only by ``wipe()``. The first read
    /// starts the persistent-cache check, if the resource has a cache.
    public var latestData: Entity? {
        let (data, checked) = state.withLock { state -> (Entity?, Bool) in
            if state.loading.isCacheChecked { return (state.latestData, true) }
            return (state.latestData, false)
        }
        if !checked { startCacheCheckIfNeeded() }
        return data
    }

    /// When the resource last changed: the newer of ``latestData``'s and ``latestError``'s timestamps; nil when it
    /// has neither.
    public var timestamp: Date? {
        state.withLock { state in
            [state.latestData?.timestamp, state.latestError?.timestamp].compactMap { $0 }.max()
        }
    }

    /// The error of the latest load, cleared by the next success.
    public var latestError: ResourceError? {
        state.withLock { $0.latestError }
    }

    /// Whether a load is in flight. It is already true when ``ResourceEvent/requested`` arrives, and already false
    /// when the load's outcome event arrives.
    public var isLoading: Bool {
        state.withLock { $0.loading.load != nil }
    }

    /// Whether any request is in flight: loads, mutations, and those made with
    /// ``request(_:body:contentType:headers:)``.
    public var isRequesting: Bool {
        state.withLock { !$0.requests.isEmpty }
    }

    /// Every request in flight, oldest first: loads (a superseded one included, until it ends; one whose data lies
    /// under optimistic layers, until they are shown over it), mutations, and those made with
    /// ``request(_:body:contentType:headers:)``. ``isRequesting`` is `!allRequests.isEmpty`.
    public var allRequests: [Request] {
        state.withLock { $0.requests.map(\.request) }
    }

    /// The loads in flight, oldest first: the current load (if any) last, after loads it superseded that have not
    /// ended yet. A superseded load no longer touches the resource, so ``isLoading`` counts only the current one.
    public var loadRequests: [Request] {
        state.withLock { $0.requests.filter(\.isLoad).map(\.request) }
    }

    /// Whether ``loadIfNeeded()`` would do nothing now: not invalidated, and the newer of the data and the error is
    /// no older than the expiration time (the retry time, after an error).
    public var isUpToDate: Bool {
        let configuration = configuration(for: .get)
        let (now, elapsed) = (core.timeSource.now, core.timeSource.elapsed)
        return state.withLock { $0.isUpToDate(now: now, elapsed: elapsed, configuration: configuration) }
    }

    /// The content of the latest data as `T`, or nil when there is no data or it is something else.
    public func typedContent<T>(as type: T.Type = T.self) -> T? {
        latestData?.typedContent(as: type)
    }

    /// The content of the latest data as `T`, or `ifNone`.
    public func typedContent<T>(ifNone: @autoclosure () -> T) -> T {
        latestData?.typedContent(as: T.self) ?? ifNone()
    }

    /// The content as text: a `String` content, or "" otherwise.
    public var text: String {
        typedContent(ifNone: "")
    }

    /// The content as JSON: a `JSONValue` content, or nil otherwise.
    public var json: JSONValue? {
        typedContent(as: JSONValue.self)
    }

    /// The configuration for `method` requests, computed once per configuration change.
    public func configuration(for method: HTTPMethod = .get) -> ResourceConfiguration {
        let generation = core.configurationGeneration.load(ordering: .acquiring)
        if let cached = state.withLock({ $0.cachedConfiguration(for: method, generation: generation) }) {
            return cached
        }
        let configuration = core.computeConfiguration(for: url, method: method)
        state.withLock { $0.cache(configuration, for: method, generation: generation) }
        return configuration
    }

    // MARK: Events

    /// Hands posted events to the observer table, one at a time and in order; the thread that finds none being
    /// handed over does it, the others leave theirs to it.
    func deliverEvents() {
        guard state.withLock({ $0.eventDrainer.claim(hasWork: !$0.updates.isEmpty) }) else { return }
        state.drain(\.eventDrainer, next: { $0.updates.isEmpty ? nil : $0.updates.removeFirst() }) { update in
            if case .event(let event) = update {
                core.logging.stateChanges.trace("event", metadata: ["url": "\(urlString)", "event": "\(event)"])
            }
            observersIfAny?.notify(ResourceNotification(resource: self, update: update))
        }
    }

    /// A load's progress, for the observers — if `request` is still the resource's load.
    func loadProgressed(_ request: Request, to value: Double) {
        let posted = state.withLock { state -> Bool in
            guard state.loading.load?.request === request else { return false }
            state.updates.append(.progress(value))
            return true
        }
        if posted { deliverEvents() }
    }
}
