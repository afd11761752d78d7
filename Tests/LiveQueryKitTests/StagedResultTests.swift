import LiveQueryKit
import Testing
import TetherJSON
import TetherTesting

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
}
