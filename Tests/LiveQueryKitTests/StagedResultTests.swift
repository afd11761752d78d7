import DeliveryKit
import Dispatch
import Foundation
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting

// Testable for one edge: holding the engine's lock, so that another thread stays inside the observer table's drain.
@testable import LiveQueryKit

/// A result computed while every observer is busy waits in their lanes, and their signal takes it there — but only
/// while it is the latest: a commit after it, however unrelated, has the signal withdraw it and go through the
/// engine, which hands over the latest. (No quiet period and nothing computed ahead: the wait to catch up is what
/// computes the result here.)
@Suite("Live queries: a result staged in a busy observer's lane")
struct StagedResultTests {
    typealias SlowObserver = HeldBackTests.SlowObserver

    /// A busy observer of `group == 'a'` over `a0`, with `["a0", "a1"]` staged in its lane.
    static func staged(_ kind: String) async throws -> (Store, StoreCollection, SlowObserver, LiveQuery) {
        let store = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false)
        let items = store.collection("items")
        _ = try await items.upsert(["_id": "a0", "group": "a"])
        let slow = SlowObserver()
        let liveQuery = try await slow.observeUntilBusy(items.find("group == 'a'").sort("_id"))
        _ = try await items.upsert(["_id": "a1", "group": "a"])
        await store.waitForLiveQueries()
        #expect(liveQuery.deliveryStatistics.submitted == 2 && slow.received.count == 1, "staged, not delivered")
        #expect(store.inspect().liveQueries.first?.observers.first?.waiting?.documents == 2)
        return (store, items, slow, liveQuery)
    }

    /// A `snapshots()` consumer of `group == 'a'` holding `["a0"]`, with `["a0", "a1"]` staged in its lane.
    static func stagedSnapshots(
        _ kind: String
    ) async throws -> (
        store: Store, items: StoreCollection, snapshots: LiveQuerySnapshots, iterator: LiveQuerySnapshots.Iterator
    ) {
        let store = try TestStores.make(kind, quietPeriod: nil, anticipatesSignals: false)
        let items = store.collection("items")
        _ = try await items.upsert(["_id": "a0", "group": "a"])
        let snapshots = try items.find("group == 'a'").sort("_id").snapshots()
        var iterator = snapshots.makeAsyncIterator()
        #expect(try await iterator.next()?.documents.map(\.id) == ["a0"])
        // The consumer holds ['a0'] until it asks again: the catch-up's result is staged in its lane.
        _ = try await items.upsert(["_id": "a1", "group": "a"])
        await store.waitForLiveQueries()
        #expect(snapshots.deliveryStatistics.submitted == 2 && snapshots.deliveryStatistics.delivered == 1)
        return (store, items, snapshots, iterator)
    }

    @Test(
        "A commit that alters the result after it was staged: the signal withdraws it, and the observer gets the latest",
        arguments: TestStores.kinds)
    func outdatedByACommit(kind: String) async throws {
        let (store, items, slow, liveQuery) = try await Self.staged(kind)
        _ = try await items.upsert(["_id": "a2", "group": "a"])
        #expect(try await slow.signalAndReceive() == ["a0", "a1", "a2"], "never the staged ['a0', 'a1']")
        // Withdrawn at the signal; the latest then submitted to the idle observer.
        let statistics = liveQuery.deliveryStatistics
        #expect(statistics.coalesced == 1 && statistics.submitted == 3 && statistics.delivered == 2)
        await store.waitForLiveQueries()
        #expect(slow.received.count == 2)
        await liveQuery.stop()
    }

    @Test(
        "A commit the engine keeps, which cannot alter the result: the signal withdraws it all the same, and the engine hands the same result over",
        arguments: TestStores.kinds)
    func outdatedByAKeptCommit(kind: String) async throws {
        let (store, _, slow, liveQuery) = try await Self.staged(kind)
        // Another collection, kept in the inbox (every query held back): the lane cannot tell, so the engine
        // decides — its round finds nothing to change, and the observer, counted behind again, takes the result it
        // was staged.
        _ = try await store.collection("other").upsert(["_id": "x", "group": "a"])
        #expect(try await slow.signalAndReceive() == ["a0", "a1"])
        #expect(liveQuery.deliveryStatistics.coalesced == 1, "withdrawn at the signal")
        await store.waitForLiveQueries()
        #expect(slow.received.count == 2, "once")
        await liveQuery.stop()
    }

    @Test(
        "A commit a round applied and found could not alter the result: the signal takes the staged result from the lane",
        arguments: TestStores.kinds)
    func stillCurrentAfterAnAppliedCommit(kind: String) async throws {
        let (store, _, slow, liveQuery) = try await Self.staged(kind)
        // The wait has the engine apply the kept commit in a round, which leaves the result exact through it.
        _ = try await store.collection("other").upsert(["_id": "x", "group": "a"])
        await store.waitForLiveQueries()
        #expect(try await slow.signalAndReceive() == ["a0", "a1"])
        let statistics = liveQuery.deliveryStatistics
        #expect(statistics.coalesced == 0 && statistics.submitted == 2, "delivered from the lane as staged")
        await liveQuery.stop()
    }

    @Test(
        "Nothing after it: the signal takes the staged result from the lane, and the next signal finds nothing owed",
        arguments: TestStores.kinds)
    func takenAtTheSignal(kind: String) async throws {
        let (store, items, slow, liveQuery) = try await Self.staged(kind)
        let rounds = store.statistics.rounds
        #expect(try await slow.signalAndReceive() == ["a0", "a1"])
        let statistics = liveQuery.deliveryStatistics
        #expect(statistics.submitted == 2 && statistics.coalesced == 0, "delivered from the lane as staged")
        #expect(store.statistics.rounds == rounds)
        // The observer has the latest: its next signal waits for a change, which it then gets.
        try await eventually { slow.isHoldingSignal }
        slow.signalNext()
        _ = try await items.upsert(["_id": "a2", "group": "a"])
        try await slow.received.wait { $0.count == 3 }
        #expect(slow.received.last == ["a0", "a1", "a2"])
        await liveQuery.stop()
    }

    @Test(
        "snapshots(): the staged result is the next element, taken with no round of the engine; stopped meanwhile, none",
        arguments: TestStores.kinds)
    func snapshotsTakeTheStagedResult(kind: String) async throws {
        let staged = try await Self.stagedSnapshots(kind)
        let (store, items, snapshots) = (staged.store, staged.items, staged.snapshots)
        var iterator = staged.iterator
        let rounds = store.statistics.rounds
        let next = try await iterator.next()
        #expect(next?.documents.map(\.id) == ["a0", "a1"] && next?.event != .initial)
        #expect(store.statistics.rounds == rounds, "taken from the lane by next() itself")
        // Staged again, and the observation stopped before the consumer asks: the staged result is not delivered.
        _ = try await items.upsert(["_id": "a2", "group": "a"])
        await store.waitForLiveQueries()
        #expect(snapshots.deliveryStatistics.submitted == 3 && snapshots.deliveryStatistics.delivered == 2)
        snapshots.stop()
        // Released by stop() itself, before it returns: the lane is cancelled there, not later by the table's notice,
        // so next() finds it cancelled — the check snapshots() makes at the moment of delivery.
        #expect(snapshots.deliveryStatistics.droppedByCancellation == 1)
        #expect(try await iterator.next() == nil)
        #expect(snapshots.deliveryStatistics.delivered == 2)
    }

    @Test(
        "snapshots(): stopped inside a delivery while another thread delivers the table's notices — released before stop() returns, never delivered",
        arguments: TestStores.kinds)
    func snapshotsStoppedInsideADelivery(kind: String) async throws {
        let staged = try await Self.stagedSnapshots(kind)
        let (store, items, snapshots) = (staged.store, staged.items, staged.snapshots)
        var iterator = staged.iterator

        // Another observer's handler, on a queue of its own, will stop `snapshots` from inside its first delivery —
        // where stop() does not wait for the table's notices, since waiting there could deadlock.
        let (entered, go) = (LockedValue(false), DispatchSemaphore(value: 0))
        let atStopReturn = LockedValue<DeliveryStatistics?>(nil)
        let handler = try items.find("group == 'b'").observeLocal(deliverOn: DispatchQueue(label: "handler")) { _, _ in
            guard !entered.withLock({ $0 }) else { return }
            entered.withLock { $0 = true }
            go.wait()
            snapshots.stop()
            atStopReturn.withLock { $0 = snapshots.deliveryStatistics }
        }
        try await eventually { entered.withLock { $0 } }

        // A third observer, stopped on a thread that becomes the table's drainer and is held inside the stopped
        // notice's delivery: it unregisters the observer under the engine's lock, which a fourth thread holds. So the
        // table's notices — among them, soon, `snapshots`' — wait behind it.
        let other = try items.find("group == 'c'").observeLocal { _, _ in }
        await store.waitForLiveQueries()
        let (engineHeld, releaseEngine) = (LockedValue(false), DispatchSemaphore(value: 0))
        Thread {
            store.engine.state.withLock { _ in
                engineHeld.withLock { $0 = true }
                releaseEngine.wait()
            }
        }.start()
        try await eventually { engineHeld.withLock { $0 } }
        let drainerDone = LockedValue(false)
        Thread {
            other.stop()
            drainerDone.withLock { $0 = true }
        }.start()
        try await eventually { other.isStopped }  // out of the table: its thread holds the drainer's role

        go.signal()
        try await eventually { atStopReturn.withLock { $0 } != nil }
        #expect(atStopReturn.withLock { $0 }?.droppedByCancellation == 1, "released by stop() itself")
        #expect(!drainerDone.withLock { $0 }, "the table's notices still wait")
        #expect(try await iterator.next() == nil, "the staged result is not delivered")

        releaseEngine.signal()
        try await eventually { drainerDone.withLock { $0 } }
        #expect(snapshots.deliveryStatistics.delivered == 1)
        await handler.stop()
    }
}
