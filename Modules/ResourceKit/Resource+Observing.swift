public import DeliveryKit
import Logging
public import OwnershipKit
import TetherConcurrency

extension Resource {
    /// Adds `observer`, owned by itself: held weakly, it observes until it is deallocated or removed with
    /// `removeObservers(ownedBy: observer)`. Adding it again adds no second entry (and keeps its first policy).
    ///
    /// - Parameters:
    ///   - observer: The observer, which is also its own owner.
    ///   - delivery: How events reach it; by default, directly, in the context that changed the resource. With a
    ///     policy (for example `.deliverOn(.serialQueue())`), events coalesce while the observer is busy.
    /// - Returns: The resource, so calls chain.
    @discardableResult
    public func addObserver<Observer: ResourceObserver & AnyObject>(
        _ observer: Observer, delivery: (any DeliveryPolicy)? = nil
    ) -> Resource {
        addSelfOwned(observer, delivery: delivery) { unsafeDowncast($0, to: Observer.self) }
        logAdded("\(type(of: observer))")
        return self
    }

    /// Adds `observer`, owned by `owner`: held strongly, it observes until every owner is deallocated or removed.
    /// Adding the same class instance again adds an owner, not a second entry. Passing the observer as its own owner
    /// is the same as ``addObserver(_:delivery:)``.
    @discardableResult
    public func addObserver(
        _ observer: any ResourceObserver, owner: AnyObject, delivery: (any DeliveryPolicy)? = nil
    ) -> Resource {
        let identity: AnyObject? = type(of: observer as Any) is AnyClass ? observer as AnyObject : nil
        if let identity, identity === owner {
            addSelfOwned(identity, delivery: delivery) { $0 as? any ResourceObserver }
        } else {
            let binding = ObserverBinding()
            observers.add(
                makeSink(observer, delivery: delivery, binding: binding), identity: identity, owner: owner,
                binding: binding)
        }
        logAdded("\(type(of: observer))")
        return self
    }

    /// Adds `closure` as an observer owned by `owner`: it observes until every owner is deallocated or removed.
    ///
    /// The closure is given the resource: use that rather than capturing it, which would keep the resource alive
    /// until its observers are swept.
    @discardableResult
    public func addObserver(
        owner: AnyObject, delivery: (any DeliveryPolicy)? = nil,
        closure: @escaping @Sendable (Resource, ResourceEvent) -> Void
    ) -> Resource {
        if delivery == nil {
            observers.add(
                ObserverSink(link: ResourceLink(self), target: .closure(closure)), identity: nil, owner: owner)
            logAdded("closure")
            return self
        }
        return addObserver(ClosureObserver(closure: closure, onStop: nil), owner: owner, delivery: delivery)
    }

    /// Adds `observer`, owned by the returned token: it observes until the token is cancelled or deallocated.
    public func observe(
        _ observer: any ResourceObserver, delivery: (any DeliveryPolicy)? = nil
    ) -> ObservationToken {
        logAdded("\(type(of: observer))")
        let binding = ObserverBinding()
        return observers.observe(makeSink(observer, delivery: delivery, binding: binding), binding: binding)
    }

    /// Adds `closure` as an observer owned by the returned token: it observes until the token is cancelled or
    /// deallocated.
    public func observe(
        delivery: (any DeliveryPolicy)? = nil, closure: @escaping @Sendable (Resource, ResourceEvent) -> Void
    ) -> ObservationToken {
        observe(ClosureObserver(closure: closure, onStop: nil), delivery: delivery)
    }

    /// Removes `owner` from every observer it owns; those left with no owner stop observing (and are told so). When
    /// this returns, they receive nothing further and none of their calls is running (from inside an observer's call
    /// it does not wait). Passing an observer removes its self-ownership.
    @discardableResult
    public func removeObservers(ownedBy owner: AnyObject?) -> Resource {
        guard let observers = observersIfAny else { return self }
        observers.removeObservers(ownedBy: owner)
        core.logging.observers.debug(
            "observers removed", metadata: ["url": "\(urlString)", "remaining": "\(observers.observerCount)"])
        return self
    }

    /// ``removeObservers(ownedBy:)``, suspending instead of blocking while a call of an ended observer finishes on
    /// another thread (a `.deliverOn` handler): the form to use from Swift concurrency's threads.
    @discardableResult
    public func removeObservers(ownedBy owner: AnyObject?) async -> Resource {
        guard let observers = observersIfAny else { return self }
        await observers.removeObservers(ownedBy: owner)
        core.logging.observers.debug(
            "observers removed", metadata: ["url": "\(urlString)", "remaining": "\(observers.observerCount)"])
        return self
    }

    /// Whether any observer's owners are alive. A resource with observers is never evicted from its service's cache.
    public var hasObservers: Bool {
        observersIfAny?.hasObservers ?? false
    }

    /// How many observers have live owners.
    public var observerCount: Int {
        observersIfAny?.observerCount ?? 0
    }

    /// Adds `object` as a self-owned observer (held weakly), seen as an observer through `project`.
    private func addSelfOwned(
        _ object: AnyObject, delivery: (any DeliveryPolicy)?,
        project: @escaping @Sendable (AnyObject) -> (any ResourceObserver)?
    ) {
        let link = ResourceLink(self)
        guard let delivery else {
            observers.add(object) { ObserverSink(link: link, target: project($0).map { .direct($0) } ?? .none) }
            return
        }
        // The lane holds the observer weakly; it is unwrapped before it is projected (no cast of a nil weak).
        let reference = WeakReference(object)
        let binding = ObserverBinding()
        let lane = ObserverSink.lane(policy: delivery, binding: binding) { reference.object.flatMap(project) }
        let observed: Any.Type = type(of: object)
        let policy: Any.Type = type(of: delivery)
        observers.add(object, binding: binding) { _ in
            ObserverSink(link: link, target: .lane(lane, observed: observed, policy: policy))
        }
    }

    func makeSink(
        _ observer: any ResourceObserver, delivery: (any DeliveryPolicy)?, binding: ObserverBinding
    ) -> ObserverSink {
        let link = ResourceLink(self)
        guard let delivery else { return ObserverSink(link: link, target: .direct(observer)) }
        let lane = ObserverSink.lane(policy: delivery, binding: binding) { observer }
        return ObserverSink(
            link: link, target: .lane(lane, observed: type(of: observer), policy: type(of: delivery)))
    }

    /// Logs the new observer and, on the first, starts the persistent-cache check.
    private func logAdded(_ kind: String) {
        core.logging.observers.debug("observer added", metadata: ["url": "\(urlString)", "observer": "\(kind)"])
        startCacheCheckIfNeeded()
    }
}
