import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting

/// Under next-signal the store keeps committing, and the engine does no work for a query whose every observer is
/// busy with an earlier result: the changes are held back and applied once, when an observer signals — which then
/// gets the latest result, once.
@Suite("Live queries: changes held back while every observer is busy")
struct HeldBackTests {
    /// A next-signal observer that keeps its signal until the test calls it.
    final class SlowObserver: Sendable {
        let received = Received()
        let signal = LockedValue<SignalNext?>(nil)

        func observe(_ query: PendingQuery) throws -> LiveQuery {
            try query.observeLocalWithNextSignal { [self] documents, event, signalNext in
                received.append(documents, event)
                signal.withLock { $0 = signalNext }
            }
        }

        func signalNext() { signal.withLock { $0.take() }?() }
        var isHoldingSignal: Bool { signal.withLock { $0 != nil } }
    }

    @Test(
        "A busy observer costs no evaluation per commit; its signal brings the latest result, once",
        arguments: TestStores.kinds)
    func heldBackThenLatestOnce(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let slow = SlowObserver()
        let liveQuery = try slow.observe(items.find("group == 'a'").sort("_id"))
        try await eventually { slow.isHoldingSignal }
        let before = store.statistics
        for index in 0..<50 {
            _ = try await items.upsert(["_id": .string("d\(index % 7)"), "group": "a", "n": .number(Double(index))])
        }
        await store.waitForLiveQueries()
        let held = store.statistics
        #expect(held.deferrals > 0)
        #expect(
            held.evaluations == before.evaluations && held.incrementalUpdates == before.incrementalUpdates,
            "no work while the only observer is busy: \(held)")
        #expect(liveQuery.deliveryStatistics.submitted == 1 && slow.received.count == 1)

        let final = try await items.find("group == 'a'").sort("_id").exec().map(\.id)
        slow.signalNext()
        try await slow.received.wait { $0.count == 2 }
        #expect(slow.received.last == final)
        let after = store.statistics
        #expect(
            after.incrementalUpdates + after.evaluations - held.incrementalUpdates - held.evaluations == 1,
            "brought up to date once, from every held-back change")
        // Nothing more was owed: signalling again delivers nothing, whatever comes after it.
        slow.signalNext()
        _ = try await items.upsert(["_id": "z", "group": "b"])
        await store.waitForLiveQueries()
        #expect(slow.received.count == 2)
        await liveQuery.stop()
    }

    @Test(
        "One busy observer and one free: the free one gets every result, the busy one the latest when it signals",
        arguments: TestStores.kinds)
    func busyBesideFree(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let query = items.find("group == 'a'").sort("_id")
        let slow = SlowObserver()
        let slowQuery = try slow.observe(query)
        let free = Received()
        let freeQuery = try query.observeLocal { free.append($0, $1) }
        try await eventually { slow.isHoldingSignal && free.count == 1 }
        for index in 0..<5 {
            _ = try await items.upsert(["_id": .string("d\(index)"), "group": "a"])
            await store.waitForLiveQueries()
        }
        try await free.wait { $0.last == ["d0", "d1", "d2", "d3", "d4"] }
        #expect(store.statistics.deferrals == 0, "a free observer needs every result")
        slow.signalNext()
        try await slow.received.wait { $0.count == 2 }
        #expect(slow.received.last == ["d0", "d1", "d2", "d3", "d4"])
        await slowQuery.stop()
        await freeQuery.stop()
    }

    @Test(
        "More held-back changes than the engine reads one by one: the query runs once, and ends right",
        arguments: TestStores.kinds)
    func manyHeldBack(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let slow = SlowObserver()
        let liveQuery = try slow.observe(items.find("group == 'a'").sort("_id").limit(3))
        try await eventually { slow.isHoldingSignal }
        for batch in 0..<3 {
            try await store.write { transaction in
                for index in 0..<200 {
                    try transaction.collection("items").upsert(["_id": .string("d\(batch)-\(index)"), "group": "a"])
                }
            }
        }
        await store.waitForLiveQueries()
        let before = store.statistics
        slow.signalNext()
        try await slow.received.wait { $0.last == ["d0-0", "d0-1", "d0-10"] }
        #expect(store.statistics.evaluations - before.evaluations == 1)
        await liveQuery.stop()
    }
}
