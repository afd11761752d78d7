import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// Ditto's rule, as a Ditto user tries it: a result equal to the last one delivered is not delivered, however many
/// commits came and went while the observer held its signal.
@Suite("An unchanged result is not delivered", .timeLimit(minutes: 1), .leakChecked)
struct UnchangedResultTests {
    @Test(
        "Writes that leave the result as it was, while the signal is held: the signal delivers nothing (waiting for each or not)",
        arguments: TestStores.kinds, [false, true])
    func nothingChangedWhileHeld(kind: String, waits: Bool) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await items.upsert(["_id": "m1", "g": 1, "n": 1])
        let received = Received()
        let pending = LockedValue<SignalNext?>(nil)
        let liveQuery = try items.find("g == 1").sort("_id").observeLocalWithNextSignal { documents, event, signal in
            received.append(documents, event)
            pending.withLock { $0 = signal }
        }
        try await received.wait { $0.count == 1 }

        // Each write is waited for: the engine brings the held query up to date at every one of them (as it does
        // ahead of a signal, or after a quiet period), so the results in between are computed, not only merged.
        let writes: [@Sendable () async throws -> Void] = [
            { try await items.upsert(["_id": "x1", "g": 2, "n": 1]) },  // does not match
            { try await items.upsert(["_id": "m1", "g": 1, "n": 1]) },  // the same content again
            { try await store.collection("other").upsert(["_id": "m1", "g": 1]) },  // another collection
            { try await items.upsert(["_id": "m1", "g": 1, "n": 2]) },  // changed…
            { try await items.upsert(["_id": "m1", "g": 1, "n": 1]) },  // …and changed back
            { try await items.upsert(["_id": "m2", "g": 1, "n": 5]) },  // inserted…
            { try await items.remove(id: "m2") },  // …and removed
        ]
        for write in writes {
            try await write()
            if waits { await store.waitForLiveQueries() }
        }
        let unchangedThrough = store.lastCommit

        pending.withLock { $0.take() }?()
        // The signal finds the latest result equal to the one delivered: the observer's result is known current at
        // the last commit without a call.
        try await eventually { liveQuery.deliveredCommit == unchangedThrough }
        // A change that does alter the result is the next delivery.
        try await items.upsert(["_id": "m3", "g": 1, "n": 3])
        try await received.wait { $0.count >= 2 }
        let all = received.all
        #expect(all.count == 2, "one delivery after the signal, the real change: \(all.map(\.ids))")
        #expect(all.last?.ids == ["m1", "m3"])
        if case .update(let update) = all.last?.event {
            #expect(update.insertions.count == 1 && update.deletions.isEmpty)
        } else {
            Issue.record("the second delivery is an update: \(String(describing: all.last?.event))")
        }
        await liveQuery.stop()
    }
}
