public import DeliveryKit
public import LiveQueryKit

/// A live query from configuration, bound to the pipeline's store and observed with its configured delivery.
///
/// ```swift
/// let items = try pipeline.liveQuery(named: "abc-items")
/// let handle = try items.observe(owner: self) { documents, event, signalNext in
///     render(documents)
///     signalNext()          // required under next-signal; harmless otherwise
/// }
/// ```
public struct ConfiguredLiveQuery: Sendable {
    /// Its name in the configuration.
    public let name: String
    /// The query on the pipeline's store.
    public let query: PendingQuery
    /// How it is delivered.
    package let delivery: ObservationDelivery

    /// Makes one.
    package init(name: String, query: PendingQuery, delivery: ObservationDelivery) {
        self.name = name
        self.query = query
        self.delivery = delivery
    }

    /// Observes the query as configured (see ``ObservationDelivery``): `handler` gets the initial result, then
    /// the latest after each change. Under `next-signal` the next call waits for `signalNext`; under the other
    /// modes the pipeline signals when the handler returns and the handler's own call is ignored. With `owner`,
    /// the observation ends when the owner is deallocated; without, when the handle is.
    @discardableResult
    public func observe(
        owner: AnyObject? = nil, handler: @escaping @Sendable ([Document], LiveQueryEvent, SignalNext) -> Void
    ) throws -> LiveQuery {
        let deliveredHandler: @Sendable ([Document], LiveQueryEvent, SignalNext) -> Void
        switch delivery.mode {
        case .nextSignal:
            deliveredHandler = handler
        case .immediate, .deliverOnQueue:
            deliveredHandler = { documents, event, signalNext in
                handler(documents, event, SignalNext {})
                signalNext()
            }
        }
        // Immediate: a serial queue of the observer's own, called again as soon as the handler returns.
        let queue = delivery.mode == .immediate ? nil : delivery.queue
        if let owner {
            return try query.observeLocalWithNextSignal(owner: owner, deliverOn: queue, handler: deliveredHandler)
        }
        if let queue {
            return try query.observeLocalWithNextSignal(deliverOn: queue, handler: deliveredHandler)
        }
        return try query.observeLocalWithNextSignal(handler: deliveredHandler)
    }
}
