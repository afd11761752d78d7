import DeliveryKit
import OwnershipKit

/// Something that follows a resource: told of each ``ResourceEvent``, and once when it stops observing.
///
/// ```swift
/// final class ItemsScreen: ResourceObserver {
///     func resourceChanged(_ resource: Resource, event: ResourceEvent) { render(resource.latestData) }
/// }
/// items.addObserver(screen)   // held weakly: observes until `screen` is deallocated
/// ```
public protocol ResourceObserver: Sendable {
    /// The resource changed (or, with ``ResourceEvent/observerAdded``, this observer was just added).
    func resourceChanged(_ resource: Resource, event: ResourceEvent)

    /// The resource's load has got this far, from 0 to 1 (see ``Request/onProgress(_:)``): always increasing
    /// within a load, and last 1, just before the load's outcome event.
    func resourceRequestProgress(for resource: Resource, progress: Double)

    /// The observer was removed or its owners are gone: it receives nothing further. Not sent to a self-owned
    /// observer that was itself deallocated.
    func stoppedObserving(resource: Resource)
}

extension ResourceObserver {
    /// Does nothing.
    public func resourceRequestProgress(for resource: Resource, progress: Double) {}

    /// Does nothing.
    public func stoppedObserving(resource: Resource) {}
}

/// The closure flavour of observer.
struct ClosureObserver: ResourceObserver {
    let closure: @Sendable (Resource, ResourceEvent) -> Void
    let onStop: (@Sendable (Resource) -> Void)?

    func resourceChanged(_ resource: Resource, event: ResourceEvent) {
        closure(resource, event)
    }

    func stoppedObserving(resource: Resource) {
        onStop?(resource)
    }
}

/// A weak reference to a resource, shared by the sinks of one observer (the table belongs to the resource, so the
/// sinks must not hold it).
final class ResourceLink: Sendable {
    weak let resource: Resource?

    init(_ resource: Resource) {
        self.resource = resource
    }
}

/// What a lane carries to an observer.
enum LaneItem: Sendable {
    case event(Resource, ResourceEvent)
    case progress(Resource, Double)
    case stopped(Resource)
}

/// What a resource tells its observers: an event, or its load's progress.
enum ResourceUpdate: Sendable {
    case event(ResourceEvent)
    case progress(Double)
}

/// An update as the observer table carries it: with its resource, so that delivering it needs no weak load.
struct ResourceNotification: Sendable {
    let resource: Resource
    let update: ResourceUpdate
}

/// What the observer table holds for one observer: a direct call, or a delivery lane.
struct ObserverSink: Sendable {
    enum Target: Sendable {
        /// A closure observer, called directly (no existential to open).
        case closure(@Sendable (Resource, ResourceEvent) -> Void)
        case direct(any ResourceObserver)
        /// Delivered through a lane (a delivery policy); `observed` is the observer's type and `policy` the
        /// policy's, for an inspector.
        case lane(DeliveryLane<LaneItem>, observed: Any.Type, policy: Any.Type)
        /// A self-owned observer that could not be projected (never expected).
        case none
    }

    let link: ResourceLink
    let target: Target

    func deliver(_ notice: ObserverNotice<ResourceNotification>) {
        if case .event(let notification) = notice {
            switch notification.update {
            case .event(let event): deliver(event, of: notification.resource)
            case .progress(let progress): deliver(progress, of: notification.resource)
            }
            return
        }
        guard let resource = link.resource else { return }
        switch (target, notice) {
        case (.closure(let closure), .added):
            closure(resource, .observerAdded)
        case (.closure, _):
            break
        case (.direct(let observer), .added):
            observer.resourceChanged(resource, event: .observerAdded)
        case (.direct(let observer), .stopped):
            observer.stoppedObserving(resource: resource)
        case (.lane(let lane, _, _), .added):
            lane.submit(.event(resource, .observerAdded))
        case (.lane(let lane, _, _), .stopped):
            lane.submit(.stopped(resource))
        case (.direct, .event), (.lane, .event), (.none, _):
            break  // events are delivered above
        }
    }

    /// Progress goes to observers of the protocol only: closures take events alone.
    private func deliver(_ progress: Double, of resource: Resource) {
        switch target {
        case .direct(let observer): observer.resourceRequestProgress(for: resource, progress: progress)
        case .lane(let lane, _, _): lane.submit(.progress(resource, progress))
        case .closure, .none: break
        }
    }

    private func deliver(_ event: ResourceEvent, of resource: Resource) {
        switch target {
        case .closure(let closure): closure(resource, event)
        case .direct(let observer): observer.resourceChanged(resource, event: event)
        case .lane(let lane, _, _): lane.submit(.event(resource, event))
        case .none: break
        }
    }

    /// A lane under `policy` that calls `observer`. Ownership is checked at the moment of each call: an event
    /// waiting in the lane when the observer's owners died (or it was removed) is dropped, never delivered, and the
    /// table ends the observer on the spot. Its stopped notice, which coalesces over a waiting event, comes last.
    static func lane(
        policy: any DeliveryPolicy, binding: ObserverBinding,
        observer: @escaping @Sendable () -> (any ResourceObserver)?
    ) -> DeliveryLane<LaneItem> {
        policy.makeLane { (delivery: Delivery<LaneItem>) in
            switch delivery.payload {
            case .event(let resource, let event):
                guard let id = binding.id else { return }
                resource.observersIfAny?.withLiveObserver(id) {
                    observer()?.resourceChanged(resource, event: event)
                }
            case .progress(let resource, let progress):
                guard let id = binding.id else { return }
                resource.observersIfAny?.withLiveObserver(id) {
                    observer()?.resourceRequestProgress(for: resource, progress: progress)
                }
            case .stopped(let resource):
                observer()?.stoppedObserving(resource: resource)
            }
        }
    }
}
