public import DeliveryKit
public import Foundation
public import Observation
public import ResourceKit
import TetherConcurrency

/// A resource's state as observable properties, kept current by an observer the model owns: Siesta's resource
/// observer, as a value a view model or a SwiftUI view holds.
///
/// ```swift
/// let model = ResourceModel<JSONValue>(service.resource("/items"))
/// withObservationTracking {
///     render(model.content, loading: model.isLoading)   // the first read of `content` loads it if needed
/// } onChange: {
///     scheduleRender()
/// }
/// ```
///
/// The model is the observer's owner: the observation ends when the model is released (the resource drops an
/// observer whose owner has gone at the moment it would call it), and re-pointing ``resource`` removes the old
/// observer at once, as Siesta's `displayedResource` does. Each property changes only when its value does — or, for
/// ``content``, when the resource has new data — so a tracking closure runs once per change that shows, never for a
/// load that changed nothing.
///
/// Properties change where the resource's events are delivered: by default on the main queue where SwiftUI exists
/// (its views read models there), elsewhere directly where the resource changed (a Linux service need not drain the
/// main queue). Reading is safe from any thread.
public final class ResourceModel<Content: Sendable>: Observable, Sendable {
    private let state: LockedValue<ResourceModelState>
    private let registrar = ObservationRegistrar()
    private let delivery: (any DeliveryPolicy)?
    private let paths = ResourceModel.sharedPaths

    /// A model of `resource` (none yet when nil; set ``resource`` later).
    ///
    /// - Parameters:
    ///   - resource: The resource shown.
    ///   - type: The type ``content`` has: the resource's content after its pipeline (`JSONValue`, a `Decodable`
    ///     model, `String`…). Content of another type reads as nil.
    ///   - loadsOnAccess: Whether the first read of ``content`` calls ``loadIfNeeded()``, once per resource.
    ///   - delivery: How the resource's events reach the model (``defaultDelivery`` unless given); nil for directly.
    public init(
        _ resource: Resource? = nil, as type: Content.Type = Content.self, loadsOnAccess: Bool = true,
        delivery: (any DeliveryPolicy)? = ResourceModel.defaultDelivery
    ) {
        state = LockedValue(ResourceModelState(loadsOnAccess: loadsOnAccess))
        self.delivery = delivery
        if let resource {
            state.withLock { $0.resource = resource }
            observe(resource)
        }
    }

    /// On the main queue where SwiftUI exists; elsewhere nil: directly, where the resource changed.
    public static var defaultDelivery: (any DeliveryPolicy)? {
        #if canImport(SwiftUI)
        .deliverOn(.queue(.main))
        #else
        nil
        #endif
    }

    /// The key paths of the observable properties (see `KeyPathCache`).
    private struct Paths: Sendable {
        let resource: any KeyPath<ResourceModel, Resource?> & Sendable
        let content: any KeyPath<ResourceModel, Content?> & Sendable
        let isLoading: any KeyPath<ResourceModel, Bool> & Sendable
        let error: any KeyPath<ResourceModel, ResourceError?> & Sendable
        let timestamp: any KeyPath<ResourceModel, Date?> & Sendable
        let isUpToDate: any KeyPath<ResourceModel, Bool> & Sendable
    }

    /// Made once per `Content` type; each model keeps a copy, so an event costs no lookup.
    private static var sharedPaths: Paths {
        KeyPathCache.value(for: ResourceModel.self) {
            Paths(
                resource: \.resource, content: \.content, isLoading: \.isLoading, error: \.error,
                timestamp: \.timestamp, isUpToDate: \.isUpToDate)
        }
    }

    // MARK: Observable properties

    /// The resource shown. Setting it removes the model's observer from the old resource — no call of it begins
    /// afterwards — and observes the new one, whose state the properties take at once.
    ///
    /// Removing the old observer waits for a call of it running on another thread (a few property writes). From a
    /// Swift concurrency task, use ``show(_:)``, which suspends instead.
    public var resource: Resource? {
        get {
            registrar.access(self, keyPath: paths.resource)
            return state.withLock { $0.resource }
        }
        set {
            let (changed, old) = swapResource(for: newValue)
            guard changed else { return }
            old?.removeObservers(ownedBy: self)
            observe(newValue)
        }
    }

