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
    private struct State: Sendable {
        var resource: Resource?
        var content: Content?
        var isLoading = false
        var error: ResourceError?
        var timestamp: Date?
        var isUpToDate = false
        var loadsOnAccess: Bool
        var loadRequested = false
    }

    private let state: LockedValue<State>
    private let registrar = ObservationRegistrar()
    private let delivery: (any DeliveryPolicy)?

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
        state = LockedValue(State(loadsOnAccess: loadsOnAccess))
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

    // MARK: Observable properties

    /// The resource shown. Setting it removes the model's observer from the old resource — no call of it begins
    /// afterwards — and observes the new one, whose state the properties take at once.
    ///
    /// Removing the old observer waits for a call of it running on another thread (a few property writes). From a
    /// Swift concurrency task, use ``show(_:)``, which suspends instead.
    public var resource: Resource? {
        get {
            registrar.access(self, keyPath: \.resource)
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
        registrar.access(self, keyPath: \.content)
        let (content, load) = state.withLock { state -> (Content?, Resource?) in
            guard state.loadsOnAccess, !state.loadRequested, let resource = state.resource else {
                return (state.content, nil)
            }
            state.loadRequested = true
            return (state.content, resource)
        }
        load?.loadIfNeeded()
        return content
    }

    /// Whether a load of the resource is in flight.
    public var isLoading: Bool {
        registrar.access(self, keyPath: \.isLoading)
        return state.withLock { $0.isLoading }
    }

    /// The error of the resource's last load, until new data or a 304 replaces it.
    public var error: ResourceError? {
        registrar.access(self, keyPath: \.error)
        return state.withLock { $0.error }
    }

    /// When the content was last received or confirmed (a 304).
    public var timestamp: Date? {
        registrar.access(self, keyPath: \.timestamp)
        return state.withLock { $0.timestamp }
    }

    /// Whether the resource was up to date at its last event (data younger than its expiry, and no load needed).
    public var isUpToDate: Bool {
        registrar.access(self, keyPath: \.isUpToDate)
        return state.withLock { $0.isUpToDate }
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
        return registrar.withMutation(of: self, keyPath: \.resource) {
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
            update(Snapshot(), changing: state.withLock { Changes(from: $0, to: Snapshot(), contentChanged: true) })
            return
        }
        resource.addObserver(owner: self, delivery: delivery) { [weak self] resource, event in
            self?.update(from: resource, event: event)
        }
    }

    /// The resource's state, as the model shows it.
    private struct Snapshot {
        var content: Content?
        var isLoading = false
        var error: ResourceError?
        var timestamp: Date?
        var isUpToDate = false
    }

    /// Which properties an update changes.
    private struct Changes {
        var content, isLoading, error, timestamp, isUpToDate: Bool

        /// Each property changes when its value does; the error also when a load failed again; the content when
        /// `contentChanged` (the model cannot compare contents in general).
        init(from state: State, to snapshot: Snapshot, contentChanged: Bool, failedAgain: Bool = false) {
            content = contentChanged && (state.content != nil || snapshot.content != nil)
            isLoading = state.isLoading != snapshot.isLoading
            error = (state.error == nil) != (snapshot.error == nil) || failedAgain
            timestamp = state.timestamp != snapshot.timestamp
            isUpToDate = state.isUpToDate != snapshot.isUpToDate
        }
    }

    private func update(from resource: Resource, event: ResourceEvent) {
        let snapshot = Snapshot(
            content: resource.typedContent(as: Content.self), isLoading: resource.isLoading,
            error: resource.latestError, timestamp: resource.timestamp, isUpToDate: resource.isUpToDate)
        let changes = state.withLock { state -> Changes? in
            // A call of an observer removed while it waited: the model shows another resource now.
            guard state.resource === resource else { return nil }
            return Changes(
                from: state, to: snapshot, contentChanged: event == .observerAdded || Self.isNewData(event),
                failedAgain: event == .error)
        }
        if let changes { update(snapshot, changing: changes) }
    }

    /// Writes `snapshot`, telling the registrar of each changed property before and after: a tracking closure runs
    /// once, at the first of them.
    private func update(_ snapshot: Snapshot, changing changes: Changes) {
        if changes.content { registrar.willSet(self, keyPath: \.content) }
        if changes.isLoading { registrar.willSet(self, keyPath: \.isLoading) }
        if changes.error { registrar.willSet(self, keyPath: \.error) }
        if changes.timestamp { registrar.willSet(self, keyPath: \.timestamp) }
        if changes.isUpToDate { registrar.willSet(self, keyPath: \.isUpToDate) }
        state.withLock { state in
            state.content = snapshot.content
            state.isLoading = snapshot.isLoading
            state.error = snapshot.error
            state.timestamp = snapshot.timestamp
            state.isUpToDate = snapshot.isUpToDate
        }
        if changes.content { registrar.didSet(self, keyPath: \.content) }
        if changes.isLoading { registrar.didSet(self, keyPath: \.isLoading) }
        if changes.error { registrar.didSet(self, keyPath: \.error) }
        if changes.timestamp { registrar.didSet(self, keyPath: \.timestamp) }
        if changes.isUpToDate { registrar.didSet(self, keyPath: \.isUpToDate) }
    }

    private static func isNewData(_ event: ResourceEvent) -> Bool {
        if case .newData = event { return true }
        return false
    }
}
