public import DeliveryKit
import OwnershipKit
public import TetherConcurrency

/// One element of ``PendingQuery/snapshots()``: the documents, and how they differ from the previous element.
public struct LiveQuerySnapshot: Sendable {
    /// The result.
    public let documents: [Document]
    /// ``LiveQueryEvent/initial`` for the first element, then the difference from the previous one.
    public let event: LiveQueryEvent
    /// The store's commit the documents reflect: the result is exact as of that commit (see
    /// ``Store/waitForLiveQueries(through:)``).
    public let commit: UInt64
}

/// A live query as an `AsyncSequence`: asking for the next element is the signal, so a slow consumer gets the latest
/// result, never a backlog. The observation ends when the iterating task is cancelled or the sequence is released.
///
/// When the query cannot be evaluated (an I/O error, a closed store), the iteration throws that error and the
/// observation ends, as GRDB's `values(in:)` does; iterate again to retry.
///
/// ```swift
/// for try await snapshot in try items.find("store_id == 'abc123'").snapshots() {
///     await render(snapshot.documents)
/// }
/// ```
public struct LiveQuerySnapshots: AsyncSequence, ObservationCancellable {
    /// The elements.
    public typealias Element = LiveQuerySnapshot
    /// What an evaluation failed with.
    public typealias Failure = any Error

    let deliveries: DeliveryStream<Snapshot>
    let handle: LiveQuery

    /// Makes the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(deliveries: deliveries.makeAsyncIterator(), handle: handle)
    }

    /// The observer's delivery counts: what its lane was submitted, delivered and coalesced, and the most it held at
    /// once — the element being processed and one waiting, never more than 2.
    public var deliveryStatistics: DeliveryStatistics {
        handle.deliveryStatistics
    }

    /// Ends the observation: the iterator's pending `next()` returns nil.
    public func stop() {
        handle.stop()
    }

    /// ``stop()``: the `ObservationCancellable` spelling.
    public func cancel() {
        handle.stop()
    }

    /// Each `next()` signals that the previous snapshot is done and waits for the next.
    public struct Iterator: AsyncIteratorProtocol {
        var deliveries: DeliveryStream<Snapshot>.Iterator
        let handle: LiveQuery

        /// The next snapshot, or nil once the observation has ended.
        ///
        /// - Throws: The error the query's evaluation failed with; the observation has then ended.
        public mutating func next() async throws -> LiveQuerySnapshot? {
            guard let delivery = await deliveries.next() else { return nil }
            // Ownership at the moment of delivery: a snapshot that waited while the observation ended is dropped. The
            // lane is asked, not the observer table: the handle is the owner, and the iterator holds it, so only
            // `stop()` ends the observation, and it cancels the lane before it returns. The lane's lock was just
            // taken to hand this delivery over, so asking costs one more turn of a lock in this core's cache, where
            // the table's is another object's, last taken by the engine.
            guard !handle.registration.lane.isCancelled else { return nil }
            switch delivery.payload {
            case .documents(let documents, let commit, _):
                let event = handle.delivered.event(for: documents, commit: commit)
                return LiveQuerySnapshot(documents: documents, event: event, commit: commit)
            case .failure(let failure):
                await handle.stop()
                throw failure.error
            }
        }
    }
}

extension PendingQuery {
    /// The query's results as an `AsyncSequence` with the next-signal bound (see ``LiveQuerySnapshots``).
    ///
    /// - Throws: ``QueryError`` or `PersistenceError` for an invalid query.
    public func snapshots() throws -> LiveQuerySnapshots {
        let query = try compiled()
        let delivered = DeliveredResult()
        let (lane, deliveries) = DeliveryLane<Snapshot>.stream(skipIf: delivered.isUnchanged)
        let engine = collection.store.engine
        let binding = ObserverBinding()
        let registration = Registration(
            query: query, text: text, kind: .snapshots, lane: lane, binding: binding, delivered: delivered,
            engine: engine)
        let handle = LiveQuery(
            registration: registration, engine: engine, delivered: delivered, ownsObservation: true,
            query: text)
        engine.observers.add(registration, identity: nil, owner: handle, binding: binding)
        engine.register(registration)
        return LiveQuerySnapshots(deliveries: deliveries, handle: handle)
    }
}
