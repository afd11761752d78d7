// The examples of Docs/Testing.md, compiled (see OwnershipKitSnippets.swift).
import LiveQueryKit
import OwnershipKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

final class Owner {}

final class Recorder: TemperatureObserver {
    func thermometer(_ notice: ObserverNotice<Double>) {}
}

@Test("A leak tracker sees what outlives its owner")
func leakTrackerExample() {
    let table = ObserverTable<any TemperatureObserver, Double> { $0.thermometer($1) }
    // snippet: Testing.leak-tracker
    let tracker = LeakTracker()
    do {
        let owner = tracker.track(Owner())
        table.add(tracker.track(Recorder()), owner: owner)
    }
    table.sweep()
    #expect(tracker.survivors.isEmpty, "still alive: \(tracker.survivors)")
    // end snippet
}

// snippet: Testing.leak-checked
@Suite("Items screen", .leakChecked)
struct ItemsScreenTests {
    @Test func showsTheList() async throws {
        let store = Store.inMemory()
        let shown = LockedValue(0)
        let query = try store.collection("items").find("a == 1").observeLocal { documents, _ in
            shown.withLock { $0 = documents.count }
        }
        try await store.collection("items").upsert(["_id": "1", "a": 1])
        await store.waitForLiveQueries()
        #expect(shown.withLock { $0 } == 1)
        await query.stop()
    }
}
// end snippet
