import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

/// An observer that starts after commits sees them in its first result, even when its query's changes are held back
/// for an observer busy with an earlier result.
@Suite("A late observer's first result", .timeLimit(minutes: 1), .leakChecked)
struct LateObserverTests {
    @Test(
        "Commits held back for a busy observer are in a new observer's first result", arguments: TestStores.kinds)
    func heldCommitsReachANewObserver(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        try await items.upsert(["_id": "a", "g": 1])
        let busy = Received()
        let pending = LockedValue<SignalNext?>(nil)
        let first = try items.find("g == 1").sort("_id").observeLocalWithNextSignal { documents, event, signal in
            busy.append(documents, event)
            pending.withLock { $0 = signal }  // holds its signal: the query's changes are held back
        }
        try await busy.wait { $0.count == 1 }
        let deferrals = store.statistics.deferrals
        try await items.upsert(["_id": "b", "g": 1])
        try await eventually { store.statistics.deferrals > deferrals }

        let late = Received()
        let second = try items.find("g == 1").sort("_id").observeLocal { late.append($0, $1) }
        try await late.wait { $0.count == 1 }
        #expect(late.all.first?.ids == ["a", "b"], "the write made before it started is in its first result")
        #expect(busy.count == 1, "the busy observer still holds its first result")
        pending.withLock { $0.take() }?()
        try await busy.wait { $0.last == ["a", "b"] }
        await first.stop()
        await second.stop()
    }
}
