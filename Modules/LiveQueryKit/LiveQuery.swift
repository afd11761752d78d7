public import DeliveryKit
import TetherConcurrency
import PersistenceKit

/// An observation of a query. It ends on ``stop()`` or when this handle is deinitialized — except for the
/// owner-tied variants (`observeLocal(owner:…)`), which end when their owner is deallocated (or on `stop()`), so
/// their handle may be discarded.
///
/// ```swift
/// let liveQuery = try store.collection("items").find("store_id == $args.sid", args: ["sid": "abc123"])
///     .observeLocal { documents, event in render(documents) }
/// // …
/// liveQuery.stop()   // no handler runs after this returns
/// ```
public final class LiveQuery: Sendable, CustomStringConvertible {
    let registration: Registration
    let engine: LiveQueryEngine
    let gate: ObserverGate
    let stopsOnDeinit: Bool
    /// The query text, for logs.
    public let query: String

    init(registration: Registration, engine: LiveQueryEngine, gate: ObserverGate, stopsOnDeinit: Bool, query: String) {
        self.registration = registration
        self.engine = engine
        self.gate = gate
        self.stopsOnDeinit = stopsOnDeinit
        self.query = query
        LifetimeTracking.made(self, "live query \"\(query)\"")
    }

    /// Ends the observation. No handler call begins after this returns, and none is running on another thread
    /// (a handler may stop its own query). The observer's snapshots are released.
    ///
    /// While a handler runs on another thread, this waits for it to return, blocking the calling thread: keep
    /// handlers short, or stop slow ones from a thread that may block rather than from a Swift concurrency task.
    public func stop() {
        gate.stop()
        engine.unregister(registration)
    }

    /// The observer's delivery counts: snapshots offered, delivered, coalesced (superseded while the handler was
    /// busy), skipped as unchanged, and the most it ever held at once (never more than 2: one being handled, one
    /// waiting).
    public var deliveryStatistics: DeliveryStatistics {
        registration.lane.statistics
    }

    /// Whether the observation has ended (stopped, or its owner deallocated).
    public var isStopped: Bool {
        gate.isStopped || registration.isGone
    }

    /// `LiveQuery(collection: query)`.
    public var description: String {
        "LiveQuery(\(registration.query.collection): \(query))"
    }

    deinit {
        if stopsOnDeinit { stop() }
    }
}
