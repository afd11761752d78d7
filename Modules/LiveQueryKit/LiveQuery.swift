public import DeliveryKit
import DocumentStoreKit
import OwnershipKit
public import TetherConcurrency

/// An observation of a query. It ends on `stop()` or when this handle is deinitialized — except for the
/// owner-tied variants (`observeLocal(owner:…)`), which end when their owner is deallocated (or on `stop()`), so
/// their handle may be discarded.
///
/// Ownership is checked at the moment of every call: once the observation has ended — stopped, handle
/// deinitialized, owner deallocated — no handler call begins, even for a result that was already waiting in the
/// lane or for `signalNext`; that result is dropped and released.
///
/// ```swift
/// let liveQuery = try store.collection("items").find("store_id == $args.sid", args: ["sid": "abc123"])
///     .observeLocal { documents, event in render(documents) }
/// // …
/// liveQuery.stop()   // no handler runs after this returns
/// ```
public final class LiveQuery: ObservationCancellable, CustomStringConvertible {
    let registration: Registration
    let engine: LiveQueryEngine
    let delivered: DeliveredResult
    /// Whether the handle owns the observation (it ends at deinit); false for the owner-tied variants.
    let ownsObservation: Bool
    /// The query text, for logs.
    public let query: String

    init(
        registration: Registration, engine: LiveQueryEngine, delivered: DeliveredResult, ownsObservation: Bool,
        query: String
    ) {
        self.registration = registration
        self.engine = engine
        self.delivered = delivered
        self.ownsObservation = ownsObservation
        self.query = query
        LifetimeTracking.made(self, "live query \"\(query)\"")
    }

    /// Ends the observation. No handler call begins after this returns, and none is running on another thread;
    /// the observer's results are released. Called from inside the handler, it returns at once.
    ///
    /// While a handler runs on another thread, this waits for it to return, blocking the calling thread on a
    /// condition: from a Swift concurrency task, use the `async` form, which suspends instead.
    public func stop() {
        guard let id = registration.binding.id else { return }
        engine.observers.remove(id)
        endDeliveries()
    }

    /// ``stop()``, suspending instead of blocking while a handler on another thread finishes.
    public func stop() async {
        guard let id = registration.binding.id else { return }
        await engine.observers.remove(id)
        endDeliveries()
    }

    /// Once the table has ended the observation: cancels its lane here, so that a lane's own check at the moment of
    /// delivery (``LiveQuerySnapshots``) knows the observation ended once `stop()` returns; and lets go of the last
    /// result. The table's stopped notice, which unregisters the observer and cancels the lane too, is delivered
    /// before `stop()` returns — except when `stop()` runs inside a delivery (a handler, a notice), which does not
    /// wait for it: then another thread delivering the table's notices may deliver it later.
    private func endDeliveries() {
        registration.lane.cancel()
        delivered.release()
    }

    /// `stop()`: the `ObservationCancellable` spelling.
    public func cancel() {
        stop()
    }

    /// The observer's delivery counts: snapshots offered, delivered, coalesced (superseded while the handler was
    /// busy), skipped as unchanged, and the most it ever held at once (never more than 2: one being handled, one
    /// waiting).
    public var deliveryStatistics: DeliveryStatistics {
        registration.lane.statistics
    }

    /// The store's commit that the observer's result is current at: the one its last delivery reflects — inside the
    /// handler, the delivery being handled — or a later one whose result was the same (not delivered again). Nil
    /// before the first delivery. Compare it with ``Store/lastCommit`` after a write, or wait with
    /// ``Store/waitForLiveQueries(through:)``.
    public var deliveredCommit: UInt64? {
        delivered.commit
    }

    /// Whether the observation has ended (stopped, its handle or owner deallocated).
    public var isStopped: Bool {
        registration.isGone || !isInObserverTable
    }

    /// Whether the engine's observer table still holds the observation — the authority on its owner, asked at the
    /// moment of each delivery. The engine unregisters an observer only once the table has ended it.
    var isInObserverTable: Bool {
        guard let id = registration.binding.id else { return false }
        return engine.observers.isObserving(id)
    }

    /// `LiveQuery(collection: query)`.
    public var description: String {
        "LiveQuery(\(registration.query.collection): \(query))"
    }

    /// Ends an observation the handle owns, without waiting for anything (a handler running elsewhere finishes;
    /// none begins afterwards).
    deinit {
        if ownsObservation, let id = registration.binding.id { engine.observers.removeWithoutWaiting(id) }
    }
}
