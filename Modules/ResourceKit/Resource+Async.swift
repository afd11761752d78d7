import DeliveryKit
import Synchronization

extension Resource {
    /// Loads the resource now (see ``load()``) and returns its data: the new data, or the data a 304 confirmed.
    /// Throws the ``ResourceError`` of a failure. Cancelling the calling task cancels the load.
    ///
    /// Named apart from ``load()`` so that neither hides the other: in async code `resource.load()` is still the
    /// `Request` (`await resource.load().outcome`), and this is the data.
    public func loadedData() async throws(ResourceError) -> Entity {
        try await outcome(of: load()).get()
    }

    /// Returns the resource's data, loading it first unless it is up to date (joining a load in flight, as
    /// ``loadIfNeeded()`` does). Throws the ``ResourceError`` of a failed load. Cancelling the calling task cancels
    /// the load it started or joined.
    public func upToDateData() async throws(ResourceError) -> Entity {
        if let request = loadIfNeeded() { return try await outcome(of: request).get() }
        if let data = latestData { return data }
        if let error = latestError { throw error }
        return try await outcome(of: load()).get()
    }

    private func outcome(of request: Request) async -> RequestOutcome {
        await withTaskCancellationHandler {
            await request.outcome
        } onCancel: {
            request.cancel()
        }
    }

    /// The resource's events as an `AsyncSequence`, starting with ``ResourceEvent/observerAdded``. Buffering is
    /// bounded: while the consumer is busy, events coalesce to the latest, so read the resource's state on each.
    ///
    /// ```swift
    /// for await event in resource.events {
    ///     render(resource.latestData, loading: resource.isLoading)
    /// }
    /// ```
    ///
    /// Each iterator is an observer, owned by the iterator: it stops when the iteration ends or its task is
    /// cancelled.
    public var events: ResourceEvents {
        ResourceEvents(resource: self)
    }
}

/// A resource's events as an `AsyncSequence` (see ``Resource/events``).
public struct ResourceEvents: AsyncSequence, Sendable {
    /// Each element is an event; superseded ones are dropped while the consumer is busy.
    public typealias Element = ResourceEvent
    /// Never fails.
    public typealias Failure = Never

    let resource: Resource

    /// Adds an observer that feeds the iterator.
    public func makeAsyncIterator() -> Iterator {
        let (lane, deliveries) = DeliveryLane<ResourceEvent>.stream()
        let subscription = Subscription(lane: lane)
        let observer = ClosureObserver(closure: { _, event in lane.submit(event) }, onStop: { _ in lane.cancel() })
        resource.addObserver(observer, owner: subscription)
        return Iterator(subscription: subscription, deliveries: deliveries.makeAsyncIterator())
    }

    /// Takes events one at a time; asking for the next is the signal that the previous is done.
    public struct Iterator: AsyncIteratorProtocol {
        let subscription: Subscription
        var deliveries: DeliveryStream<ResourceEvent>.Iterator

        /// The next event, or nil once the observer has stopped.
        public mutating func next() async -> ResourceEvent? {
            await deliveries.next()?.payload
        }
    }

    /// The owner of an iterator's observer: when the iterator goes, the observer stops and the lane is cancelled.
    final class Subscription: Sendable {
        let lane: DeliveryLane<ResourceEvent>

        init(lane: DeliveryLane<ResourceEvent>) {
            self.lane = lane
        }

        deinit {
            lane.cancel()
        }
    }
}
