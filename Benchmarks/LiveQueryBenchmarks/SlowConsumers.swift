import BenchmarkSupport
import Dispatch
import GRDB
import LiveQueryKit

// The slow consumers of scenarios 2 and 6, one per side's back-pressure idiom: each takes 10 ms per result without
// blocking a thread, and notes in its `Consumer` when it was handed a result and when it was free for the next.

/// Tether's queue handler under next-signal: the handler reads the result, and signals 10 ms later from its queue.
func queueHandlerConsumer(_ query: PendingQuery, _ consumer: Consumer) throws -> LiveQuery {
    let handlerQueue = DispatchQueue(label: "tether")
    return try query.observeLocalWithNextSignal(deliverOn: handlerQueue) { documents, _, signalNext in
        consumer.received { newestSeq(documents) }
        handlerQueue.asyncAfter(deadline: .now() + .milliseconds(10)) {
            consumer.free()
            signalNext()
        }
    }
}

/// Tether's `snapshots()`, iterated by a task that sleeps 10 ms per element (``consumeSlowly(_:_:newest:)``).
func snapshotsConsumer(_ query: PendingQuery, _ consumer: Consumer) throws -> LiveQuerySnapshots {
    let snapshots = try query.snapshots()
    Task { try await consumeSlowly(snapshots, consumer) { newestSeq($0.documents) } }
    return snapshots
}

/// GRDB's `values(in:bufferingPolicy: .bufferingNewest(1))`, iterated the same way. Returns what ends it: the
/// consumer's task cancelled and ended, so that it no longer fetches.
func grdbConsumer(_ pool: DatabasePool, _ consumer: Consumer, fetches: Counter? = nil) -> () async -> Void {
    let values = Fixture.grdbObservation(fetches: fetches).values(in: pool, bufferingPolicy: .bufferingNewest(1))
    let task = Task { try await consumeSlowly(values, consumer) { newestSeq($0) } }
    return {
        task.cancel()
        _ = await task.result
    }
}