    /// The resource's content as `Content`, or nil (no data yet, or content of another type).
    public var content: Content? {
        registrar.access(self, keyPath: paths.content)
        let (content, load) = state.withLock { state -> ((any Sendable)?, Resource?) in
            guard state.loadsOnAccess, !state.loadRequested, let resource = state.resource else {
                return (state.shown.content, nil)
            }
            state.loadRequested = true
            return (state.shown.content, resource)
        }
        load?.loadIfNeeded()
        return content.flatMap { $0 as? Content }
    }

    /// Whether a load of the resource is in flight.
    public var isLoading: Bool {
        registrar.access(self, keyPath: paths.isLoading)
        return state.withLock { $0.shown.isLoading }
    }

    /// The error of the resource's last load, until new data or a 304 replaces it.
    public var error: ResourceError? {
        registrar.access(self, keyPath: paths.error)
        return state.withLock { $0.shown.error }
    }

    /// When the content was last received or confirmed (a 304).
    public var timestamp: Date? {
        registrar.access(self, keyPath: paths.timestamp)
        return state.withLock { $0.shown.timestamp }
    }

    /// Whether the resource was up to date at its last event (data younger than its expiry, and no load needed).
    public var isUpToDate: Bool {
        registrar.access(self, keyPath: paths.isUpToDate)
        return state.withLock { $0.shown.isUpToDate }
    }

    // MARK: Actions

    /// Loads the resource unless its data is up to date or a load is in flight.
    @discardableResult
    public func loadIfNeeded() -> Request? {
        state.withLock { $0.resource }?.loadIfNeeded()
    }

    /// Shows `resource`, as setting ``resource`` does, suspending instead of blocking while a call of the old
    /// observer finishes on another thread.
    public func show(_ resource: Resource?) async {
        let (changed, old) = swapResource(for: resource)
        guard changed else { return }
        await old?.removeObservers(ownedBy: self)
        observe(resource)
    }

    // MARK: The observer

    /// Makes `resource` the one shown; whether it was another, and which.
    private func swapResource(for resource: Resource?) -> (changed: Bool, old: Resource?) {
        guard state.withLock({ $0.resource }) !== resource else { return (false, nil) }
        return registrar.withMutation(of: self, keyPath: paths.resource) {
            state.withLock { state in
                defer {
                    state.resource = resource
                    state.loadRequested = false
                }
                return (true, state.resource)
            }
        }
    }

    /// Adds the model's observer to `resource`, whose first call sets every property; with none, empties them.
    private func observe(_ resource: Resource?) {
        guard let resource else {
            let empty = ResourceModelSnapshot()
            update(empty, changing: state.withLock { ResourceModelChanges(from: $0.shown, to: empty, event: nil) })
            return
        }
        resource.addObserver(owner: self, delivery: delivery) { [weak self] resource, event in
            self?.update(from: resource, event: event)
        }
    }

    private func update(from resource: Resource, event: ResourceEvent) {
        let read = resource.snapshot
        let snapshot = ResourceModelSnapshot(
            content: read.data?.typedContent(as: Content.self), isLoading: read.isLoading, error: read.error,
            timestamp: read.timestamp, isUpToDate: read.isUpToDate)
        let changes = state.withLock { state -> ResourceModelChanges? in
            // A call of an observer removed while it waited: the model shows another resource now.
            guard state.resource === resource else { return nil }
            return ResourceModelChanges(from: state.shown, to: snapshot, event: event)
        }
        if let changes { update(snapshot, changing: changes) }
    }

    /// Writes `snapshot`, telling the registrar of each changed property before and after: a tracking closure runs
    /// once, at the first of them.
    private func update(_ snapshot: ResourceModelSnapshot, changing changes: ResourceModelChanges) {
        if changes.content { registrar.willSet(self, keyPath: paths.content) }
        if changes.isLoading { registrar.willSet(self, keyPath: paths.isLoading) }
        if changes.error { registrar.willSet(self, keyPath: paths.error) }
        if changes.timestamp { registrar.willSet(self, keyPath: paths.timestamp) }
        if changes.isUpToDate { registrar.willSet(self, keyPath: paths.isUpToDate) }
        state.withLock { $0.shown = snapshot }
        if changes.content { registrar.didSet(self, keyPath: paths.content) }
        if changes.isLoading { registrar.didSet(self, keyPath: paths.isLoading) }
        if changes.error { registrar.didSet(self, keyPath: paths.error) }
        if changes.timestamp { registrar.didSet(self, keyPath: paths.timestamp) }
        if changes.isUpToDate { registrar.didSet(self, keyPath: paths.isUpToDate) }
    }
}
